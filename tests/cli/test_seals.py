"""``sanctum seals`` over a real SQLite codex."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import invoke
from tests.cli.seeding import seed


def test_history_table(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["seals", "--invocation", "inv-done"], tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout.index("s1") < result.stdout.index("s2")
    assert "END" in result.stdout  # the final Seal's empty frontier


def test_interrupt_reason_is_shown(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["seals", "--invocation", "inv-paused"], tmp_path)
    assert "ask: Approve?" in result.stdout


def test_json_rows_and_values(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["seals", "--invocation", "inv-done", "--json", "--values"], tmp_path)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["seal_id"] for row in rows] == ["s1", "s2"]
    assert rows[0]["frontier"] == ["b"]
    assert rows[1]["parent"] == "s1"
    assert rows[1]["aether"] == {"n": 2}
    assert rows[0]["interrupt"] is None


def test_unknown_invocation_is_one_clear_message(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["seals", "--invocation", "nope"], tmp_path)
    assert result.exit_code == 2
    assert "unknown invocation 'nope'" in result.stderr
    assert "sanctum invocations" in result.stderr
    assert "Traceback" not in result.output


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["--debug", "seals", "--invocation", "nope"], tmp_path)
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
