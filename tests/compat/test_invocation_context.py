"""A Sigil that declares ``invocation`` receives an InvocationContext per activation."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from sanctum import END, InvocationContext, Ritual, interrupt
from sanctum.codex import MemoryCodex


def test_the_context_is_a_frozen_pair() -> None:
    here = InvocationContext("run-1", 3)
    assert here.invocation_id == "run-1"
    assert here.superstep == 3
    assert here == InvocationContext(invocation_id="run-1", superstep=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        here.superstep = 4  # type: ignore[misc]


async def test_each_activation_gets_its_invocation_and_superstep() -> None:
    seen: list[InvocationContext] = []

    def chant(aether: dict[str, Any], invocation: InvocationContext) -> dict[str, Any]:
        seen.append(invocation)
        return {"count": aether["count"] + 1}

    ritual = Ritual()
    ritual.add_sigil("chant", chant)
    ritual.add_conditional_edge("chant", lambda a: "chant" if a["count"] < 3 else END)
    ritual.set_entry_point("chant")
    final = await ritual.compile().ainvoke({"count": 0}, invocation_id="vigil")

    assert final == {"count": 3}
    assert seen == [InvocationContext("vigil", n) for n in (1, 2, 3)]


async def test_writer_and_invocation_together_in_either_order() -> None:
    got: dict[str, Any] = {}

    async def first(aether: dict[str, Any], writer: Any, invocation: Any) -> dict[str, Any]:
        await writer(f"first@{invocation.superstep}")
        got["first"] = invocation
        return {}

    def second(aether: dict[str, Any], invocation: Any, writer: Any) -> dict[str, Any]:
        writer(f"second@{invocation.superstep}")
        got["second"] = invocation
        return {}

    def third(aether: dict[str, Any], *, invocation: InvocationContext) -> dict[str, Any]:
        got["third"] = invocation
        return {"done": True}

    ritual = Ritual()
    ritual.add_sigil("first", first).add_sigil("second", second).add_sigil("third", third)
    ritual.set_entry_point("first")
    ritual.add_edge("first", "second").add_edge("second", "third").add_edge("third", END)
    rite = ritual.compile()
    stream = rite.astream({}, invocation_id="i", mode="tokens")
    tokens = [o.token async for o in stream]  # type: ignore[attr-defined]

    assert tokens == ["first@1", "second@2"]
    assert [got[k].superstep for k in ("first", "second", "third")] == [1, 2, 3]
    assert {got[k].invocation_id for k in got} == {"i"}


async def test_a_generated_invocation_id_reaches_the_sigil() -> None:
    seen: list[str] = []

    def note(aether: dict[str, Any], invocation: InvocationContext) -> dict[str, Any]:
        seen.append(invocation.invocation_id)
        return {}

    ritual = Ritual().add_sigil("note", note).set_entry_point("note").add_edge("note", END)
    await ritual.compile().ainvoke({})
    assert len(seen) == 1
    assert len(seen[0]) == 32  # uuid4 hex


async def test_superstep_keeps_counting_after_a_resume() -> None:
    seen: list[int] = []

    def ask(aether: dict[str, Any], invocation: InvocationContext) -> dict[str, Any]:
        seen.append(invocation.superstep)
        if "answer" not in aether:
            interrupt("what is the answer?")
        return {"heard": aether["answer"]}

    ritual = Ritual()
    ritual.add_sigil("warm", lambda a: {"warm": True})
    ritual.add_sigil("ask", ask)
    ritual.set_entry_point("warm")
    ritual.add_edge("warm", "ask").add_edge("ask", END)
    rite = ritual.compile(codex=MemoryCodex())
    with pytest.raises(Exception, match="what is the answer"):
        await rite.ainvoke({}, invocation_id="q")
    final = await rite.ainvoke(invocation_id="q", updates={"answer": 42})

    assert final["heard"] == 42
    assert seen == [2, 2]


def test_a_child_run_id_derived_from_the_context_is_stable() -> None:
    """The original's Circles derived stable child ids this way."""
    children: list[str] = []

    def spawn(aether: dict[str, Any], invocation: InvocationContext) -> dict[str, Any]:
        children.append(f"{invocation.invocation_id}/child/{invocation.superstep}")
        return {}

    ritual = Ritual().add_sigil("spawn", spawn).set_entry_point("spawn").add_edge("spawn", END)
    rite = ritual.compile()
    rite.invoke({}, invocation_id="parent")
    rite.invoke({}, invocation_id="parent")
    assert children == ["parent/child/1", "parent/child/1"]
