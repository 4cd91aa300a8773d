"""``sanctum invocations`` over a real SQLite codex."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import invoke
from tests.cli.seeding import seed


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


def test_empty_codex_says_how_to_start(tmp_path: Path) -> None:
    result = invoke(["invocations"], tmp_path)
    assert result.exit_code == 0
    assert "sanctum run" in result.stdout
    assert (tmp_path / ".sanctum" / "codex.db").exists()


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
