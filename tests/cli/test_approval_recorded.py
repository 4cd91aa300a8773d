"""`--record` does not change what an approval run does: the scripted oracle behind the
recorder still continues its script where the pause left it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import REPO, sanctum

EXAMPLE = REPO / "examples" / "approval" / "ticket.yaml"
AS = ["--as", "a", "--role", "support"]


def test_a_recorded_approval_ends_as_an_unrecorded_one(tmp_path: Path) -> None:
    ran = sanctum(["run", str(EXAMPLE), *AS, "--invocation", "X", "--record", "x.jsonl"], tmp_path)
    assert ran.returncode == 3, ran.stderr
    resumed = sanctum(
        ["resume", "--invocation", "X", "--approve", *AS, "--record", "x.jsonl", "--json"],
        tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in resumed.stdout.splitlines() if line.startswith("{")]
    assert lines[-1]["aether"]["answer"].startswith("Ticket T-7 is handled")
    record = json.loads((tmp_path / "records.json").read_text(encoding="utf-8"))
    assert record["acme"]["invoice_email"] == "ap@acme.example"
    calls = [json.loads(line) for line in (tmp_path / "x.jsonl").read_text().splitlines()]
    assert [c["session"] for c in calls if c.get("kind") == "oracle"] == [0, 0, 1]
    assert sanctum(["pending", "--json"], tmp_path).stdout == ""
