"""Who may decide an approval: a resumer without the waiting Spell's roles, or with no
name at all, is refused before anything is written, and the decision keeps its call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, sanctum

EXAMPLE = REPO / "examples" / "approval" / "ticket.yaml"


def _paused(cwd: Path, invocation: str) -> None:
    ran = sanctum(
        ["run", str(EXAMPLE), "--as", "alice", "--role", "support", "--invocation", invocation],
        cwd,
    )
    assert ran.returncode == 3, ran.stderr


def _still_waiting(cwd: Path, invocation: str) -> None:
    listed = sanctum(["pending", "--json"], cwd)
    entries = [json.loads(line) for line in listed.stdout.splitlines() if line.startswith("{")]
    assert [e["invocation_id"] for e in entries] == [invocation]
    assert not (cwd / "records.json").exists()


@pytest.mark.parametrize(
    ("who", "said"),
    [
        (["--as", "bob"], "'bob' may not approve a call of update_email"),
        (["--as", "bob", "--role", "auditor"], "needs one of the roles support"),
        (["--as", ""], "--approve needs the name of the person deciding"),
    ],
)
def test_a_resumer_who_could_not_cast_the_spell_is_refused(
    tmp_path: Path, who: list[str], said: str
) -> None:
    _paused(tmp_path, "t7")
    before = sanctum(["seals", "--invocation", "t7", "--json"], tmp_path).stdout
    assert "superstep" in before
    refused = sanctum(["resume", "--invocation", "t7", "--approve", *who], tmp_path)
    assert refused.returncode == 2, refused.stdout
    assert said in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    _still_waiting(tmp_path, "t7")
    assert sanctum(["seals", "--invocation", "t7", "--json"], tmp_path).stdout == before


def test_a_rejection_needs_the_roles_too(tmp_path: Path) -> None:
    _paused(tmp_path, "t8")
    refused = sanctum(
        ["resume", "--invocation", "t8", "--reject", "--reason", "no", "--as", "bob"], tmp_path
    )
    assert refused.returncode == 2
    assert "'bob' may not reject a call of update_email" in refused.stderr
    _still_waiting(tmp_path, "t8")


def test_the_decision_keeps_the_spell_and_its_arguments(tmp_path: Path) -> None:
    _paused(tmp_path, "t9")
    resumed = sanctum(
        ["resume", "--invocation", "t9", "--approve", "--json", "--as", "dan", "--role", "support"],
        tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    result = [json.loads(line) for line in resumed.stdout.splitlines() if line.startswith("{")]
    entry = result[-1]["aether"]["approvals"]["2:call_0"]
    assert entry["spell"] == "update_email"
    assert entry["arguments"] == {"ticket": "T-7", "email": "ap@acme.example"}
    assert (entry["decision"], entry["by"]) == ("approve", "dan")
