"""`sanctum pending` for plain interrupts: a neutral label, and who started it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from subprocess import CompletedProcess

from tests.cli.helpers import APPROVE, _env, console_script, sanctum, write_ritual


def _without_user() -> dict[str, str]:
    return {k: v for k, v in _env().items() if k not in ("USER", "LOGNAME")}


def _call(cwd: Path, args: list[str], env: dict[str, str] | None) -> CompletedProcess[str]:
    """Run the real console script with ``env`` (default: the tests' environment)."""
    return subprocess.run(
        [*console_script(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env if env is not None else _env(),
        timeout=60,
        check=False,
    )


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run the real console script; its stdout (the command must succeed)."""
    done = _call(cwd, list(args), env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _paused(cwd: Path, invocation: str, *extra: str, env: dict[str, str] | None = None) -> None:
    ritual = write_ritual(cwd, "approve.yaml", APPROVE)
    args = ["run", str(ritual), "-i", "name=Ada", "--invocation", invocation, *extra]
    done = _call(cwd, args, env)
    assert done.returncode == 3, done.stderr


def test_a_plain_interrupt_is_resumed_not_approved(tmp_path: Path) -> None:
    _paused(tmp_path, "plain-1", "--as", "alice")
    shown = _run(tmp_path, "pending")
    lines = shown.splitlines()
    assert lines[0].startswith("plain-1  started by alice, waiting since ")
    assert lines[1] == "  Send hello Ada?"
    assert lines[2] == "  resume:  sanctum resume --invocation plain-1 --update KEY=VALUE"
    assert "approve" not in shown
    assert "reject" not in shown
    (entry,) = [json.loads(line) for line in _run(tmp_path, "pending", "--json").splitlines()]
    assert entry["resume"] == "sanctum resume --invocation plain-1"
    assert entry["approve"] is None
    assert entry["reject"] is None
    assert entry["calls"] == {}
    assert entry["queued"] is False


def test_the_printed_resume_command_answers_the_pause(tmp_path: Path) -> None:
    _paused(tmp_path, "plain-2")
    (entry,) = [json.loads(line) for line in _run(tmp_path, "pending", "--json").splitlines()]
    words = entry["resume"].split()[1:]
    done = sanctum([*words, "-u", "approved=true", "-u", "answered=true", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["aether"]["status"] == "sent"
    assert _run(tmp_path, "pending", "--json") == ""


def test_without_user_nobody_is_named_and_no_unknown_is_printed(tmp_path: Path) -> None:
    bare = _without_user()
    _paused(tmp_path, "nobody", env=bare)
    shown = _run(tmp_path, "pending", env=bare)
    first = shown.splitlines()[0]
    assert first.startswith("nobody  waiting since ")
    assert "unknown" not in shown
    assert "started by" not in shown
    (line,) = _run(tmp_path, "pending", "--json", env=bare).splitlines()
    entry = json.loads(line)
    assert entry["started_by"] is None


def test_who_started_it_comes_from_the_first_seal_not_the_environment(tmp_path: Path) -> None:
    _paused(tmp_path, "by-carol", "--as", "carol", env=_without_user())
    shown = _run(tmp_path, "pending", env={**_env(), "USER": "mallory"})
    assert shown.splitlines()[0].startswith("by-carol  started by carol, waiting since ")
    assert "mallory" not in shown
