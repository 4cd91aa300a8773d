"""Wards that observe: ``observe`` alone is enough; a bad superstep hook is refused early."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum import END, Ritual, Ward
from sanctum.omens import Omen, SigilCompleted


def _ritual() -> Ritual:
    def step(aether: dict[str, Any]) -> dict[str, Any]:
        return {"n": aether.get("n", 0) + 1}

    ritual = Ritual().add_sigil("step", step).set_entry_point("step")
    ritual.add_edge("step", END)
    return ritual


class Counting(Ward):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def observe(self, omen: Omen) -> None:
        self.seen.append(type(omen).__name__)


def test_a_ward_with_observe_alone_sees_every_omen() -> None:
    ward = Counting()
    assert _ritual().compile(wards=[ward]).invoke({}) == {"n": 1}
    assert "SigilCompleted" in ward.seen
    assert ward.seen[0] == "RiteBegan"


async def test_awaiting_on_omen_by_hand_reaches_observe() -> None:
    ward = Counting()
    await ward.on_omen(SigilCompleted(invocation_id="i", superstep=1, sigil="s", delta={}))
    assert ward.seen == ["SigilCompleted"]


class BadHook(Counting):
    def superstep_hook(self) -> Any:
        return 42


def test_a_superstep_hook_that_is_not_callable_is_refused_at_compile() -> None:
    with pytest.raises(TypeError, match=r"BadHook.superstep_hook\(\) must return a callable"):
        _ritual().compile(wards=[BadHook()])
