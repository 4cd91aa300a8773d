"""The stored layout (sanctum.codex._layout): linear storage, packs, bounded loads and
damage that stays local — checked on real SQLite files by counting rows and bytes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sanctum.codex import Seal, SealError, SqliteCodex
from sanctum.codex._layout import PACK_LINKS
from sanctum.codex._stored import Values
from tests.codex.long_history import chain, transcript

TURNS = 4 * PACK_LINKS + 9


def big_message(turn: int) -> dict[str, Any]:
    """About 1 KB of chat text, distinct per turn."""
    words = " ".join(f"w{(turn * 7 + i) % 97}" for i in range(250))
    return {"role": "user", "content": words[:1000], "turn": turn}


def payload(messages: list[Any]) -> int:
    return sum(len(json.dumps(m, separators=(",", ":"))) for m in messages)


def stored_bytes(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT sum(length(body)) FROM sanctum_values").fetchone()[0])


def seal_refs(path: Path) -> dict[str, dict[str, Any]]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT seal_id, aether FROM sanctum_seals ORDER BY key").fetchall()
    return {seal_id: json.loads(aether) for seal_id, aether in rows}


def packs(path: Path) -> set[int]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT id FROM sanctum_values WHERE typeof(body) = 'blob'")
        return {row[0] for row in rows}


@pytest.fixture
async def codex(tmp_path: Path) -> Any:
    store = SqliteCodex(tmp_path / "codex.db")
    yield store
    await store.aclose()


async def test_a_transcript_costs_its_payload_not_its_square(codex: SqliteCodex) -> None:
    messages: list[Any] = []
    states = []
    for turn in range(TURNS):
        messages = [*messages, big_message(turn)]
        states.append({"messages": messages})
    await chain(codex, "t", states)
    # each message once in a link, once more (deflated) in a pack
    assert stored_bytes(codex.path) < 1.5 * payload(messages)
    assert len(packs(codex.path)) >= TURNS // PACK_LINKS - 1


async def test_a_nested_transcript_and_a_growing_string_stay_linear(
    codex: SqliteCodex,
) -> None:
    messages: list[Any] = []
    log = ""
    states = []
    for turn in range(TURNS):
        messages = [*messages, big_message(turn)]
        log += big_message(turn)["content"] + "\n"
        states.append({"chat": {"title": "t", "messages": messages}, "log": log})
    await chain(codex, "n", states)
    assert stored_bytes(codex.path) < 1.5 * (payload(messages) + len(log))
    latest = await codex.get("n")
    assert latest is not None
    assert dict(latest.aether) == states[-1]


async def test_loading_the_latest_reads_one_row_per_pack_and_the_last_run(
    codex: SqliteCodex, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = await chain(codex, "r", [{"messages": m} for m in _growing(TURNS)])
    read: list[int] = []
    text: list[int] = []
    original = SqliteCodex._rows

    def counting(self: SqliteCodex, db: sqlite3.Connection, ids: Any) -> Any:
        rows = original(self, db, ids)
        read.append(len(rows))
        text.append(sum(len(body) for _id, _prev, body in rows))
        return rows

    monkeypatch.setattr(SqliteCodex, "_rows", counting)
    fresh = SqliteCodex(codex.path)
    try:
        latest = await fresh.get("r")
    finally:
        await fresh.aclose()
    assert latest is not None
    assert latest.aether == written[-1].aether
    assert sum(read) <= TURNS // PACK_LINKS + PACK_LINKS + 2
    state = len(json.dumps(latest.aether["messages"], separators=(",", ":")))
    assert sum(text) < 1.1 * state  # every byte decoded once, none of the history twice


async def test_a_damaged_link_spoils_only_its_own_run(codex: SqliteCodex) -> None:
    written = await chain(codex, "d", [{"messages": m} for m in _growing(TURNS)])
    refs = seal_refs(codex.path)
    pack_rows = packs(codex.path)
    at_pack = [
        i
        for i, seal in enumerate(written)
        if isinstance(refs[seal.seal_id]["messages"], int)
        and refs[seal.seal_id]["messages"] in pack_rows
    ]
    first, second = at_pack[0], at_pack[1]
    victim = first + 5
    with sqlite3.connect(codex.path) as db:
        db.execute(
            "UPDATE sanctum_values SET body = 'not json at all' WHERE id = ?",
            (refs[written[victim].seal_id]["messages"],),
        )
    fresh = SqliteCodex(codex.path)
    try:
        for index in (0, first, victim - 1, second, second + 3, len(written) - 1):
            seal = await fresh.get_seal("d", written[index].seal_id)
            assert seal is not None
            assert seal.aether == written[index].aether
        for index in (victim, victim + 1, second - 1):
            with pytest.raises(SealError) as caught:
                await fresh.get_seal("d", written[index].seal_id)
            message = str(caught.value)
            assert written[index].seal_id in message
            assert "'d'" in message
            assert str(codex.path) in message
            assert "'messages'" in message
    finally:
        await fresh.aclose()


async def test_a_pack_that_no_longer_inflates_is_reported(codex: SqliteCodex) -> None:
    written = await chain(codex, "p", [{"messages": m} for m in _growing(2 * PACK_LINKS)])
    pack = min(packs(codex.path))
    with sqlite3.connect(codex.path) as db:
        db.execute("UPDATE sanctum_values SET body = x'00ff00ff' WHERE id = ?", (pack,))
    fresh = SqliteCodex(codex.path)
    try:
        assert (await fresh.get_seal("p", written[3].seal_id)) is not None
        with pytest.raises(SealError, match=r"value .* cannot be read: value \d+ is unreadable"):
            await fresh.get("p")
    finally:
        await fresh.aclose()


def test_values_rebuild_fresh_objects_each_time() -> None:
    values = Values([(1, None, '[{"a":1}]'), (2, 1, '{"b":2}')])
    one, two = values.load(2), values.load(2)
    assert one.obj == two.obj == [{"a": 1}, {"b": 2}]
    assert one.obj is not two.obj
    assert one.obj[0] is not two.obj[0]


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([(2, 1, '{"b":2}')], "value 1 is missing"),
        ([(1, 2, "1"), (2, 1, "2")], "loops back on itself"),
        ([(1, None, '"text"'), (2, 1, '{"b":2}')], "mixes text and list links"),
        ([(1, None, "[1]"), (2, 1, "\x01abc")], "mixes list and text links"),
        ([(1, None, "{}"), (2, 1, "3")], "not a list or text"),
    ],
)
def test_values_name_what_is_wrong(rows: list[tuple[int, Any, str]], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Values(rows).load(2)


def _growing(turns: int) -> list[list[Any]]:
    return [state["messages"] for state in transcript(turns)]


async def test_a_seal_written_by_another_object_is_chained_to(tmp_path: Path) -> None:
    """A resume in a fresh process: the parent is loaded, then the new Seal chains to
    its rows instead of storing the transcript again."""
    path = tmp_path / "codex.db"
    first = SqliteCodex(path)
    states = [{"messages": m} for m in _growing(120)]
    written = await chain(first, "x", states)
    await first.aclose()
    before = stored_bytes(path)
    second = SqliteCodex(path)
    try:
        latest = await second.get("x")
        assert latest is not None
        grown = {"messages": [*latest.aether["messages"], {"role": "user", "content": "more"}]}
        seal = Seal(
            aether=grown,
            frontier=("talk",),
            superstep=121,
            metadata={"parent": written[-1].seal_id},
        )
        await second.put_next("x", seal, expected_latest=written[-1].seal_id)
    finally:
        await second.aclose()
    assert stored_bytes(path) - before < 100


@pytest.mark.parametrize(
    ("column", "text", "problem"),
    [
        ("metadata", '{"joins": 5}', "its metadata 'joins' is 5"),
        ("metadata", '{"parent": 7}', "its metadata 'parent' is 7"),
        ("metadata", '{"writers": {"x": "not a list"}}', "its metadata 'writers'"),
        ("metadata", '{"interrupt": "pause"}', "its metadata 'interrupt'"),
        ("metadata", '{"n": 1e999}', "its metadata is not a JSON object"),
        ("frontier", '"a"', "its frontier is not a JSON list"),
    ],
)
async def test_hand_edited_fields_are_seal_errors(
    codex: SqliteCodex, column: str, text: str, problem: str
) -> None:
    written = await chain(codex, "h", [{"messages": m} for m in _growing(3)])
    with sqlite3.connect(codex.path) as db:
        db.execute(
            f"UPDATE sanctum_seals SET {column} = ? WHERE seal_id = ?", (text, written[1].seal_id)
        )
    fresh = SqliteCodex(codex.path)
    try:
        with pytest.raises(SealError, match=problem) as caught:
            await fresh.get_seal("h", written[1].seal_id)
        assert written[1].seal_id in str(caught.value)
        marked = [seal async for seal in fresh.history("h", values=False, on_damage="mark")]
        assert [seal.seal_id for seal in marked] == [seal.seal_id for seal in written]
        assert problem.split(" is ")[0] in marked[1].metadata["damaged"]
        assert "damaged" not in marked[0].metadata
        assert "damaged" not in marked[2].metadata
        with pytest.raises(SealError):
            [seal async for seal in fresh.history("h")]
    finally:
        await fresh.aclose()


async def test_an_out_of_range_number_in_a_value_is_a_seal_error(codex: SqliteCodex) -> None:
    written = await chain(codex, "f", [{"x": [2.5] * 200}])
    with sqlite3.connect(codex.path) as db:
        db.execute("UPDATE sanctum_values SET body = replace(body, '2.5', '1e999')")
    fresh = SqliteCodex(codex.path)
    try:
        with pytest.raises(SealError, match="1e999 is out of range"):
            await fresh.get_seal("f", written[0].seal_id)
    finally:
        await fresh.aclose()


async def test_a_damaged_aether_column_is_marked_in_a_listing(codex: SqliteCodex) -> None:
    written = await chain(codex, "col", [{"messages": m} for m in _growing(4)])
    with sqlite3.connect(codex.path) as db:
        db.execute(
            "UPDATE sanctum_seals SET aether = 'not refs' WHERE seal_id = ?",
            (written[2].seal_id,),
        )
    fresh = SqliteCodex(codex.path)
    try:
        marked = [seal async for seal in fresh.history("col", on_damage="mark")]
    finally:
        await fresh.aclose()
    assert [seal.seal_id for seal in marked] == [seal.seal_id for seal in written]
    assert "aether column" in marked[2].metadata["damaged"]
    assert marked[3].aether == written[3].aether
