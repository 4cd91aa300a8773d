"""``sanctum run``: in-process through CliRunner, and as real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import (
    APPROVE,
    COUNTER,
    GREET,
    REPO,
    console_script,
    invoke,
    mask,
    sanctum,
    write_ritual,
)


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_golden_transcript(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "-i", "name=Ada", "--invocation", "g1"], tmp_path)
    assert result.exit_code == 0, result.output
    assert mask(result.stdout) == (
        "✓ superstep 1  greet  <t>\n"
        "Aether\n"
        '├── name = "Ada"\n'
        '└── greeting = "hello Ada"\n'
        "✓ done  invocation g1\n"
    )
    assert (tmp_path / ".sanctum" / "codex.db").is_file()  # the default codex


def test_updates_stream_shows_each_delta(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "--stream", "updates"], tmp_path)
    assert '  greet → {"greeting": "hello world"}' in result.stdout


def test_json_lines_end_with_the_result(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "--json", "-i", "name=Ada"], tmp_path)
    assert result.exit_code == 0
    rows = _json_lines(result.stdout)
    assert [row["kind"] for row in rows] == ["omen", "result"]
    assert rows[0]["type"] == "SigilCompleted"
    assert rows[0]["delta"] == {"greeting": "hello Ada"}
    assert rows[-1]["status"] == "done"
    assert rows[-1]["aether"] == {"name": "Ada", "greeting": "hello Ada"}


def test_combined_stream_modes(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "--json", "-s", "values,omens", "-s", "tokens"], tmp_path)
    types = {row.get("type") for row in _json_lines(result.stdout)}
    assert {"SuperstepCompleted", "RiteBegan", "SealWritten", "RiteManifested"} <= types


def test_unknown_stream_mode_is_a_usage_error(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "--stream", "everything"], tmp_path)
    assert result.exit_code == 2
    assert "unknown stream mode 'everything'" in result.output


def test_inputs_from_file_and_stdin(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    (tmp_path / "in.yaml").write_text("name: Bo\n", encoding="utf-8")
    from_file = invoke(["run", str(ritual), "--json", "--input-file", "in.yaml"], tmp_path)
    assert _json_lines(from_file.stdout)[-1]["aether"]["greeting"] == "hello Bo"
    from_stdin = invoke(
        ["run", str(ritual), "--json", "--input-file", "-", "-i", "name=Cy"],
        tmp_path,
        input='{"name": "ignored"}',
    )
    assert _json_lines(from_stdin.stdout)[-1]["aether"]["greeting"] == "hello Cy"


def test_inputs_are_checked_against_the_declaration(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    missing = invoke(["run", str(ritual)], tmp_path)
    assert missing.exit_code == 2
    assert "needs the input 'name'" in missing.stderr
    typo = invoke(["run", str(ritual), "-i", "nmae=Ada"], tmp_path)
    assert typo.exit_code == 2
    assert "did you mean 'name'?" in typo.stderr
    wrong = invoke(["run", str(ritual), "-i", "name=Ada", "-i", "approved=1"], tmp_path)
    assert wrong.exit_code == 2
    assert "declares no input 'approved'" in wrong.stderr
    assert "Traceback" not in wrong.output


def test_a_string_input_keeps_the_raw_text(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "-i", "name=42", "--json"], tmp_path)
    assert result.exit_code == 0, result.output
    final = _json_lines(result.stdout)[-1]
    assert final["aether"]["name"] == "42"
    assert final["aether"]["greeting"] == "hello 42"
    quoted = invoke(["run", str(ritual), "-i", 'name="x"', "--json"], tmp_path)
    assert _json_lines(quoted.stdout)[-1]["aether"]["name"] == '"x"'


def test_typed_inputs_are_read_as_json(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "counter.yaml", COUNTER)
    done = invoke(["run", str(ritual), "-i", "limit=2", "-i", "delay=0", "--json"], tmp_path)
    assert done.exit_code == 0, done.output
    assert _json_lines(done.stdout)[-1]["aether"]["count"] == 2
    wrong = invoke(["run", str(ritual), "-i", "limit=two"], tmp_path)
    assert wrong.exit_code == 2
    assert "input 'limit' must be of type integer, got string \"two\"" in wrong.stderr


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused_before_the_run(tmp_path: Path, value: str) -> None:
    ritual = write_ritual(tmp_path, "counter.yaml", COUNTER)
    result = invoke(["run", str(ritual), "-i", f"delay={value}", "--invocation", "n1"], tmp_path)
    assert result.exit_code == 2, result.output
    assert "NaN and Infinity are not allowed" in result.stderr
    assert result.stdout == ""
    listed = invoke(["invocations", "--json"], tmp_path)
    assert "n1" not in listed.stdout


def test_a_pause_in_a_memory_codex_offers_no_resume_command(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    people = invoke(["run", str(ritual), "-i", "name=Ada", "--codex", "memory:"], tmp_path)
    assert people.exit_code == 3
    assert "resume with" not in people.output
    assert "not resumable: a memory: codex ends with this process" in people.stdout
    machines = invoke(
        ["run", str(ritual), "-i", "name=Ada", "--codex", "memory:", "--json"], tmp_path
    )
    assert machines.exit_code == 3
    assert _json_lines(machines.stdout)[-1]["resume"] is None
    assert "resume with" not in machines.stderr
    assert "not resumable" in machines.stderr
    assert not (tmp_path / ".sanctum").exists()


def test_garbage_codex_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    for url in ("garbage", "memory:foo", "::::", "sqlite:///:memory:"):
        result = invoke(["run", str(ritual), "--codex", url], tmp_path)
        assert result.exit_code == 2, url
        assert "sqlite:///relative/path.db" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["greet.yaml"]


def test_missing_and_broken_ritual_files(tmp_path: Path) -> None:
    missing = invoke(["run", "nope.yaml"], tmp_path)
    assert missing.exit_code == 2
    assert missing.stderr.strip().startswith("nope.yaml:1:1:")
    broken = tmp_path / "broken.yaml"
    broken.write_text(GREET.replace("next: END", "next: ENDD"), encoding="utf-8")
    bad = invoke(["run", str(broken)], tmp_path)
    assert bad.exit_code == 2
    assert f"{broken}:11:11: " in bad.stderr
    assert "did you mean 'END'?" in bad.stderr
    assert "Traceback" not in bad.output


def test_a_failing_sigil_exits_1_with_one_message(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "counter.yaml", COUNTER)
    (tmp_path / "counter_steps.py").write_text(
        "def tick(aether):\n    raise RuntimeError('the abacus broke')\n", encoding="utf-8"
    )
    result = invoke(["run", str(ritual)], tmp_path)
    assert result.exit_code == 1
    assert "the abacus broke" in result.stderr
    assert "✗ failed" in result.stdout
    assert "Traceback" not in result.output


def _dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


OLLAMA = """\
sanctum: 1
name: ask
aether:
  answer: {}
oracles:
  local: {provider: ollama, model: "qwen2.5:0.5b", base_url: "http://127.0.0.1:PORT"}
entry: ask
sigils:
  ask:
    oracle: local
    prompt: "Say hi."
    output: answer
    next: END
"""


def test_a_dead_ollama_server_is_one_clear_message(tmp_path: Path) -> None:
    port = _dead_port()
    ritual = write_ritual(tmp_path, "ask.yaml", OLLAMA.replace("PORT", str(port)))
    result = invoke(["run", str(ritual)], tmp_path)
    assert result.exit_code == 1
    assert f"127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.output


def test_oracle_override_points_at_another_endpoint(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "ask.yaml", OLLAMA.replace("PORT", str(_dead_port())))
    other = _dead_port()
    result = invoke(
        ["run", str(ritual), "--oracle", f"local=ollama:tiny@http://127.0.0.1:{other}"], tmp_path
    )
    assert result.exit_code == 1
    assert f"127.0.0.1:{other}" in result.stderr
    unknown = invoke(["run", str(ritual), "--oracle", "locl=ollama:tiny"], tmp_path)
    assert unknown.exit_code == 2
    assert "did you mean 'local'?" in unknown.stderr


def test_trace_is_written(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    result = invoke(["run", str(ritual), "-i", "name=Ada", "--trace", "t.json"], tmp_path)
    assert result.exit_code == 3
    trace = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert trace["status"] == "interrupted"
    assert trace["interrupt"]["reason"] == "Send hello Ada?"


def test_trace_never_overwrites_another_file(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    before = ritual.read_text(encoding="utf-8")
    for target in (str(ritual), ".sanctum/codex.db"):
        if target.endswith(".db"):
            assert invoke(["run", str(ritual)], tmp_path).exit_code == 0  # makes the codex
        codex = (tmp_path / ".sanctum" / "codex.db").read_bytes() if target.endswith(".db") else b""
        result = invoke(["run", str(ritual), "--trace", target, "--codex", "memory:"], tmp_path)
        assert result.exit_code == 2, result.output
        assert "is not a sanctum trace" in result.stderr
        if codex:
            assert (tmp_path / ".sanctum" / "codex.db").read_bytes() == codex
    assert ritual.read_text(encoding="utf-8") == before


def test_trace_masks_the_ritual_secrets_and_redactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOP_API_KEY", "supersecretvalue123")
    ritual = write_ritual(
        tmp_path,
        "secret.yaml",
        """
sanctum: 1
name: secret
inputs:
  ticket: {type: string}
aether:
  key: {}
entry: k
sigils:
  k:
    set: {key: "'${SHOP_API_KEY}'"}
    next: END
wards:
  - redact: {patterns: ['sk-[A-Za-z0-9]{20,}']}
""",
    )
    ticket = "ticket=uses supersecretvalue123 and sk-AAAAAAAAAAAAAAAAAAAAAAAA"
    result = invoke(
        ["run", str(ritual), "-i", ticket, "--codex", "memory:", "--trace", "t.json"], tmp_path
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t.json").read_text(encoding="utf-8")
    assert "supersecretvalue123" not in text
    assert "sk-AAAA" not in text
    assert "[REDACTED]" in text


def test_an_existing_invocation_id_is_refused(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    assert invoke(["run", str(ritual), "--invocation", "same"], tmp_path).exit_code == 0
    again = invoke(["run", str(ritual), "--invocation", "same"], tmp_path)
    assert again.exit_code == 2
    assert "already exists" in again.stderr


# --------------------------------------------------------------------------- subprocesses


def test_run_interrupt_resume_done(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    paused = sanctum(["run", str(ritual), "--input", "name=Ada"], tmp_path)
    assert paused.returncode == 3, paused.stderr
    assert "reason: Send hello Ada?" in paused.stdout
    command = next(
        line.split("resume with: ", 1)[1]
        for line in paused.stdout.splitlines()
        if "resume with: " in line
    )
    assert command.startswith("sanctum resume --invocation ")
    args = [*command.split()[1:], "--update", "answered=true", "--update", "approved=true"]
    done = sanctum(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert 'status = "sent"' in done.stdout
    assert "✓ done" in done.stdout


def test_run_json_subprocess(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    paused = sanctum(["run", str(ritual), "-i", "name=Ada", "--json", "-s", "omens"], tmp_path)
    assert paused.returncode == 3
    rows = _json_lines(paused.stdout)  # every line parses
    assert all(row["kind"] == "omen" for row in rows[:-1])
    result = rows[-1]
    assert result["kind"] == "result"
    assert result["status"] == "paused"
    assert result["reason"] == "Send hello Ada?"
    assert result["sigil"] == "approve"
    assert result["resume"] == f"sanctum resume --invocation {result['invocation_id']}"
    assert any(row.get("type") == "SealWritten" and row["interrupted"] for row in rows)
    resumed = sanctum(
        ["resume", "--invocation", result["invocation_id"], "--json", "-u", "answered=true"],
        tmp_path,
    )
    final = _json_lines(resumed.stdout)[-1]
    assert resumed.returncode == 0
    assert final["aether"]["status"] == "held"


def _start_counter(tmp_path: Path, invocation: str) -> subprocess.Popen[str]:
    ritual = write_ritual(tmp_path, "counter.yaml", COUNTER)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [
            *console_script(),
            "run",
            str(ritual),
            "--json",
            "-s",
            "omens",
            "-i",
            "limit=6",
            "-i",
            "delay=0.15",
            "--invocation",
            invocation,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_for_seals(process: subprocess.Popen[str], count: int) -> None:
    assert process.stdout is not None
    seals = 0
    for line in process.stdout:
        if json.loads(line).get("type") == "SealWritten":
            seals += 1
            if seals == count:
                return
    raise AssertionError("the run ended before writing enough seals")


def test_killed_run_resumes_to_the_same_final_aether(tmp_path: Path) -> None:
    process = _start_counter(tmp_path, "killed")
    try:
        _wait_for_seals(process, 2)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=20)  # also closes the pipes
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    resumed = sanctum(["resume", "--invocation", "killed", "--json"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = _json_lines(resumed.stdout)[-1]
    whole = sanctum(
        [
            "run",
            str(tmp_path / "counter.yaml"),
            "--json",
            "-i",
            "limit=6",
            "-i",
            "delay=0.15",
            "--invocation",
            "whole",
        ],
        tmp_path,
    )
    assert final["aether"] == _json_lines(whole.stdout)[-1]["aether"]
    assert final["aether"]["trail"] == [1, 2, 3, 4, 5, 6]


def test_ctrl_c_exits_130_and_leaves_the_run_resumable(tmp_path: Path) -> None:
    process = _start_counter(tmp_path, "stopped")
    try:
        _wait_for_seals(process, 1)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "sanctum resume --invocation stopped" in stderr
    assert "Traceback" not in stderr
    resumed = sanctum(["resume", "--invocation", "stopped", "--json"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert _json_lines(resumed.stdout)[-1]["aether"]["trail"] == [1, 2, 3, 4, 5, 6]


def test_python_dash_m(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    done = subprocess.run(
        [sys.executable, "-m", "sanctum", "run", str(ritual), "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert _json_lines(done.stdout)[-1]["status"] == "done"


# --------------------------------------------------------------------------- bad input


def test_an_oracle_override_that_cannot_be_built_is_one_line(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "ask.yaml", OLLAMA.replace("PORT", str(_dead_port())))
    result = invoke(
        ["run", str(ritual), "--oracle", "local=llamacpp:/no/such/model.gguf"], tmp_path
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: --oracle local=llamacpp:/no/such/model.gguf: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


DEEP = """\
sanctum: 1
name: deep
inputs:
  tags: {type: array}
aether:
  out: {}
entry: count
sigils:
  count:
    set: {out: "tags | length"}
    next: END
"""


@pytest.mark.parametrize("depth", [65, 900, 100_000])
def test_deeply_nested_inputs_are_refused(tmp_path: Path, depth: int) -> None:
    ritual = write_ritual(tmp_path, "deep.yaml", DEEP)
    nested = "[" * depth + "]" * depth
    (tmp_path / "d.json").write_text('{"tags": ' + nested + "}", encoding="utf-8")
    from_file = invoke(["run", str(ritual), "--input-file", "d.json"], tmp_path)
    assert from_file.exit_code == 2, from_file.output
    assert "nesting deeper than 64 levels" in from_file.stderr
    assert from_file.stderr.startswith("error: d.json")
    if depth < 10_000:  # an argument that long is no command line
        pair = invoke(["run", str(ritual), "--input", f"tags={nested}"], tmp_path)
        assert pair.exit_code == 2, pair.output
        assert pair.stderr == (
            "error: input tags: nesting deeper than 64 levels (lists and mappings inside each "
            "other); give a flatter value\n"
        )
    assert not (tmp_path / ".sanctum").exists()


def test_sixty_four_levels_of_nesting_are_fine(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "deep.yaml", DEEP)
    result = invoke(["run", str(ritual), "-i", "tags=" + "[" * 64 + "]" * 64, "--json"], tmp_path)
    assert result.exit_code == 0, result.output
    assert _json_lines(result.stdout)[-1]["aether"]["out"] == 1


AUDITED = """\
sanctum: 1
name: audited
aether:
  out: {}
wards:
  - audit: {path: AUDIT}
entry: s
sigils:
  s:
    set: {out: "1"}
    next: END
"""


def test_an_audit_path_that_is_a_folder_is_a_bad_ritual_not_python_code(tmp_path: Path) -> None:
    (tmp_path / "trail").mkdir()
    ritual = write_ritual(tmp_path, "audited.yaml", AUDITED.replace("AUDIT", "trail"))
    result = invoke(["run", str(ritual), "--codex", "memory:"], tmp_path)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"{ritual}:6:19: wards: the audit path trail is a folder; name a file such as "
        "trail/audit.jsonl\n"
    )
    assert "Python code" not in result.output
    assert result.stdout == ""  # nothing ran


def test_an_audit_file_failing_mid_run_is_not_blamed_on_python_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sanctum.wards.audit import AuditWard

    ritual = write_ritual(tmp_path, "audited.yaml", AUDITED.replace("AUDIT", "a.jsonl"))

    def full_disk(self: AuditWard, sigil: str, delta: object) -> None:
        raise OSError(28, f"AuditWard cannot append to {self.path}: No space left on device")

    monkeypatch.setattr(AuditWard, "write", full_disk)
    result = invoke(["run", str(ritual), "--codex", "memory:"], tmp_path)
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        "error: the run stopped: AuditWard cannot append to a.jsonl: No space left on device "
        "(OSError)\n"
    )


SLOW = """\
sanctum: 1
name: slow
aether:
  out: {}
entry: nap
sigils:
  nap:
    call: "slow_steps:nap"
    next: END
"""


def test_ctrl_c_before_the_first_seal_says_the_run_must_start_again(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "slow.yaml", SLOW)
    (tmp_path / "slow_steps.py").write_text(
        "import asyncio\n\n\nasync def nap(aether):\n    await asyncio.sleep(30)\n"
        "    return {'out': 1}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    command = [*console_script(), "run", str(ritual), "--json", "-s", "omens"]
    process = subprocess.Popen(
        [*command, "--invocation", "early"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if json.loads(line).get("type") == "SigilBegan":
                break
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert stderr == (
        "stopped by Ctrl-C before the first Seal; invocation early left nothing to resume, "
        "so the run must start again\n"
    )
    unknown = sanctum(["resume", "--invocation", "early"], tmp_path)
    assert "unknown invocation 'early'" in unknown.stderr  # as the message said


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    ritual = write_ritual(tmp_path, "deep.yaml", DEEP)
    as_ritual = sanctum(["run", "pipe.yaml"], tmp_path, timeout=20)
    assert as_ritual.returncode == 2
    assert as_ritual.stderr == (
        "pipe.yaml:1:1: cannot read the ritual file: it is a named pipe (FIFO), not a "
        "regular file\n"
    )
    as_inputs = sanctum(["run", str(ritual), "--input-file", "pipe.yaml"], tmp_path, timeout=20)
    assert as_inputs.returncode == 2
    assert as_inputs.stderr.startswith(
        "error: pipe.yaml: it is a named pipe (FIFO), not a regular file;"
    )


def test_a_device_or_a_huge_file_is_no_input_file(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "deep.yaml", DEEP)
    if Path("/dev/urandom").exists():
        device = invoke(["run", str(ritual), "--input-file", "/dev/urandom"], tmp_path)
        assert device.exit_code == 2
        assert "/dev/urandom: it is a character device, not a regular file" in device.stderr
    (tmp_path / "big.json").write_bytes(b" " * (16 * 1024 * 1024 + 1))
    big = invoke(["run", str(ritual), "--input-file", "big.json"], tmp_path)
    assert big.exit_code == 2
    assert big.stderr == (
        "error: big.json: larger than 16 MiB (16777216 bytes), the limit of an input file\n"
    )
    piped = invoke(["run", str(ritual), "--input-file", "-"], tmp_path, input=b" " * (17 << 20))
    assert piped.exit_code == 2
    assert "error: standard input: larger than 16 MiB" in piped.stderr


NON_FINITE = """\
sanctum: 1
name: huge
aether:
  big: {}
  small: {}
  nan: {}
entry: s
sigils:
  s:
    set: {big: "1e308 * 10", small: "-1e308 * 10", nan: "(1e308 * 10) - (1e308 * 10)"}
    next: END
"""


def _strict(line: str) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"non-standard JSON constant {constant} in {line}")

    return json.loads(line, parse_constant=refuse)


def test_json_lines_are_strict_json(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "huge.yaml", NON_FINITE)
    result = invoke(
        ["run", str(ritual), "--json", "-s", "updates,values", "--codex", "memory:"], tmp_path
    )
    rows = [_strict(line) for line in result.stdout.splitlines()]
    expected = {"big": "Infinity", "small": "-Infinity", "nan": "NaN"}
    assert rows[0]["delta"] == expected
    assert rows[-1]["kind"] == "result"
    assert rows[-1]["aether"] == expected


def test_an_overlong_invocation_id_is_bad_input(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    for codex in ("memory:", "sqlite:///c.db"):
        result = invoke(
            ["run", str(ritual), "--invocation", "a" * 5000, "--codex", codex], tmp_path
        )
        assert result.exit_code == 2, result.output
        assert "invocation_id must be a non-empty string of at most 512 characters" in (
            result.stderr
        )
        assert result.stdout == ""  # refused before the first superstep
    assert not (tmp_path / "c.db").exists()


def test_memory_without_a_colon_is_the_memory_codex(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    paused = invoke(["run", str(ritual), "-i", "name=Ada", "--codex", "memory"], tmp_path)
    assert paused.exit_code == 3
    assert "resume with" not in paused.output  # nothing could resume it
    assert "not resumable: a memory: codex ends with this process" in paused.stdout
    assert not (tmp_path / ".sanctum").exists()


@pytest.mark.parametrize(
    ("command", "argument"),
    [("run", "RITUAL.yaml"), ("validate", "FILE..."), ("graph", "FILE"), ("watch", "RITUAL.yaml")],
)
def test_an_empty_path_is_refused_not_read_as_the_folder(
    tmp_path: Path, command: str, argument: str
) -> None:
    result = invoke([command, ""], tmp_path)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: Invalid value for '{argument}': the path is empty; name a ritual file "
        f"(see `sanctum {command} --help`)\n"
    )


def test_a_recursion_limit_points_at_the_ritual_files_key(tmp_path: Path) -> None:
    ritual = write_ritual(
        tmp_path,
        "loop.yaml",
        """
sanctum: 1
name: loop
recursion_limit: 5
aether: {count: {type: integer, default: 0}}
entry: a
sigils:
  a:
    set: {count: "count + 1"}
    routes:
      - when: "count < 100"
        to: a
      - to: END
""",
    )
    result = invoke(["run", str(ritual), "--codex", "memory:"], tmp_path)
    assert result.exit_code == 1
    assert "recursion limit of 5" in result.stderr
    assert "raise `recursion_limit:` in loop.yaml" in result.stderr
    assert "compile(" not in result.stderr


def test_ctrl_c_during_a_sigil_starts_no_further_superstep(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "counter.yaml", COUNTER)
    process = subprocess.Popen(
        [
            *console_script(),
            *("run", str(ritual), "--json", "-s", "omens", "-i", "limit=6", "-i", "delay=1.0"),
            *("--invocation", "slow"),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"},
    )
    try:
        _wait_for_seals(process, 1)  # superstep 2's Sigil is now sleeping for 1 s
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    seals = sanctum(["seals", "--invocation", "slow", "--json"], tmp_path)
    steps = [line["superstep"] for line in _json_lines(seals.stdout) if "superstep" in line]
    assert max(steps) == 2  # the running superstep finished and sealed; no third began
