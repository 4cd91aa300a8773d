"""Approvals through the real command line: the example, `pending`, --approve/--reject,
roles from --as/--role, a SIGKILL during the approved write, and no Mandate leaks."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from sanctum.api import list_seals
from tests.cli.helpers import REPO, _env, console_script, sanctum

EXAMPLE = REPO / "examples" / "approval" / "ticket.yaml"
SUPPORT = ["--as", "carol", "--role", "support"]
RECORDED = ["--trace", "trace.json", "--record", "tape.cassette.jsonl"]
TRACED = ["--trace", "trace2.json"]


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def _final(text: str) -> dict[str, Any]:
    result = _lines(text)[-1]
    assert result["kind"] == "result", result
    return dict(result["aether"])


def _paused(cwd: Path, invocation: str, ritual: Path = EXAMPLE, *extra: str) -> None:
    ran = sanctum(
        [
            "run",
            str(ritual),
            "--as",
            "alice",
            "--role",
            "support",
            "--invocation",
            invocation,
            *extra,
        ],
        cwd,
    )
    assert ran.returncode == 3, ran.stderr


def test_the_example_pauses_then_an_approval_saves_the_record(tmp_path: Path) -> None:
    _paused(tmp_path, "t7")
    assert not (tmp_path / "records.json").exists()
    listed = sanctum(["pending", "--json"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    (entry,) = _lines(listed.stdout)
    assert entry["invocation_id"] == "t7"
    assert entry["started_by"] == "alice"
    assert entry["calls"] == {
        "2:call_0": {
            "spell": "update_email",
            "arguments": {"ticket": "T-7", "email": "ap@acme.example"},
        }
    }
    assert entry["approve"] == "sanctum resume --invocation t7 --approve"
    shown = sanctum(["pending"], tmp_path)
    assert "started by alice" in shown.stdout
    assert "sanctum resume --invocation t7 --reject --reason TEXT" in shown.stdout
    resumed = sanctum(["resume", "--invocation", "t7", "--approve", "--json", *SUPPORT], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads((tmp_path / "records.json").read_text(encoding="utf-8"))
    assert record["acme"] == {
        "invoice_email": "ap@acme.example",
        "saved_by": "carol",
        "ticket": "T-7",
    }
    assert _final(resumed.stdout)["approvals"]["2:call_0"]["by"] == "carol"
    assert sanctum(["pending", "--json"], tmp_path).stdout == ""


def test_a_rejection_reaches_the_agent_and_saves_nothing(tmp_path: Path) -> None:
    _paused(tmp_path, "t7")
    resumed = sanctum(
        [
            "resume",
            "--invocation",
            "t7",
            "--reject",
            "--reason",
            "wrong address",
            "--json",
            *SUPPORT,
        ],
        tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert not (tmp_path / "records.json").exists()
    messages = _final(resumed.stdout)["messages"]
    assert "rejected by carol: wrong address" in messages[4]["content"]


def test_approve_without_a_pending_call_is_bad_input(tmp_path: Path) -> None:
    _paused(tmp_path, "t7")
    sanctum(["resume", "--invocation", "t7", "--approve", *SUPPORT], tmp_path)
    again = sanctum(["resume", "--invocation", "t7", "--approve", *SUPPORT], tmp_path)
    assert again.returncode != 0
    both = sanctum(["resume", "--invocation", "t7", "--approve", "--reject"], tmp_path)
    assert both.returncode == 2
    assert "--approve or --reject, not both" in both.stderr


def test_without_the_support_role_the_write_spell_stays_hidden(tmp_path: Path) -> None:
    ran = sanctum(["run", str(EXAMPLE), "--as", "bob", "--json"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    messages = _final(ran.stdout)["messages"]
    assert "no spell named" in messages[4]["content"]  # read_ticket hidden from bob too
    assert not (tmp_path / "records.json").exists()


def _slow_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "approval"
    shutil.copytree(EXAMPLE.parent, folder)
    spell = folder / "spells" / "tickets" / "update_email" / "spell.py"
    text = spell.read_text(encoding="utf-8")
    text = text.replace(
        '    store = Path("records.json")\n',
        '    store = Path("records.json")\n'
        '    if Path("hold").exists():\n'
        '        Path("started").write_text("1")\n'
        "        import time\n\n"
        "        time.sleep(60)\n",
    )
    spell.write_text(text, encoding="utf-8")
    return folder / "ticket.yaml"


def test_kill_during_the_approved_write_then_resume_gives_the_same_aether(tmp_path: Path) -> None:
    ritual = _slow_copy(tmp_path)
    _paused(tmp_path, "whole", ritual)
    whole = sanctum(["resume", "--invocation", "whole", "--approve", "--json", *SUPPORT], tmp_path)
    assert whole.returncode == 0, whole.stderr

    _paused(tmp_path, "killed", ritual)
    (tmp_path / "hold").write_text("1")
    process = subprocess.Popen(
        [*console_script(), "resume", "--invocation", "killed", "--approve", "--json", *SUPPORT],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    try:
        for _ in range(600):  # the approved write has started
            if (tmp_path / "started").exists():
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    (tmp_path / "hold").unlink()
    # The decision is sealed with the first superstep after it, which the kill cut
    # short: the run is still paused on the same call, and the reviewer decides again.
    again = sanctum(["resume", "--invocation", "killed", "--json", *SUPPORT], tmp_path)
    assert again.returncode == 3, again.stderr
    resumed = sanctum(
        ["resume", "--invocation", "killed", "--approve", "--json", *SUPPORT], tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    assert _final(resumed.stdout) == _final(whole.stdout)


def test_the_mandate_reaches_no_seal_trace_audit_or_cassette(tmp_path: Path) -> None:
    folder = tmp_path / "approval"
    shutil.copytree(EXAMPLE.parent, folder)
    ritual = folder / "ticket.yaml"
    ritual.write_text(
        ritual.read_text(encoding="utf-8") + "\nwards:\n  - audit: {path: audit.jsonl}\n",
        encoding="utf-8",
    )
    (tmp_path / "who.json").write_text(
        json.dumps(
            {
                "principal": "alice",
                "roles": ["support"],
                "subject": {"account": "ZEBRA-SUBJECT"},
                "attrs": {"tenant": "QUOKKA-TENANT"},
            }
        )
    )
    ran = sanctum(
        [
            "run",
            str(ritual),
            "--mandate-file",
            "who.json",
            "--invocation",
            "m",
            "--trace",
            "trace.json",
            "--record",
            "tape.cassette.jsonl",
        ],
        tmp_path,
    )
    assert ran.returncode == 3, ran.stderr
    resumed = sanctum(
        [
            "resume",
            "--invocation",
            "m",
            "--approve",
            "--mandate-file",
            "who.json",
            "--trace",
            "trace2.json",
        ],
        tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    stored = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and p.name != "who.json" and folder not in p.parents
    ]
    assert any(p.name == "trace.json" for p in stored)
    assert any(p.name == "audit.jsonl" for p in [*stored, *folder.rglob("audit.jsonl")])
    stored += list(folder.rglob("audit.jsonl"))
    assert any(p.suffix == ".jsonl" and "cassette" in p.name for p in stored)
    for path in stored:
        data = path.read_bytes()
        for secret in (b"ZEBRA-SUBJECT", b"QUOKKA-TENANT", b'"support"'):
            assert secret not in data, (path, secret)
    seals = asyncio.run(list_seals("m", str(tmp_path / ".sanctum" / "codex.db")))
    assert {s.metadata.get("mandate_principal") for s in seals} == {"alice"}  # for audit
