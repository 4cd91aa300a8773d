"""``sanctum invocations`` over a real SQLite codex."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sanctum.cli._tables import format_time
from tests.cli.helpers import invoke, sanctum
from tests.cli.seeding import LONG_ID, seed, seed_long


def test_lists_recent_invocations_newest_first(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations"], tmp_path)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("inv-paused") < out.index("inv-done")
    assert "paused" in out
    assert "done" in out
    assert "r.yaml" in out


def test_json_rows(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "--json"], tmp_path)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["invocation_id"] for row in rows] == ["inv-paused", "inv-done"]
    paused, done = rows
    assert paused["status"] == "paused"
    assert paused["reason"] == "Approve?"
    assert done["status"] == "done"
    assert done["supersteps"] == 2
    assert done["seals"] == 2
    assert done["ritual"].endswith("r.yaml")


def test_limit(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "--json", "-n", "1"], tmp_path)
    assert len(result.stdout.splitlines()) == 1


def test_a_missing_default_codex_says_how_to_start_and_creates_nothing(tmp_path: Path) -> None:
    result = invoke(["invocations"], tmp_path)
    assert result.exit_code == 2
    assert "no codex here yet" in result.stderr
    assert "sanctum run" in result.stderr
    assert not (tmp_path / ".sanctum").exists()


def test_an_empty_codex_says_how_to_start(tmp_path: Path) -> None:
    (tmp_path / ".sanctum").mkdir()
    sqlite3.connect(tmp_path / ".sanctum" / "codex.db").close()
    result = invoke(["invocations"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "no invocations yet" in result.stdout


@pytest.mark.parametrize("columns", ["80", "60", "120"])
def test_the_table_keeps_ids_and_times_whole(tmp_path: Path, columns: str) -> None:
    seed_long(tmp_path)
    result = invoke(["invocations"], tmp_path, env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if LONG_ID in line)
    assert format_time(1_700_000_002.0) in row
    header = next(line for line in lines if line.startswith("invocation"))
    assert "updated" in header
    assert all(line == line.rstrip() for line in lines)
    assert all(len(line) <= int(columns) for line in lines)
    if columns == "120":
        assert "triage-and-escalate.yaml" in row
        assert "paused" in row


def test_the_table_in_a_pipe_of_a_narrow_terminal(tmp_path: Path) -> None:
    seed_long(tmp_path)
    done = sanctum(["invocations"], tmp_path, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(LONG_ID in line and format_time(1_700_000_002.0) in line for line in lines)
    assert all(line == line.rstrip() for line in lines)
    assert "…" not in "".join(line for line in lines if LONG_ID in line).split()[0]


def test_explicit_codex_url(tmp_path: Path) -> None:
    seed(tmp_path)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    url = f"sqlite:///{tmp_path}/.sanctum/codex.db"
    result = invoke(["invocations", "--json", "--codex", url], elsewhere)
    assert len(result.stdout.splitlines()) == 2


def test_unknown_codex_scheme_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(["invocations", "--codex", "redis://x"], tmp_path)
    assert result.exit_code == 2
    assert "unknown codex URL" in result.stderr
    assert "Traceback" not in result.output
