"""``sanctum run``: in-process through CliRunner, and as real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
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
