"""Propose, then apply: propose spells draft, a person decides, host code applies.

The agent's ``propose`` spell has no side effect: it returns a draft. A host ``call``
sigil gathers the drafts into the ``proposals`` Conduit, an ``interrupt`` waits for a
person, and a second ``call`` sigil applies the approved drafts to a SQLite record
store under the resumer's Mandate. Driven through the real command line: run (exit 3),
resume with the decision, and the record store before and after.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli.helpers import invoke

RITUAL = """\
sanctum: 1
name: propose-apply
aether:
  messages: {reducer: append}
  proposals: {reducer: append}
  decision: {type: string, default: ""}
  applied: {}
oracles:
  clerk:
    provider: scripted
    responses:
      - spell_calls:
          - {spell: propose_email, arguments: {customer: acme, email: ap@acme.example}}
      - "I proposed the new invoice email; a person will decide."
tomes:
  desk: {path: spells}
entry: work
sigils:
  work:
    agent: {oracle: clerk, tome: desk}
    prompt: "Acme asks to send invoices to ap@acme.example."
    next: collect
  collect:
    call: records:collect_drafts
    next: review
  review:
    interrupt: "Apply {{ proposals | length }} proposed change(s)? (decision=approve|reject)"
    until: "decision != ''"
    next: apply
  apply:
    call: records:apply_decisions
    next: END
"""

SPELL = '''
import json


def propose_email(customer: str, email: str) -> str:
    """Propose a new invoice email for a customer; nothing is saved.

    Args:
        customer: The customer id.
        email: The proposed invoice email.
    """
    return json.dumps({"customer": customer, "email": email})
'''

RECORDS = '''
"""Host code: gather the drafts, apply the approved ones to records.db."""

import json
import sqlite3

from sanctum.ritual.mandate import current_mandate


def collect_drafts(aether):
    drafts = [
        json.loads(m["content"])
        for m in aether["messages"]
        if m.get("role") == "spell" and m.get("name") == "propose_email"
    ]
    return {"proposals": drafts}


def apply_decisions(aether):
    if aether["decision"] != "approve":
        return {"applied": []}
    who = current_mandate()
    db = sqlite3.connect("records.db")
    with db:
        for draft in aether["proposals"]:
            db.execute(
                "UPDATE customers SET invoice_email = ?, changed_by = ? WHERE id = ?",
                (draft["email"], who.principal, draft["customer"]),
            )
    db.close()
    return {"applied": [d["customer"] for d in aether["proposals"]]}
'''


def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    spell = tmp_path / "spells" / "propose_email"
    spell.mkdir(parents=True)
    (spell / "spell.py").write_text(SPELL, encoding="utf-8")
    manifest = {"name": "propose_email", "entrypoint": "spell.py:propose_email"}
    manifest["access"] = "propose"
    (spell / "spell.json").write_text(json.dumps(manifest), encoding="utf-8")
    (tmp_path / "records.py").write_text(RECORDS, encoding="utf-8")
    with sqlite3.connect(tmp_path / "records.db") as db:
        db.execute("CREATE TABLE customers (id TEXT, invoice_email TEXT, changed_by TEXT)")
        db.execute("INSERT INTO customers VALUES ('acme', 'old@acme.example', NULL)")
    db.close()
    (tmp_path / "propose.yaml").write_text(RITUAL, encoding="utf-8")
    return tmp_path / "records.db"


def _row(store: Path) -> tuple[str, str | None]:
    with sqlite3.connect(store) as db:
        row = db.execute("SELECT invoice_email, changed_by FROM customers").fetchone()
    db.close()
    return row[0], row[1]


def _run(tmp_path: Path) -> None:
    ran = invoke(["run", "propose.yaml", "--as", "alice", "--invocation", "p1"], tmp_path)
    assert ran.exit_code == 3, ran.output
    assert "Apply 1 proposed change(s)?" in ran.stdout


def test_an_approved_proposal_is_applied_under_the_resumer(tmp_path: Path) -> None:
    store = project(tmp_path)
    _run(tmp_path)
    assert _row(store) == ("old@acme.example", None)  # nothing written before apply
    resumed = invoke(
        ["resume", "--invocation", "p1", "--update", "decision=approve", "--as", "carol"],
        tmp_path,
    )
    assert resumed.exit_code == 0, resumed.output
    assert _row(store) == ("ap@acme.example", "carol")


def test_a_rejected_proposal_leaves_the_store_byte_identical(tmp_path: Path) -> None:
    store = project(tmp_path)
    before = store.read_bytes()
    _run(tmp_path)
    resumed = invoke(
        ["resume", "--invocation", "p1", "--update", "decision=reject", "--json"], tmp_path
    )
    assert resumed.exit_code == 0, resumed.output
    result = json.loads(resumed.stdout.splitlines()[-1])
    assert result["aether"]["applied"] == []
    assert result["aether"]["proposals"] == [{"customer": "acme", "email": "ap@acme.example"}]
    assert store.read_bytes() == before
