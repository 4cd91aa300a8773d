"""MemoryCodex passes the conformance suite, plus what only a memory store shows."""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sanctum import END, START, Interrupt, Ritual, interrupt
from sanctum.codex import Codex, MemoryCodex
from sanctum.codex.base import Seal
from sanctum.errors import SealError
from tests.codex.conformance import CodexConformance, Reopen, make_seal


@pytest.fixture
async def codex() -> AsyncIterator[Codex]:
    store = MemoryCodex()
    yield store
    await store.aclose()


@pytest.fixture
def reopen() -> Reopen:
    return lambda codex: None


class TestMemoryConformance(CodexConformance):
    """The shared suite, on MemoryCodex (which keeps state JSON cannot hold)."""

    strict_json = False


async def test_rich_state_is_kept_as_deep_copies() -> None:
    codex = MemoryCodex()
    when = datetime.datetime(2026, 11, 30, 9, 0)
    aether: dict[str, Any] = {"when": when, "tags": {"a", "b"}, "log": [{"at": when}]}
    seal = make_seal(1, aether, metadata={"by": object.__name__, "at": when})
    await codex.put("inv", seal)
    aether["log"].append("later")  # the caller mutates after put
    got = await codex.get("inv")
    assert got is not None
    assert got.aether == {"when": when, "tags": {"a", "b"}, "log": [{"at": when}]}
    assert got.metadata["at"] == when
    got.aether["log"].append("reader")  # a reader mutates its copy
    again = await codex.get("inv")
    assert again is not None
    assert again.aether["log"] == [{"at": when}]
    summary = (await codex.invocations())[0]
    assert summary.metadata["at"] == when
    # plain Seals after a rich one are stored as JSON again
    await codex.put("inv", make_seal(2, {"n": 1}, parent=seal.seal_id))
    assert [s.superstep for s in await codex.list("inv")] == [1, 2]


async def test_a_run_with_rich_state_pauses_and_resumes_in_memory() -> None:
    stamp = datetime.date(2026, 11, 30)

    def ask(aether: dict[str, Any]) -> dict[str, Any]:
        if not aether.get("ok"):
            interrupt("approve?")
        return {"done": aether["day"]}

    rite = Ritual().add_sigil("ask", ask).add_edge(START, "ask").add_edge("ask", END)
    codex = MemoryCodex()
    compiled = rite.compile(codex=codex)
    with pytest.raises(Interrupt):
        await compiled.ainvoke({"day": stamp}, invocation_id="i")
    final = await compiled.ainvoke(invocation_id="i", updates={"ok": True})
    assert final["done"] == stamp


async def test_unusable_frontiers_are_still_refused() -> None:
    with pytest.raises(SealError):
        await MemoryCodex().put("inv", make_seal(1, frontier=("ok", 3)))  # type: ignore[arg-type]


async def test_two_memory_codices_share_nothing() -> None:
    one, two = MemoryCodex(), MemoryCodex()
    await one.put("inv", make_seal(1))
    assert await two.get("inv") is None


async def test_conversation_is_stored_as_a_chain_not_repeated() -> None:
    codex = MemoryCodex()
    messages: list[dict[str, str]] = []
    prev: str | None = None
    for step in range(1, 201):
        messages.append({"content": f"message {step:04d} " + "x" * 100})
        seal = make_seal(step, {"messages": list(messages)}, parent=prev)
        await codex.put_next("inv", seal, expected_latest=prev)
        prev = seal.seal_id
    # Every stored node after the first holds exactly one new message.
    bodies = [body for _prev, body in codex._rows.values()]
    assert sum(len(body) for body in bodies) < 2 * sum(len(str(m)) for m in messages)
    history = await codex.list("inv")
    assert [len(s.aether["messages"]) for s in history] == list(range(1, 201))
    assert history[-1].aether["messages"] == messages


def _in_step(codex: MemoryCodex, invocation_id: str) -> list[str]:
    """The history's seal ids, after checking the seal_id index holds exactly them."""
    history = codex._histories.get(invocation_id, [])
    index = codex._by_id.get(invocation_id, {})
    assert list(index) == [entry.seal_id for entry in history]
    assert all(index[entry.seal_id] is entry for entry in history)
    return list(index)


async def test_the_seal_id_index_stays_in_step_with_the_history_after_refusals() -> None:
    codex = MemoryCodex()
    first = make_seal(1)
    await codex.put("inv", first)
    rich = make_seal(2, {"when": datetime.date(2026, 1, 1)}, parent=first.seal_id)
    await codex.put("inv", rich)
    assert _in_step(codex, "inv") == [first.seal_id, rich.seal_id]
    again = make_seal(3, parent=rich.seal_id)
    duplicate = Seal(again.aether, again.frontier, 3, metadata={}, seal_id=first.seal_id)
    with pytest.raises(SealError, match="already holds seal") as info:
        await codex.put("inv", duplicate)
    assert info.value.seal_id == first.seal_id
    assert info.value.invocation_id == "inv"
    rich_duplicate = Seal({"s": {1}}, (), 3, seal_id=rich.seal_id)
    with pytest.raises(SealError, match="already holds seal"):
        await codex.put("inv", rich_duplicate)
    with pytest.raises(SealError):  # another writer appended first
        await codex.put_next("inv", again, expected_latest=first.seal_id)
    with pytest.raises(SealError, match="seal_id must be a non-empty string"):
        await codex.put("inv", Seal({"s": {1}}, (), 3, seal_id=""))
    assert _in_step(codex, "inv") == [first.seal_id, rich.seal_id]
    await codex.put_next("inv", again, expected_latest=rich.seal_id)
    assert _in_step(codex, "inv") == [first.seal_id, rich.seal_id, again.seal_id]
    # the same seal_id in another invocation is another history's business
    await codex.put("other", Seal({}, (), 1, seal_id=first.seal_id))
    assert _in_step(codex, "other") == [first.seal_id]
    assert (await codex.get_seal("inv", again.seal_id)) is not None
    assert (await codex.get_seal("inv", "missing")) is None


class _Unscannable(list[Any]):
    """A history that fails the test if anything walks through it."""

    def __iter__(self) -> Any:
        raise AssertionError("the whole history was scanned")

    def __reversed__(self) -> Any:
        raise AssertionError("the whole history was scanned")


async def test_writing_and_looking_up_by_seal_id_never_scan_the_history() -> None:
    codex = MemoryCodex()
    seals = [make_seal(1)]
    await codex.put("inv", seals[0])
    codex._histories["inv"] = _Unscannable(codex._histories["inv"])
    for step in range(2, 6):
        seals.append(make_seal(step, {"n": step}, parent=seals[-1].seal_id))
        await codex.put_next("inv", seals[-1], expected_latest=seals[-2].seal_id)
    with pytest.raises(SealError, match="already holds seal"):
        await codex.put("inv", Seal({}, (), 9, seal_id=seals[2].seal_id))
    # a Seal continuing from an older one (time travel) finds its parent by id
    await codex.put("inv", make_seal(3, {"n": 30}, parent=seals[1].seal_id))
    found = await codex.get_seal("inv", seals[3].seal_id)
    assert found is not None
    assert found.aether == {"n": 4}
    assert len(codex._histories["inv"]) == 6
