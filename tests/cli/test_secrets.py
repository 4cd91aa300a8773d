"""Secrets a ritual file reads never reach a Seal, a trace, an audit line or a screen.

Three kinds of secret (an environment value read through ``${...}`` — its name does not
look secret —, a value matched only by a ``redact:`` pattern, a codex URL's password),
each sent down every route (input, update, exception text, interrupt reason, streamed
token, Seal metadata); each artefact is read back and grepped.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import invoke, sanctum, write_ritual

ENV_VALUE = "envSECRET-0b7d1f2a9c"
PATTERNED = "tok-90817263"
UPDATE = "tok-55554444"

STEPS = """
def emit(aether, writer):
    writer("streaming " + aether["token"] + " " + aether["banner"])
    return {"note": "emitted " + aether["token"]}


def boom(aether):
    raise RuntimeError("the service echoed " + aether["token"] + " " + aether["banner"])
"""

RITUAL = """\
sanctum: 1
name: leaky
inputs:
  token: {type: string}
aether:
  banner: {}
  note: {default: ""}
  status: {}
  approved: {default: false}
entry: stamp
sigils:
  stamp:
    set: {banner: "'${BANNER}'"}
    next: emit
  emit:
    call: leaky_steps:emit
    next: fail
  fail:
    call: leaky_steps:boom
    policy: {on_error: ask}
    next: END
  ask:
    interrupt: "Approve {{ token }} with ${BANNER}?"
    until: "approved"
    next: END
wards:
  - redact: {patterns: ['tok-[0-9]{8}']}
  - audit: {path: audit.jsonl}
"""

ENV = {"BANNER": ENV_VALUE}


def _leaks(text: str) -> list[str]:
    return [s for s in (ENV_VALUE, PATTERNED, UPDATE) if s in text]


def _disk(folder: Path) -> str:
    texts = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix != ".py" and path.name != "leaky.yaml":
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


@pytest.fixture
def ritual(tmp_path: Path) -> Path:
    (tmp_path / "leaky_steps.py").write_text(STEPS, encoding="utf-8")
    return write_ritual(tmp_path, "leaky.yaml", RITUAL)


def test_run_resume_seals_and_trace_never_show_a_secret(tmp_path: Path, ritual: Path) -> None:
    run = ["run", str(ritual), "-i", f"token={PATTERNED}"]
    runs = [
        invoke(
            [*run, "--invocation", "i1", "--trace", "run.trace.json", "--stream", "omens,tokens"],
            tmp_path,
            env=ENV,
        ),
        invoke(
            [*run, "--invocation", "i2", "--json", "--stream", "tokens,updates,values,omens"],
            tmp_path,
            env=ENV,
        ),
    ]
    assert [r.exit_code for r in runs] == [3, 3], runs[0].output
    resumed = invoke(
        ["resume", "--invocation", "i2", "--json", "-u", "approved=true", "-u", f"status={UPDATE}"],
        tmp_path,
        env=ENV,
    )
    assert resumed.exit_code == 0, resumed.output
    seals = invoke(["seals", "--invocation", "i2", "--json", "--values"], tmp_path, env=ENV)
    listing = invoke(["invocations", "--json"], tmp_path, env=ENV)
    shown = "\n".join(r.output for r in [*runs, resumed, seals, listing])
    assert "[REDACTED]" in shown
    assert _leaks(shown) == []
    on_disk = _disk(tmp_path)
    assert "[REDACTED]" in on_disk
    assert _leaks(on_disk) == []


def test_a_public_variable_is_shown_and_a_misused_one_is_refused(
    tmp_path: Path, ritual: Path
) -> None:
    ritual.write_text(RITUAL + "public: [BANNER]\n", encoding="utf-8")
    shown = invoke(["run", str(ritual), "-i", "token=plain", "--json"], tmp_path, env=ENV).output
    assert ENV_VALUE in shown
    ritual.write_text(RITUAL + "public: [BANER, OTHER_KEY]\n", encoding="utf-8")
    refused = invoke(["validate", str(ritual)], tmp_path, env=ENV)
    assert refused.exit_code == 2
    assert "leaky.yaml:29:10: public: BANER is not read" in refused.output
    assert "did you mean 'BANNER'?" in refused.output


def test_the_failure_message_on_stderr_is_masked(tmp_path: Path, ritual: Path) -> None:
    broken = RITUAL.replace("    policy: {on_error: ask}\n", "")
    broken = broken.replace("next: fail", "next: [fail, ask]")
    ritual.write_text(broken, encoding="utf-8")
    failed = sanctum(["run", str(ritual), "-i", f"token={PATTERNED}", "--json"], tmp_path, env=ENV)
    assert failed.returncode == 1
    assert "the service echoed [REDACTED] [REDACTED]" in failed.stderr
    assert _leaks(failed.stdout + failed.stderr) == []


@pytest.mark.parametrize(
    ("invocation", "codex"),
    [("my run; rm -rf ~", "my runs/c.db"), ('it\'s "quoted" $HOME `x`', "sqlite:///a b.db")],
)
def test_the_resume_hint_round_trips_through_a_shell(
    tmp_path: Path, ritual: Path, invocation: str, codex: str
) -> None:
    ritual.write_text(RITUAL.replace("${BANNER}", "plain"), encoding="utf-8")
    (tmp_path / "my runs").mkdir()  # a codex's folder must exist (but .sanctum/)
    paused = invoke(
        [
            "run",
            str(ritual),
            "-i",
            "token=t",
            "--invocation",
            invocation,
            "--codex",
            codex,
            "--json",
        ],
        tmp_path,
    )
    assert paused.exit_code == 3, paused.output
    result = json.loads(paused.stdout.splitlines()[-1])
    hint = paused.stderr.split("resume with: ", 1)[1].strip()
    assert hint == result["resume"]
    echoed = subprocess.run(
        ["sh", "-c", f"printf '%s\\n' {hint.removeprefix('sanctum ')}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert echoed == ["resume", "--invocation", invocation, "--codex", codex]
    assert shlex.split(hint)[1:] == echoed


def test_a_codex_url_password_is_left_out_of_the_hint() -> None:
    from sanctum.api import resume_command

    command = resume_command("i1", "postgresql://user:Pa55-word@db.example/sanctum")
    assert command == "sanctum resume --invocation i1 --codex postgresql://user@db.example/sanctum"
