"""MemoryCodex passes the conformance suite, plus what only a memory store shows."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sanctum.codex import Codex, MemoryCodex
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
    """The shared suite, on MemoryCodex."""


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
    bodies = [entry.values["messages"].body for entry in codex._histories["inv"]]
    assert sum(len(body) for body in bodies) < 2 * sum(len(str(m)) for m in messages)
    history = await codex.list("inv")
    assert [len(s.aether["messages"]) for s in history] == list(range(1, 201))
    assert history[-1].aether["messages"] == messages
