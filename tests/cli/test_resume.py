"""``sanctum resume``: updates, changed files, time-travel, unknown invocations."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import APPROVE, COUNTER, invoke, write_ritual


def _pause(tmp_path: Path, invocation: str = "a1") -> Path:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    paused = invoke(["run", str(ritual), "-i", "name=Ada", "--invocation", invocation], tmp_path)
    assert paused.exit_code == 3, paused.output
    return ritual


def test_updates_answer_the_interrupt(tmp_path: Path) -> None:
    _pause(tmp_path)
    result = invoke(
        ["resume", "--invocation", "a1", "-u", "answered=true", "-u", "approved=true"], tmp_path
    )
    assert result.exit_code == 0, result.output
    assert 'status = "sent"' in result.stdout


def test_without_an_answer_it_pauses_again(tmp_path: Path) -> None:
    _pause(tmp_path)
    result = invoke(["resume", "--invocation", "a1"], tmp_path)
    assert result.exit_code == 3
    assert "resume with: sanctum resume --invocation a1" in result.stdout


def test_update_file(tmp_path: Path) -> None:
    _pause(tmp_path)
    (tmp_path / "answer.json").write_text('{"answered": true}', encoding="utf-8")
    result = invoke(["resume", "--invocation", "a1", "--update-file", "answer.json"], tmp_path)
    assert result.exit_code == 0
    assert 'status = "held"' in result.stdout


def test_a_changed_ritual_is_refused_unless_forced(tmp_path: Path) -> None:
    ritual = _pause(tmp_path)
    ritual.write_text(APPROVE.replace("'held'", "'kept'"), encoding="utf-8")
    refused = invoke(["resume", "--invocation", "a1", "-u", "answered=true"], tmp_path)
    assert refused.exit_code == 2
    assert "changed since invocation 'a1'" in refused.stderr
    assert "--force" in refused.stderr
    forced = invoke(["resume", "--invocation", "a1", "-u", "answered=true", "--force"], tmp_path)
    assert forced.exit_code == 0
    assert 'status = "kept"' in forced.stdout


def test_a_deleted_ritual_is_named(tmp_path: Path) -> None:
    ritual = _pause(tmp_path)
    ritual.unlink()
    result = invoke(["resume", "--invocation", "a1"], tmp_path)
    assert result.exit_code == 2
    assert "no longer exists" in result.stderr


def test_unknown_invocation(tmp_path: Path) -> None:
    result = invoke(["resume", "--invocation", "ghost"], tmp_path)
    assert result.exit_code == 2
    assert "unknown invocation 'ghost'" in result.stderr
    assert "Traceback" not in result.output


def test_time_travel_from_an_earlier_seal(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "counter.yaml", COUNTER)
    first = invoke(["run", str(ritual), "-i", "limit=3", "--invocation", "c1"], tmp_path)
    assert first.exit_code == 0
    seals = invoke(["seals", "--invocation", "c1", "--json", "--values"], tmp_path)
    rows = [json.loads(line) for line in seals.stdout.splitlines()]
    earliest = rows[0]
    assert earliest["aether"]["count"] == 1
    again = invoke(
        ["resume", "--invocation", "c1", "--seal", earliest["seal_id"], "--json"], tmp_path
    )
    assert again.exit_code == 0, again.output
    final = json.loads(again.stdout.splitlines()[-1])
    assert final["aether"]["trail"] == [1, 2, 3]
    unknown = invoke(["resume", "--invocation", "c1", "--seal", "nope"], tmp_path)
    assert unknown.exit_code == 2
    assert "has no seal 'nope'" in unknown.stderr
