"""A careful attacker's routes for four secrets: none of them shows anywhere.

The secrets: a value read through ``${...}`` (its name looks harmless), an API key, a
token matched only by a ``redact:`` pattern, and — in the PostgreSQL tests of
test_secret_routes.py — a codex URL's password. The routes: exception chains whose
``__str__``/``__repr__`` read attributes, bytes and nested dict keys written through a
writer, a Circle's and a scatter's inner runs, tokens split across chunks, the trace
and its HTML, ``invocations --json``, ``seals --json --values``, the SQLite files
(WAL included) and a failing Ward.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import traceback
import zlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from sanctum import END, Ritual
from sanctum.codex.sqlite import SqliteCodex
from sanctum.grimoire.sigils import oracle_sigil
from sanctum.omens import TokenEmitted
from sanctum.oracle.base import Message, Oracle, OracleResponse
from sanctum.wards.base import Ward
from sanctum.wards.secrets import MaskedException, Secrets
from tests.cli.helpers import invoke, sanctum

ENV_VALUE = "envSECRET-0b7d1f2a9c"
API_KEY = "sk-live-KEYKEYKEY1234567"
PATTERNED = "tok-12345678"
SECRETS = (ENV_VALUE, API_KEY, PATTERNED)

STEPS = '''
import os


class Custom(Exception):
    """Its text is built from an attribute, not from its args."""

    def __init__(self, token):
        super().__init__("custom")
        self.token = token

    def __str__(self):
        return f"custom says {self.token} {os.environ['BANNER']}"

    def __repr__(self):
        return f"Custom({self.token!r}, {os.environ['CLOUD_KEY']!r})"


def chained(aether):
    try:
        raise KeyError(f"inner {aether['token']} {os.environ['BANNER']}")
    except KeyError as exc:
        raise Custom(aether["token"]) from exc


def shapes(aether, writer):
    writer({"nested": {aether["token"]: os.environ["BANNER"]}})
    writer(os.environ["CLOUD_KEY"].encode())
    return {
        "blob": repr(os.environ["BANNER"].encode()),
        "nested": {aether["token"]: {os.environ["BANNER"]: [os.environ["CLOUD_KEY"]]}},
    }


def item(aether):
    return {"v": aether["it"] + " " + os.environ["BANNER"]}


def item_fail(aether):
    raise Custom(aether["it"])
'''

INNER = """\
sanctum: 1
name: inner
inputs:
  token: {type: string}
aether:
  blob: {}
  nested: {}
entry: s
sigils:
  s:
    call: attack_steps:shapes
    next: END
"""

RITUAL = """\
sanctum: 1
name: attack
inputs:
  token: {type: string}
aether:
  blob: {}
  nested: {}
  out: {}
  items: {default: []}
  banner: {default: ""}
oracles:
  cloud: {provider: openai, model: m, base_url: "http://127.0.0.1:9/v1", api_key: "${CLOUD_KEY}"}
entry: stamp
sigils:
  stamp:
    set: {banner: "'${BANNER}'", items: "[token, '${BANNER}']"}
    next: shapes
  shapes:
    call: attack_steps:shapes
    next: inner
  inner:
    circle: inner.yaml
    next: spread
  spread:
    scatter: {over: "items", item: it, into: out, sigil: {call: "attack_steps:item"}}
    next: chained
  chained:
    call: attack_steps:chained
    policy: {retries: 1, backoff: {base: 0.01, cap: 0.01}, on_error: spread_fail}
    next: END
  spread_fail:
    scatter: {over: "items", item: it, into: out, sigil: {call: "attack_steps:item_fail"}}
    next: END
wards:
  - redact: {patterns: ['tok-[0-9]{8}']}
  - audit: {path: audit.jsonl}
"""

ENV = {"BANNER": ENV_VALUE, "CLOUD_KEY": API_KEY}


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def _sqlite_text(folder: Path) -> str:
    """Every row of every SQLite file under ``folder``, packs inflated where they are."""
    texts: list[str] = []
    for path in folder.rglob("*.db"):
        with sqlite3.connect(path) as db:
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
            for table in tables:
                try:
                    rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
                except sqlite3.DatabaseError:
                    continue
                for row in rows:
                    for cell in row:
                        if isinstance(cell, bytes):
                            try:
                                cell = zlib.decompress(cell)
                            except zlib.error:
                                pass
                            texts.append(cell.decode("utf-8", "replace"))
                        else:
                            texts.append(str(cell))
    for path in folder.rglob("*"):  # the raw files too, a WAL or journal beside them
        if path.is_file() and (".db" in path.name or path.suffix in (".wal", ".shm")):
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def test_the_attackers_routes_through_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "attack_steps.py").write_text(STEPS, encoding="utf-8")
    (tmp_path / "inner.yaml").write_text(INNER, encoding="utf-8")
    ritual = tmp_path / "attack.yaml"
    ritual.write_text(RITUAL, encoding="utf-8")
    shown: list[str] = []
    base = ["run", str(ritual), "-i", f"token={PATTERNED}", "--stream", "omens,tokens,updates"]
    for index, extra in enumerate((["--json"], [], ["--json", "--stream", "values"])):
        done = sanctum(
            [*base, "--invocation", f"a{index}", "--trace", f"t{index}.json", *extra],
            tmp_path,
            env=ENV,
        )
        assert done.returncode == 1, done.stderr
        shown += [done.stdout, done.stderr]
    debug = sanctum(["--debug", *base, "--invocation", "a3"], tmp_path, env=ENV)
    shown += [debug.stdout, debug.stderr]
    assert "custom says [REDACTED] [REDACTED]" in shown[1]
    listing = invoke(["invocations", "--json"], tmp_path)
    shown.append(listing.stdout)
    for index in range(4):
        seals = invoke(["seals", "--invocation", f"a{index}", "--json", "--values"], tmp_path)
        assert seals.exit_code == 0, seals.output
        shown.append(seals.stdout)
        shown.append(invoke(["seals", "--invocation", f"a{index}"], tmp_path).stdout)
    for index in range(3):
        rendered = invoke(["trace", "render", f"t{index}.json"], tmp_path)
        assert rendered.exit_code == 0, rendered.output
        shown.append(invoke(["trace", "show", f"t{index}.json", "--all"], tmp_path).stdout)
    text = "\n".join(shown)
    for index, piece in enumerate(shown):
        assert _leaks(piece) == [], (index, piece[:3000])
    assert "[REDACTED]" in text
    assert "__errors__" in text  # the on_error route was taken
    assert _leaks(text) == []
    files = "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in tmp_path.rglob("*")
        if path.is_file() and path.suffix in (".json", ".jsonl", ".html")
    )
    assert "[REDACTED]" in files
    assert _leaks(files) == []
    assert _leaks(_sqlite_text(tmp_path)) == []


class _Custom(Exception):
    def __init__(self, token: str) -> None:
        super().__init__("custom")
        self.token = token

    def __str__(self) -> str:
        return f"custom says {self.token}"

    def __repr__(self) -> str:
        return f"_Custom({self.token!r})"


def _chained(aether: Mapping[str, Any]) -> dict[str, Any]:
    try:
        raise _Custom(API_KEY)
    except _Custom as exc:
        raise ValueError(f"outer {ENV_VALUE}") from exc


def test_a_traceback_of_a_chain_shows_no_secret_and_keeps_its_shape() -> None:
    ritual = Ritual()
    ritual.add_sigil("a", _chained)
    ritual.set_entry_point("a")
    ritual.add_edge("a", END)
    rite = ritual.compile(secrets=Secrets([ENV_VALUE, API_KEY]))
    with pytest.raises(Exception) as caught:
        rite.invoke({})
    printed = "".join(traceback.format_exception(caught.value))
    assert _leaks(printed) == []
    assert "custom says [REDACTED]" in printed
    assert "ValueError: outer [REDACTED]" in printed
    outer = caught.value.__cause__
    assert isinstance(outer, ValueError)
    stand_in = outer.__cause__
    assert isinstance(stand_in, MaskedException)
    assert type(stand_in).__name__ == "_Custom"
    assert stand_in.original_type.endswith("_Custom")
    assert stand_in.__traceback__ is not None


def test_a_clean_chain_is_left_as_it_is() -> None:
    secrets = Secrets([ENV_VALUE])
    try:
        try:
            raise KeyError("clean")
        except KeyError as inner:
            raise RuntimeError("outer") from inner
    except RuntimeError as error:
        cause = error.__cause__
        secrets.mask_chain(error)
        assert error.__cause__ is cause


class _Split(Oracle):
    """A model that spells secrets over several chunks."""

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        return OracleResponse(text="unused")

    async def stream_generate(  # type: ignore[override]  # an async generator is one
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        for chunk in [
            "key is envSEC",
            "RET-0b7d",
            "1f2a9c ok",
            " tok-1234",
            "5678 and sk-",
            "live-KEYKEY",
        ]:
            yield chunk
        yield "KEY1234567 end"


@pytest.mark.parametrize("given", [True, False], ids=["sigil-secrets", "rite-secrets"])
def test_a_secret_split_across_streamed_chunks_never_shows(tmp_path: Path, given: bool) -> None:
    secrets = Secrets([ENV_VALUE, API_KEY], [r"tok-[0-9]{8}"])
    ritual = Ritual()
    ritual.add_sigil("say", oracle_sigil(_Split(), "hi", "out", secrets=secrets if given else None))
    ritual.set_entry_point("say")
    ritual.add_edge("say", END)
    rite = ritual.compile(secrets=secrets, codex=SqliteCodex(tmp_path / "c.db"))

    async def tokens() -> list[str]:
        seen = []
        async for omen in rite.astream({}, mode={"tokens"}, invocation_id="s"):
            assert isinstance(omen, TokenEmitted)
            seen.append(omen.payload)
        return seen

    seen = asyncio.run(tokens())
    joined = "".join(seen)
    assert joined == "key is [REDACTED] ok [REDACTED] and [REDACTED] end"
    assert _leaks(joined) == []


class _FailingWard(Ward):
    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        raise RuntimeError(f"ward saw {dict(delta)!r} and {ENV_VALUE}")


def _leaky_step(aether: Mapping[str, Any]) -> dict[str, Any]:
    return {"x": f"value {PATTERNED} {API_KEY}", b"k".decode(): {ENV_VALUE: [API_KEY]}}


def test_a_failing_ward_and_nested_keys_show_no_secret(tmp_path: Path) -> None:
    secrets = Secrets([ENV_VALUE, API_KEY], [r"tok-[0-9]{8}"])
    ritual = Ritual()
    ritual.add_sigil("a", _leaky_step)
    ritual.set_entry_point("a")
    ritual.add_edge("a", END)
    codex = SqliteCodex(tmp_path / "w.db")
    failing = ritual.compile(secrets=secrets, wards=[_FailingWard()], codex=codex)
    with pytest.raises(Exception) as caught:
        failing.invoke({}, invocation_id="w")
    printed = "".join(traceback.format_exception(caught.value)) + repr(caught.value)
    assert _leaks(printed) == []
    clean = ritual.compile(secrets=secrets, codex=codex)
    final = clean.invoke({}, invocation_id="ok")
    assert final == {"x": "value [REDACTED] [REDACTED]", "k": {"[REDACTED]": ["[REDACTED]"]}}
    seals = asyncio.run(codex.list("ok"))
    assert _leaks(json.dumps([repr(s) for s in seals])) == []
    asyncio.run(codex.aclose())
    assert _leaks(_sqlite_text(tmp_path)) == []
