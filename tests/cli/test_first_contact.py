"""The command line as a new user meets it (issue #22): help, output, machine lines.

Everything here goes through the real console script (a subprocess) or the Typer app
in-process (CliRunner). The help screens are compared with golden transcripts taken
at a fixed width (COLUMNS=100, no colour, trailing spaces trimmed); regenerate them
with ``SANCTUM_REGENERATE_GOLDEN=1 pytest tests/cli/test_first_contact.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import (
    APPROVE,
    COUNTER,
    GREET,
    console_script,
    invoke,
    sanctum,
    write_ritual,
)

GOLDEN = Path(__file__).parent / "golden"

FAILING = """\
sanctum: 1
name: failing
aether:
  tally: {type: integer, default: 0}
entry: count
sigils:
  count:
    set: {tally: "tally + 1"}
    next: boom
  boom:
    call: "failing_steps:boom"
    next: END
"""


def _trimmed(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n") + "\n"


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("help_root", ["--help"]),
        ("help_run", ["run", "--help"]),
        ("help_resume", ["resume", "--help"]),
        ("help_invocations", ["invocations", "--help"]),
        ("help_seals", ["seals", "--help"]),
        ("help_invocations_prune", ["invocations", "prune", "--help"]),
    ],
)
def test_help_screens_match_their_golden_transcripts(
    tmp_path: Path, name: str, args: list[str]
) -> None:
    done = sanctum(args, tmp_path, env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    text = _trimmed(done.stdout)
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("SANCTUM_REGENERATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_root_help_has_examples_and_the_exit_status_table(tmp_path: Path) -> None:
    out = invoke(["--help"], tmp_path).stdout
    assert "Examples:" in out
    for line in ("0    done", "1    the ritual failed", "2    bad usage", "3    paused", "130  "):
        assert line in out, line
    run_help = invoke(["run", "--help"], tmp_path).stdout
    assert "3    paused by an interrupt" in run_help
    assert "--quiet" in run_help


def test_bare_sanctum_prints_help_and_exits_0(tmp_path: Path) -> None:
    done = sanctum([], tmp_path)
    assert done.returncode == 0
    assert "Usage: sanctum" in done.stdout
    assert "Exit status:" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], []])
def test_help_cut_short_by_head_is_quiet(tmp_path: Path, args: list[str]) -> None:
    command = " ".join([*console_script(), *args])
    for _ in range(3):
        done = subprocess.run(
            ["bash", "-c", f"{command} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        assert done.stdout.strip() in ("0", "141"), done.stderr
        assert "Traceback" not in done.stderr
        assert "error" not in done.stderr


def test_a_root_option_after_the_command_points_before_it(tmp_path: Path) -> None:
    result = invoke(["run", "--debug", "x.yaml"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: No such option: --debug; it is an option of `sanctum` itself: put it "
        "before the command (`sanctum --debug run …`)\n"
    )
    version = invoke(["seals", "--version"], tmp_path)
    assert version.exit_code == 2
    assert version.stderr == (
        "error: No such option: --version; it is an option of `sanctum` itself: "
        "`sanctum --version`\n"
    )


def test_the_json_help_is_each_commands_own(tmp_path: Path) -> None:
    texts = {
        command: " ".join(
            invoke([command, "--help"], tmp_path, env={"COLUMNS": "200"}).stdout.split()
        )
        for command in ("run", "invocations", "seals")
    }
    assert "Omens, then a final result object" in texts["run"]
    assert "one object per invocation" in texts["invocations"]
    assert "one object per Seal" in texts["seals"]


def test_quiet_leaves_out_the_aether_tree(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    loud = sanctum(["run", "greet.yaml", "--input", "name=Ada"], tmp_path)
    quiet = sanctum(["run", "greet.yaml", "--input", "name=Ada", "--quiet"], tmp_path)
    assert loud.returncode == quiet.returncode == 0
    assert "Aether" in loud.stdout
    assert "Aether" not in quiet.stdout
    assert "greeting" not in quiet.stdout
    assert "✓ done  invocation" in quiet.stdout
    assert "✓ superstep 1  greet" in quiet.stdout


def test_quiet_keeps_the_pause_and_its_resume_command(tmp_path: Path) -> None:
    write_ritual(tmp_path, "approve.yaml", APPROVE)
    done = sanctum(["run", "approve.yaml", "-i", "name=Ada", "-q", "--invocation", "a-1"], tmp_path)
    assert done.returncode == 3
    assert "Aether" not in done.stdout
    assert "resume with: sanctum resume --invocation a-1" in done.stdout
    again = sanctum(["resume", "--invocation", "a-1", "-u", "answered=true", "-q"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Aether" not in again.stdout
    assert "✓ done  invocation a-1" in again.stdout


def test_omen_lines_give_durations_in_human_units(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    done = sanctum(["run", "greet.yaml", "--stream", "omens"], tmp_path)
    assert done.returncode == 0
    completed = [line for line in done.stdout.splitlines() if "SigilCompleted" in line]
    assert completed
    assert "duration=0." not in done.stdout
    assert any(unit in completed[0] for unit in ("µs", "ms", "s"))


def test_no_color_on_a_terminal_does_not_animate(tmp_path: Path) -> None:
    pty = pytest.importorskip("pty")
    write_ritual(tmp_path, "counter.yaml", COUNTER)
    script = " ".join(
        [*console_script(), "run", "counter.yaml", "-i", "delay=0.3", "-i", "limit=3"]
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANCTUM_")}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "TERM": "xterm"})
    captured = bytearray()

    def read(fd: int) -> bytes:
        data = os.read(fd, 4096)
        captured.extend(data)
        return data

    old = Path.cwd()
    os.chdir(tmp_path)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        status = pty.spawn(["bash", "-c", script], read)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        os.chdir(old)
    text = captured.decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "✓ done" in text
    for control in ("\x1b[?25l", "\x1b[2K", "\x1b[1A", "\x1b[3"):  # no live line, no colour
        assert control not in text, control
    assert not any(frame in text for frame in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")  # no spinner


def test_json_errors_before_the_run_are_one_error_line(tmp_path: Path) -> None:
    done = sanctum(["run", "missing.yaml", "--json"], tmp_path)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    error = json.loads(lines[0])
    assert error["kind"] == "error"
    assert error["exit_status"] == 2
    assert error["error_type"] == "RitualFileError"
    assert "missing.yaml:1:1: cannot read the ritual file" in error["error"]
    assert "cannot read the ritual file" in done.stderr  # people still get the message

    write_ritual(tmp_path, "greet.yaml", GREET)
    bad_input = sanctum(["run", "greet.yaml", "--json", "-i", "nmae=x"], tmp_path)
    assert bad_input.returncode == 2
    assert json.loads(bad_input.stdout.splitlines()[-1])["kind"] == "error"
    gone = sanctum(["resume", "--invocation", "nope", "--json"], tmp_path)
    assert gone.returncode == 2
    assert json.loads(gone.stdout)["kind"] == "error"


def test_result_objects_fill_seal_id_codex_url_and_the_failing_sigil(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    done = sanctum(["run", "greet.yaml", "--json"], tmp_path)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "done"
    assert result["codex_url"] == "sqlite:///.sanctum/codex.db"
    seals = sanctum(["seals", "--invocation", result["invocation_id"], "--json"], tmp_path)
    assert result["seal_id"] == json.loads(seals.stdout.splitlines()[-1])["seal_id"]

    (tmp_path / "failing.yaml").write_text(FAILING, encoding="utf-8")
    (tmp_path / "failing_steps.py").write_text(
        "def boom(aether):\n    raise RuntimeError('the well is dry')\n", encoding="utf-8"
    )
    failed = sanctum(["run", "failing.yaml", "--json", "--codex", "runs.db"], tmp_path)
    assert failed.returncode == 1
    result = json.loads(failed.stdout.splitlines()[-1])
    assert result["status"] == "failed"
    assert result["sigil"] == "boom"
    assert result["seal_id"]  # the Seal after `count`, to resume from
    assert result["codex_url"] == "runs.db"


def test_a_repeated_input_key_is_warned(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    done = sanctum(["run", "greet.yaml", "-i", "name=Ada", "-i", "name=Bob", "--json"], tmp_path)
    assert done.returncode == 0
    assert "warning: --input name was given 2 times; the last value wins (name=Bob)" in (
        done.stderr
    )
    assert json.loads(done.stdout.splitlines()[-1])["aether"]["name"] == "Bob"


def test_invocations_filter_by_status(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    write_ritual(tmp_path, "approve.yaml", APPROVE)
    assert sanctum(["run", "greet.yaml", "--invocation", "g-1"], tmp_path).returncode == 0
    paused = sanctum(["run", "approve.yaml", "-i", "name=Ada", "--invocation", "a-1"], tmp_path)
    assert paused.returncode == 3
    only = sanctum(["invocations", "--status", "paused", "--json"], tmp_path)
    assert [json.loads(line)["invocation_id"] for line in only.stdout.splitlines()] == ["a-1"]
    both = sanctum(["invocations", "--status", "paused,done", "--json"], tmp_path)
    assert {json.loads(line)["invocation_id"] for line in both.stdout.splitlines()} == {
        "a-1",
        "g-1",
    }
    none = sanctum(["invocations", "--status", "incomplete"], tmp_path)
    assert none.returncode == 0
    assert "no incomplete invocations in this codex" in none.stdout
    typo = sanctum(["invocations", "--status", "pasued"], tmp_path)
    assert typo.returncode == 2
    assert "did you mean 'paused'?" in typo.stderr


def test_seals_values_without_json_is_warned(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    assert sanctum(["run", "greet.yaml", "--invocation", "g-1"], tmp_path).returncode == 0
    done = sanctum(["seals", "--invocation", "g-1", "--values"], tmp_path)
    assert done.returncode == 0
    assert "warning: --values needs --json" in done.stderr
    assert "Seals of g-1" in done.stdout


def test_resume_seal_accepts_a_unique_prefix(tmp_path: Path) -> None:
    write_ritual(tmp_path, "approve.yaml", APPROVE)
    paused = sanctum(["run", "approve.yaml", "-i", "name=Ada", "--invocation", "a-1"], tmp_path)
    assert paused.returncode == 3
    seals = sanctum(["seals", "--invocation", "a-1", "--json"], tmp_path)
    first = json.loads(seals.stdout.splitlines()[0])["seal_id"]
    done = sanctum(
        ["resume", "--invocation", "a-1", "--seal", first[:8], "-u", "answered=true", "--json"],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["status"] == "done"
    unknown = sanctum(["resume", "--invocation", "a-1", "--seal", "zzzz"], tmp_path)
    assert unknown.returncode == 2
    assert "has no seal 'zzzz'" in unknown.stderr
