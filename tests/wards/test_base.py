"""Wards in a real Rite: the pipeline order, vetoes and DeltaRejected, on_error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sanctum import END, START, Ritual, SigilPolicy
from sanctum.omens import DeltaRejected, Omen, SigilCompleted
from sanctum.wards import Ward, WardRejection


class Append(Ward):
    """Appends its tag to every string delta value."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        return {k: f"{v}{self.tag}" if isinstance(v, str) else v for k, v in delta.items()}


class Veto(Ward):
    """Rejects every delta of the Sigil named ``target``."""

    def __init__(self, target: str) -> None:
        self.target = target

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        if name == self.target:
            raise WardRejection(f"{name} may not write {sorted(delta)}")
        return delta


class Watch(Ward):
    def __init__(self) -> None:
        self.omens: list[Omen] = []

    async def on_omen(self, omen: Omen) -> None:
        self.omens.append(omen)


async def test_wards_apply_in_registration_order_and_omens_see_the_result() -> None:
    watch = Watch()
    ritual = Ritual().add_sigil("say", lambda aether: {"text": "hi"})
    ritual.add_edge(START, "say").add_edge("say", END)
    rite = ritual.compile(wards=[Append("-1"), Append("-2"), watch])
    assert await rite.ainvoke({}) == {"text": "hi-1-2"}
    completed = [o for o in watch.omens if isinstance(o, SigilCompleted)]
    assert [dict(o.delta) for o in completed] == [{"text": "hi-1-2"}]


async def test_a_veto_emits_delta_rejected_and_triggers_on_error() -> None:
    watch = Watch()
    ritual = Ritual()
    ritual.add_sigil("risky", lambda aether: {"text": "secret"}, SigilPolicy(on_error="safe"))
    ritual.add_sigil("safe", lambda aether: {"text": "fallback"})
    ritual.add_edge(START, "risky").add_edge("risky", END).add_edge("safe", END)
    rite = ritual.compile(wards=[Veto("risky"), watch])
    result = await rite.ainvoke({})
    assert result["text"] == "fallback"
    (rejected,) = [o for o in watch.omens if isinstance(o, DeltaRejected)]
    assert rejected.sigil == "risky"
    assert rejected.ward == "Veto"
    assert "may not write ['text']" in rejected.reason
    assert not any(isinstance(o, SigilCompleted) and o.sigil == "risky" for o in watch.omens)
