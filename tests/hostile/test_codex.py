"""Hostile input for the Codices: hand-edited Seals, foreign and broken files, odd ids."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sanctum import END, Ritual, SealError
from sanctum.codex import MemoryCodex, SqliteCodex
from tests.codex.conformance import make_seal


def _dump(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


async def _sealed_history(path: Path) -> list[str]:
    codex = SqliteCodex(path)
    prev: str | None = None
    ids = []
    for step in range(1, 4):
        messages = [f"message {i} " + "m" * 300 for i in range(step)]
        seal = make_seal(step, {"messages": messages, "n": f"{step} " + "n" * 300}, parent=prev)
        await codex.put_next("victim", seal, expected_latest=prev)
        prev = seal.seal_id
        ids.append(seal.seal_id)
    await codex.aclose()
    return ids


EDITS: dict[str, str] = {
    "metadata": "UPDATE sanctum_seals SET metadata = '{not json' WHERE seal_id = :sid",
    "metadata-list": "UPDATE sanctum_seals SET metadata = '[1, 2]' WHERE seal_id = :sid",
    "frontier": "UPDATE sanctum_seals SET frontier = '\"think\"' WHERE seal_id = :sid",
    "frontier-numbers": "UPDATE sanctum_seals SET frontier = '[1, 2]' WHERE seal_id = :sid",
    "aether": "UPDATE sanctum_seals SET aether = 'garbage' WHERE seal_id = :sid",
    "aether-refs": 'UPDATE sanctum_seals SET aether = \'{"n": "x"}\' WHERE seal_id = :sid',
    "aether-inline": "UPDATE sanctum_seals SET aether = '{\"n\": [1, 2]}' WHERE seal_id = :sid",
    "missing-value": "UPDATE sanctum_seals SET aether = '{\"n\": 999999}' WHERE seal_id = :sid",
    "superstep": "UPDATE sanctum_seals SET superstep = 'abc' WHERE seal_id = :sid",
    "timestamp": "UPDATE sanctum_seals SET timestamp = 'yesterday' WHERE seal_id = :sid",
    "value-body": (
        "UPDATE sanctum_values SET body = '{{{' WHERE id = "
        "(SELECT json_extract(aether, '$.n') FROM sanctum_seals WHERE seal_id = :sid)"
    ),
    "value-loop": (
        "UPDATE sanctum_values SET prev = id WHERE id = "
        "(SELECT json_extract(aether, '$.messages') FROM sanctum_seals WHERE seal_id = :sid)"
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
async def test_hand_edited_seal_names_invocation_and_seal(tmp_path: Path, edit: str) -> None:
    path = tmp_path / "codex.db"
    ids = await _sealed_history(path)
    db = sqlite3.connect(path)
    db.execute(EDITS[edit], {"sid": ids[-1]})
    db.commit()
    db.close()
    before = _dump(path)
    codex = SqliteCodex(path)
    for read in (codex.get("victim"), codex.list("victim"), codex.get_seal("victim", ids[-1])):
        with pytest.raises(SealError) as caught:
            await read
        message = str(caught.value)
        assert "victim" in message
        assert ids[-1] in message
        assert str(path) in message
        assert caught.value.seal_id == ids[-1]
    # Intact Seals stay readable, and nothing was rewritten.
    intact = await codex.get_seal("victim", ids[0])
    assert intact is not None
    assert intact.aether == {"messages": ["message 0 " + "m" * 300], "n": "1 " + "n" * 300}
    await codex.aclose()
    assert _dump(path) == before


def _cycle(codex: Any) -> Any:
    ritual = Ritual()
    ritual.add_sigil("think", lambda a: {"n": a["n"] + 1})
    ritual.set_entry_point("think")
    ritual.add_conditional_edge("think", lambda a: "think" if a["n"] < 5 else END)
    return ritual.compile(codex=codex)


async def test_resuming_a_damaged_seal_fails_clearly_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    codex = SqliteCodex(path)
    rite = _cycle(codex)
    await rite.ainvoke({"n": 0}, invocation_id="run")
    history = await codex.list("run")
    db = sqlite3.connect(path)
    db.execute(
        "UPDATE sanctum_seals SET metadata = 'nonsense' WHERE seal_id = ?",
        (history[-1].seal_id,),
    )
    db.commit()
    db.close()
    await codex.aclose()
    before = _dump(path)
    fresh = SqliteCodex(path)
    with pytest.raises(SealError) as caught:
        await _cycle(fresh).ainvoke(invocation_id="run")
    assert "run" in str(caught.value)
    assert history[-1].seal_id in str(caught.value)
    await fresh.aclose()
    assert _dump(path) == before


async def test_frontier_naming_a_vanished_sigil(tmp_path: Path) -> None:
    codex = SqliteCodex(tmp_path / "codex.db")
    seal = make_seal(3, {"n": 1}, frontier=("ghost",))
    await codex.put("run", seal)
    with pytest.raises(SealError) as caught:
        await _cycle(codex).ainvoke(invocation_id="run")
    assert "run" in str(caught.value)
    assert seal.seal_id in str(caught.value)
    assert "ghost" in str(caught.value)
    assert [s.seal_id for s in await codex.list("run")] == [seal.seal_id]
    await codex.aclose()


BROKEN_FILES: dict[str, Callable[[Path], object]] = {
    "random bytes": lambda p: p.write_bytes(bytes(range(256)) * 64),
    "text file": lambda p: p.write_text("name,price\ntea,3\n" * 100),
    "sqlite header only": lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_FILES))
async def test_broken_file_is_named_and_left_alone(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "codex.db"
    BROKEN_FILES[kind](path)
    before = path.read_bytes()
    codex = SqliteCodex(path)
    for attempt in (codex.put("inv", make_seal(1)), codex.get("inv"), codex.invocations()):
        with pytest.raises(SealError) as caught:
            await attempt
        assert str(path) in str(caught.value)
        assert caught.value.location == str(path)
    await codex.aclose()
    assert path.read_bytes() == before


async def test_truncated_codex_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    codex = SqliteCodex(path)
    for step in range(1, 40):
        await codex.put("inv", make_seal(step, {"blob": "x" * 3000, "step": step}))
    await codex.aclose()
    sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(SealError) as caught:
        await SqliteCodex(path).list("inv")
    assert str(path) in str(caught.value)


async def test_empty_file_becomes_a_codex(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    path.write_bytes(b"")
    codex = SqliteCodex(path)
    await codex.put("inv", make_seal(1))
    assert len(await codex.list("inv")) == 1
    await codex.aclose()


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_hostile_ids_and_keys_are_plain_data(tmp_path: Path, store: str) -> None:
    codex = MemoryCodex() if store == "memory" else SqliteCodex(tmp_path / "codex.db")
    nasty = "'; DROP TABLE sanctum_seals; --"
    aether = {nasty: nasty, "$.n": [nasty], "{}": {"\\": "\u2028"}}
    seal = make_seal(1, aether, frontier=(nasty,))
    await codex.put(nasty, seal)
    got = await codex.get(nasty)
    assert got is not None
    assert got.aether == aether
    assert got.frontier == (nasty,)
    assert (await codex.invocations())[0].invocation_id == nasty
    await codex.aclose()


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_absurdly_deep_state_is_refused_not_crashed(tmp_path: Path, store: str) -> None:
    codex = MemoryCodex() if store == "memory" else SqliteCodex(tmp_path / "codex.db")
    deep: list[Any] = []
    for _ in range(50_000):
        deep = [deep]
    with pytest.raises(SealError) as caught:
        await codex.put("inv", make_seal(1, {"deep": deep}, writers={"deep": ["digger"]}))
    assert "digger" in str(caught.value)
    assert "nested deeper" in str(caught.value)
    assert await codex.get("inv") is None
    await codex.aclose()
