"""Spells with outside effects under a cassette: recorded once, never cast on replay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from sanctum import api
from sanctum.errors import CassetteMismatch, SpellExecutionError
from sanctum.grimoire import Tome, spell
from sanctum.grimoire.recorded import ReplayedSpellError, recorded_spell, recorded_tome
from sanctum.oracle.cassette import CassettePlayer, CassetteRecorder

SEND = """\
import json, pathlib

def send_mail(to: str, body: str) -> str:
    if to == "nobody":
        raise LookupError("no such mailbox: nobody")
    box = pathlib.Path("outbox.jsonl")
    with box.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"to": to, "body": body}) + "\\n")
    return f"sent to {to}"

def shout(text: str) -> str:
    return text.upper()
"""

RITUAL = """\
sanctum: 1
name: mailer
inputs:
  to: {type: string}
aether:
  loud: {type: string}
  receipt: {type: string}
tomes:
  post: {path: spells}
entry: shout
sigils:
  shout:
    spell: shout
    arguments: {text: "hello {{ to }}"}
    output: loud
    next: mail
  mail:
    spell: send_mail
    arguments: {to: "{{ to }}", body: "{{ loud }}"}
    output: receipt
    next: END
"""


def _project(root: Path) -> Path:
    for name, record in (("send_mail", True), ("shout", False)):
        folder = root / "spells" / "post" / name
        folder.mkdir(parents=True)
        (folder / "spell.py").write_text(SEND, encoding="utf-8")
        manifest = {"name": name, "entrypoint": f"spell.py:{name}", "record": record}
        (folder / "spell.json").write_text(json.dumps(manifest), encoding="utf-8")
    ritual = root / "mailer.yaml"
    ritual.write_text(RITUAL, encoding="utf-8")
    (root / ".git").mkdir()
    return ritual


def _run(ritual: Path, to: str, **options: Any) -> Any:
    return asyncio.run(api.run(ritual, {"to": to}, codex="memory:", **options).wait())


def test_a_recorded_spell_is_answered_from_the_cassette_on_replay(tmp_path: Path) -> None:
    ritual = _project(tmp_path)
    cassette = tmp_path / "mail.jsonl"
    recorded = _run(ritual, "ada", record=cassette)
    assert recorded.status == "done", recorded.error
    assert recorded.aether["receipt"] == "sent to ada"
    outbox = tmp_path / "outbox.jsonl"
    assert len(outbox.read_text(encoding="utf-8").splitlines()) == 1
    casts = [
        json.loads(line)
        for line in cassette.read_text(encoding="utf-8").splitlines()
        if '"kind": "spell"' in line or '"kind":"spell"' in line
    ]
    assert [(c["spell"], c["arguments"], c["result"]) for c in casts] == [
        ("send_mail", {"to": "ada", "body": "HELLO ADA"}, "sent to ada")
    ]  # shout is the code under test: it runs, it is not recorded

    outbox.unlink()
    replayed = _run(ritual, "ada", replay=cassette)
    assert replayed.status == "done", replayed.error
    assert replayed.aether == recorded.aether
    assert not outbox.exists()  # the outside system was never called


def test_other_arguments_on_replay_are_a_mismatch_naming_the_spell(tmp_path: Path) -> None:
    ritual = _project(tmp_path)
    cassette = tmp_path / "mail.jsonl"
    assert _run(ritual, "ada", record=cassette).status == "done"
    failed = _run(ritual, "bob", replay=cassette)
    assert failed.status == "failed"
    assert "cast 1 of spell 'send_mail' has other arguments" in failed.error
    assert '"to": "bob"' in failed.error


def test_a_recorded_failure_fails_the_replay_the_same_way(tmp_path: Path) -> None:
    ritual = _project(tmp_path)
    cassette = tmp_path / "mail.jsonl"
    first = _run(ritual, "nobody", record=cassette)
    assert first.status == "failed"
    again = _run(ritual, "nobody", replay=cassette)
    assert again.status == "failed"
    assert "LookupError: no such mailbox: nobody" in again.error


def test_the_python_api_wraps_only_marked_spells(tmp_path: Path) -> None:
    sent: list[str] = []

    @spell(record=True)
    def notify(who: str) -> str:
        """Notify someone."""
        sent.append(who)
        return f"told {who}"

    @spell
    def double(n: int) -> int:
        """Double a number."""
        return 2 * n

    path = tmp_path / "c.jsonl"
    recorder = CassetteRecorder(path)
    tome = recorded_tome(Tome([notify, double]), recorder)
    assert tome.get("double") is double
    assert tome.get("notify").schema() == notify.schema()
    assert asyncio.run(tome.get("notify").execute({"who": "ada"})) == "told ada"
    assert sent == ["ada"]

    player = CassettePlayer(path)
    replaying = recorded_spell(notify, player)
    assert asyncio.run(replaying.execute({"who": "ada"})) == "told ada"
    assert sent == ["ada"]  # answered from the cassette
    with pytest.raises(SpellExecutionError, match="was cast 2 time") as caught:
        asyncio.run(replaying.execute({"who": "ada"}))
    assert isinstance(caught.value.__cause__, CassetteMismatch)
    assert issubclass(ReplayedSpellError, Exception)
