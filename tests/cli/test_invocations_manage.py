"""``sanctum invocations show|delete|prune`` over a real SQLite codex."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import invoke
from tests.cli.seeding import seed


def _ids(directory: Path) -> list[str]:
    result = invoke(["invocations", "--json"], directory)
    assert result.exit_code == 0, result.output
    return [json.loads(line)["invocation_id"] for line in result.stdout.splitlines()]


def test_show_tells_status_ritual_reason_and_the_aether(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "show", "inv-paused"], tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "invocation  inv-paused" in lines
    assert "status      paused" in lines
    assert "ritual      r.yaml" in lines
    assert "supersteps  0 (1 seals)" in lines
    assert "reason      Approve?" in lines
    assert "resume with: sanctum resume --invocation inv-paused" in lines
    assert lines[-2:] == ["Aether", '└── q = "?"']


def test_show_json_is_one_object_with_the_aether(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "show", "inv-done", "--json"], tmp_path)
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.splitlines()
    row = json.loads(line)
    assert row["status"] == "done"
    assert row["seals"] == 2
    assert row["seal_id"] == "s2"
    assert row["created"] == 1_700_000_000.0
    assert row["aether"] == {"n": 2}


def test_show_of_an_unknown_invocation(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "show", "nope"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: unknown invocation 'nope' in the codex .sanctum/codex.db; list them with "
        "`sanctum invocations`"
    ]


def test_delete_a_done_invocation(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "delete", "inv-done"], tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == ["deleted done invocation inv-done"]
    assert _ids(tmp_path) == ["inv-paused"]
    again = invoke(["invocations", "delete", "inv-done"], tmp_path)
    assert again.exit_code == 2
    assert "unknown invocation 'inv-done'" in again.stderr


def test_delete_of_a_resumable_invocation_needs_force(tmp_path: Path) -> None:
    seed(tmp_path)
    refused = invoke(["invocations", "delete", "inv-paused"], tmp_path)
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        "error: invocation 'inv-paused' is paused and can still be resumed; add --force "
        "to delete it anyway; nothing was deleted"
    ]
    assert _ids(tmp_path) == ["inv-paused", "inv-done"]
    forced = invoke(["invocations", "delete", "inv-paused", "--force"], tmp_path)
    assert forced.exit_code == 0, forced.output
    assert _ids(tmp_path) == ["inv-done"]


def test_prune_deletes_old_finished_invocations_only(tmp_path: Path) -> None:
    seed(tmp_path)  # both invocations were last written in 2023
    dry = invoke(["invocations", "prune", "--older-than", "30d", "--dry-run"], tmp_path)
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.splitlines() == ["would delete done invocation inv-done"]
    assert dry.stderr.splitlines() == ["would delete 1 finished invocation older than 30d"]
    assert _ids(tmp_path) == ["inv-paused", "inv-done"]
    result = invoke(["invocations", "prune", "--older-than", "30d"], tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["deleted done invocation inv-done"]
    assert _ids(tmp_path) == ["inv-paused"]  # paused stays, however old


def test_prune_keeps_what_is_younger(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "prune", "--older-than", "5200w"], tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == ["deleted 0 finished invocations older than 5200w"]
    assert _ids(tmp_path) == ["inv-paused", "inv-done"]


def test_prune_refuses_an_age_without_a_unit(tmp_path: Path) -> None:
    seed(tmp_path)
    result = invoke(["invocations", "prune", "--older-than", "30"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: Invalid value for --older-than: '30' is no age; give a number and a unit: "
        "45s, 90m, 12h, 30d or 2w (see `sanctum invocations prune --help`)"
    ]
