"""Hostile input for the engine: odd returns, odd routers, crowds, runaway loops."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest

from sanctum import END, RecursionLimitError, Ritual, RouteError, SealError
from sanctum.codex.memory import MemoryCodex
from tests.ritual.helpers import counter_cycle, noop


@pytest.mark.parametrize("value", [None, 0, "", b"x", object(), float("nan")])
async def test_router_garbage_is_a_route_error(value: Any) -> None:
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a")
    ritual.add_conditional_edge("a", lambda x: value)
    with pytest.raises(RouteError):
        await ritual.compile().ainvoke({})


async def test_router_exception_propagates_unchanged() -> None:
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a")
    ritual.add_conditional_edge("a", lambda x: x["missing"])
    with pytest.raises(KeyError, match="missing"):
        await ritual.compile().ainvoke({})


async def test_read_only_mapping_delta_is_accepted() -> None:
    ritual = Ritual().add_sigil("a", lambda x: types.MappingProxyType({"k": 1}))
    rite = ritual.set_entry_point("a").add_edge("a", END).compile()
    assert await rite.ainvoke({}) == {"k": 1}


async def test_keyboard_interrupt_is_not_swallowed() -> None:
    def stop(aether: dict[str, Any]) -> dict[str, Any]:
        raise KeyboardInterrupt

    ritual = Ritual().add_sigil("a", stop).set_entry_point("a").add_edge("a", END)
    with pytest.raises(KeyboardInterrupt):
        await ritual.compile().ainvoke({})


async def test_runaway_cycle_is_cut_by_the_recursion_limit() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).set_entry_point("a")
    ritual.add_edge("a", "b").add_edge("b", "a")
    with pytest.raises(RecursionLimitError, match="25 supersteps"):
        await ritual.compile().ainvoke({})


async def test_wide_fan_out_and_join() -> None:
    ritual = Ritual().add_sigil("spread", noop).set_entry_point("spread")
    ritual.add_sigil("gate", lambda a: {"done": True}, join="all").add_edge("gate", END)
    names = [f"w{i}" for i in range(500)]
    for i, name in enumerate(names):

        async def work(aether: dict[str, Any], i: int = i) -> dict[str, Any]:
            return {f"k{i}": i}

        ritual.add_sigil(name, work).add_edge("spread", name).add_edge(name, "gate")
    result = await ritual.compile().ainvoke({})
    assert result["done"] is True
    assert len(result) == 501


async def test_one_rite_many_concurrent_invocations() -> None:
    async def step(aether: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"i": aether["i"] + 1}

    ritual = Ritual().add_sigil("s", step).set_entry_point("s")
    ritual.add_conditional_edge("s", lambda a: "s" if a["i"] < a["n"] else END)
    rite = ritual.compile(recursion_limit=100)
    results = await asyncio.gather(*(rite.ainvoke({"i": 0, "n": n}) for n in range(1, 60)))
    assert [r["i"] for r in results] == list(range(1, 60))


async def test_updates_and_input_must_be_mappings() -> None:
    rite = counter_cycle(1, codex=MemoryCodex())
    await rite.ainvoke({"i": 0}, invocation_id="x")
    with pytest.raises(TypeError, match="updates"):
        await rite.ainvoke(invocation_id="x", updates=[("i", 1)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="input"):
        await rite.ainvoke("i=0")  # type: ignore[arg-type]


async def test_seal_naming_an_unknown_sigil_is_refused() -> None:
    codex = MemoryCodex()
    other = Ritual().add_sigil("ghost", noop).set_entry_point("ghost").add_edge("ghost", "ghost")
    with pytest.raises(RecursionLimitError):
        await other.compile(codex=codex, recursion_limit=1).ainvoke({}, invocation_id="x")
    with pytest.raises(SealError, match="'ghost'"):
        await counter_cycle(2, codex=codex).ainvoke(invocation_id="x")


def test_sigil_names_must_be_non_empty_strings() -> None:
    from sanctum import RitualValidationError

    with pytest.raises(RitualValidationError):
        Ritual().add_sigil("", noop)
    with pytest.raises(RitualValidationError):
        Ritual().add_sigil(3, noop)  # type: ignore[arg-type]
