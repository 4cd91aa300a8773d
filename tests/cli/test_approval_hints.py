"""A pause that waits for approvals says --approve / --reject; other pauses say --update."""

from __future__ import annotations

from pathlib import Path

from sanctum.api import RunResult
from tests.cli.helpers import REPO, invoke

EXAMPLE = REPO / "examples" / "approval" / "ticket.yaml"
ALICE = ["--as", "alice", "--role", "support", "--invocation", "t7"]


def test_the_view_of_an_approval_pause_suggests_approve_and_reject(tmp_path: Path) -> None:
    done = invoke(["run", str(EXAMPLE), *ALICE], tmp_path)
    assert done.exit_code == 3, done.output
    assert "resume with: sanctum resume --invocation t7" in done.stdout
    assert "add --approve, or --reject --reason TEXT, to decide the waiting calls" in done.stdout
    assert "--update KEY=VALUE" not in done.stdout


def test_json_mode_names_both_commands(tmp_path: Path) -> None:
    done = invoke(["run", str(EXAMPLE), *ALICE, "--json"], tmp_path)
    assert done.exit_code == 3, done.output
    lines = done.stderr.splitlines()
    assert "approve with: sanctum resume --invocation t7 --approve" in lines
    assert "reject with: sanctum resume --invocation t7 --reject --reason TEXT" in lines


def test_only_a_pending_decision_counts_as_awaiting_approval() -> None:
    waiting = {"approvals": {"2:call_0": {"decision": "pending", "spell": "w"}}}
    decided = {"approvals": {"2:call_0": {"decision": "approve", "spell": "w"}}}
    assert RunResult("paused", "i", waiting).awaits_approval
    assert not RunResult("paused", "i", decided).awaits_approval
    assert not RunResult("paused", "i", {"approved": False}).awaits_approval
    assert not RunResult("done", "i", waiting).awaits_approval
