"""The public engine-level sigil factories the YAML compiler uses (sanctum.ritual.kinds)."""

from __future__ import annotations

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.errors import Interrupt
from sanctum.ritual import END, Ritual
from sanctum.ritual.kinds import first_match_router, interrupt_sigil, set_sigil


def test_set_sigil_sees_the_aether_before_it() -> None:
    fn = set_sigil({"a": lambda ae: ae["n"] + 1, "b": lambda ae: ae.get("a", "none")})
    assert fn({"n": 1}) == {"a": 2, "b": "none"}


async def test_interrupt_sigil_pauses_until_condition() -> None:
    gate = interrupt_sigil(lambda ae: f"ok {ae['n']}?", lambda ae: ae.get("ok") is True)
    rite = (
        Ritual()
        .add_sigil("gate", gate)
        .set_entry_point("gate")
        .add_edge("gate", END)
        .compile(codex=MemoryCodex())
    )
    with pytest.raises(Interrupt) as paused:
        await rite.ainvoke({"n": 1}, invocation_id="k")
    assert paused.value.reason == "ok 1?"
    assert await rite.ainvoke(invocation_id="k", updates={"ok": True}) == {"n": 1, "ok": True}


def test_interrupt_without_until_always_pauses() -> None:
    with pytest.raises(Interrupt, match="wait"):
        interrupt_sigil("wait")({})


def test_first_match_router() -> None:
    route = first_match_router([(lambda ae: ae["n"] > 1, "big"), (None, "small")])
    assert route({"n": 2}) == "big"
    assert route({"n": 0}) == "small"
    with pytest.raises(LookupError):
        first_match_router([(lambda ae: False, "x")])({})
    with pytest.raises(ValueError, match="at least one"):
        first_match_router([])
