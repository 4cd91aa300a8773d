"""``sanctum seals`` over a real SQLite codex."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sanctum.cli._tables import format_time
from tests.cli.helpers import invoke
from tests.cli.seeding import LONG_ID, LONG_SEAL, seed, seed_long


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


@pytest.mark.parametrize("columns", ["80", "50", "140"])
def test_the_table_keeps_seal_ids_times_and_headers_whole(tmp_path: Path, columns: str) -> None:
    seed_long(tmp_path)
    result = invoke(["seals", "--invocation", LONG_ID], tmp_path, env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if LONG_SEAL in line)
    assert format_time(1_700_000_002.0) in row
    header = next(line for line in lines if line.startswith("seal"))
    assert header.split()[:2] == ["seal", "step"] or header.split()[:2] == ["seal", "time"]
    assert "interrup " not in header
    assert not any(line.strip() == "t" for line in lines)
    assert all(line == line.rstrip() for line in lines)
    assert all(len(line) <= int(columns) for line in lines if LONG_ID not in line)
    if columns == "140":
        assert "approve_refund: Approve the refund" in row


def _damage_first_seal(directory: Path) -> None:
    import sqlite3

    with sqlite3.connect(directory / ".sanctum" / "codex.db") as db:
        db.execute("UPDATE sanctum_seals SET metadata = '{\"joins\": 5}' WHERE seal_id = 's1'")


def test_a_damaged_seal_is_marked_and_the_rest_still_listed(tmp_path: Path) -> None:
    seed(tmp_path)
    _damage_first_seal(tmp_path)
    result = invoke(["seals", "--invocation", "inv-done"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "damaged: its metadata 'joins'" in result.stdout
    assert "s2" in result.stdout
    lines = invoke(["seals", "--invocation", "inv-done", "--json", "--values"], tmp_path)
    rows = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [row["seal_id"] for row in rows] == ["s1", "s2"]
    assert "joins" in rows[0]["damaged"]
    assert rows[1]["aether"] == {"n": 2}


def test_a_hand_edited_field_is_a_seal_error_when_resumed(tmp_path: Path) -> None:
    seed(tmp_path)
    _damage_first_seal(tmp_path)
    result = invoke(["resume", "--invocation", "inv-done", "--seal", "s1"], tmp_path)
    assert result.exit_code == 2
    assert "metadata 'joins' is 5" in result.stderr
    assert "Traceback" not in result.output
