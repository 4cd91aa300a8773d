"""Emitter: Ward hooks before the sink, order kept across writer and loop Omens."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sanctum import END, START, Ritual, SigilExecutionError, SigilPolicy
from sanctum.omens import Omen, RiteBegan, TokenEmitted
from sanctum.ritual.emitter import Emitter, ImmediateHook, omen_hook_of
from sanctum.wards import Ward


async def test_hooks_then_sink_in_order() -> None:
    calls: list[str] = []

    async def hook(omen: Omen) -> None:
        await asyncio.sleep(0)
        calls.append(f"hook:{type(omen).__name__}")

    emitter = Emitter([hook], lambda o: calls.append(f"sink:{type(o).__name__}"))
    emitter.emit_nowait(TokenEmitted(payload=1))
    await emitter.emit(RiteBegan(invocation_id="i"))
    assert calls == [
        "hook:TokenEmitted",
        "sink:TokenEmitted",
        "hook:RiteBegan",
        "sink:RiteBegan",
    ]


async def test_hook_failure_surfaces_on_drain() -> None:
    async def broken(omen: Omen) -> None:
        raise RuntimeError("ward broke")

    emitter = Emitter([broken], None)
    emitter.emit_nowait(TokenEmitted(payload=1))
    with pytest.raises(RuntimeError, match="ward broke"):
        await emitter.drain()
    await emitter.drain()  # reported once


async def test_sink_only_is_synchronous_and_aclose_is_idempotent() -> None:
    got: list[Omen] = []
    emitter = Emitter((), got.append)
    emitter.emit_nowait(TokenEmitted(payload=1))
    assert len(got) == 1
    await emitter.aclose()
    await emitter.aclose()


class _Twin(Ward):
    """A Ward that observes Omens synchronously (the ObservesOmens capability)."""

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def observe(self, omen: Omen) -> None:
        self.calls.append(f"twin:{type(omen).__name__}")

    def superstep_hook(self) -> None:
        return None


class _Overridden(_Twin):
    async def on_omen(self, omen: Omen) -> None:
        self.calls.append(f"async:{type(omen).__name__}")


def test_omen_hook_of_picks_the_twin_unless_on_omen_is_overridden() -> None:
    calls: list[str] = []
    hook = omen_hook_of(_Twin(calls))
    assert isinstance(hook, ImmediateHook)
    hook.call(RiteBegan(invocation_id="i"))
    assert calls == ["twin:RiteBegan"]
    assert not isinstance(omen_hook_of(_Overridden(calls)), ImmediateHook)


async def test_immediate_hooks_deliver_synchronously_in_order_with_the_sink() -> None:
    calls: list[str] = []
    emitter = Emitter(
        [ImmediateHook(lambda o: calls.append("a")), ImmediateHook(lambda o: calls.append("b"))],
        lambda o: calls.append("sink"),
    )
    assert emitter.immediate
    emitter.deliver(RiteBegan(invocation_id="i"))
    emitter.emit_nowait(TokenEmitted(payload=1))  # no queue, no task: delivered now
    assert calls == ["a", "b", "sink", "a", "b", "sink"]
    await emitter.emit(RiteBegan(invocation_id="i"))
    assert len(calls) == 9


async def test_mixed_hooks_keep_registration_order() -> None:
    calls: list[str] = []

    async def slow(omen: Omen) -> None:
        await asyncio.sleep(0)
        calls.append("async")

    emitter = Emitter([ImmediateHook(lambda o: calls.append("sync")), slow], None)
    assert not emitter.immediate
    emitter.emit_nowait(TokenEmitted(payload=1))
    await emitter.emit(RiteBegan(invocation_id="i"))
    assert calls == ["sync", "async", "sync", "async"]


async def test_a_writer_omen_failing_an_immediate_hook_surfaces_on_next_delivery() -> None:
    seen: list[Omen] = []

    def broken(omen: Omen) -> None:
        if isinstance(omen, TokenEmitted):
            raise RuntimeError("twin broke")
        seen.append(omen)

    emitter = Emitter([ImmediateHook(broken)], None)
    emitter.emit_nowait(TokenEmitted(payload=1))  # never raises into the Sigil
    emitter.emit_nowait(TokenEmitted(payload=2))  # dropped after the failure
    with pytest.raises(RuntimeError, match="twin broke"):
        emitter.deliver(RiteBegan(invocation_id="i"))
    emitter.deliver(RiteBegan(invocation_id="i"))  # reported once
    assert len(seen) == 1
    emitter.emit_nowait(TokenEmitted(payload=3))
    with pytest.raises(RuntimeError, match="twin broke"):
        await emitter.drain()


class _Tapped(Ward):
    """Takes Omens through a twin and supersteps of sync Sigils through a tap."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.taps: list[tuple[int, list[str], int, list[Any], bool]] = []

    def observe(self, omen: Omen) -> None:
        self.seen.append(type(omen).__name__)

    def superstep_hook(self) -> Any:
        return self._tap

    def _tap(
        self,
        invocation_id: str,
        superstep: int,
        sigil: str,
        began: int,
        ended: int | None,
        delta: Any,
        finished: bool,
    ) -> None:
        assert invocation_id
        assert ended is None or ended >= began
        assert (ended is None) == (delta is None)
        self.seen.append(f"tap:{superstep}")
        marks = 1 if ended is None else 2
        self.taps.append((superstep, [sigil], marks, [] if delta is None else [delta], finished))


def _pair() -> Ritual:
    def one(aether: dict[str, Any]) -> dict[str, Any]:
        return {"n": aether["n"] + 1}

    async def two(aether: dict[str, Any]) -> dict[str, Any]:
        return {"n": aether["n"] * 10}

    ritual = Ritual().add_sigil("one", one).add_sigil("two", two)
    return ritual.add_edge(START, "one").add_edge("one", "two").add_edge("two", END)


def test_the_tap_stands_in_for_the_omens_of_sync_supersteps_only() -> None:
    ward = _Tapped()
    assert isinstance(omen_hook_of(ward), ImmediateHook)
    assert omen_hook_of(ward).tap is not None  # type: ignore[union-attr]
    result = _pair().compile(wards=[ward]).invoke({"n": 1})
    assert result == {"n": 20}
    assert ward.seen == [
        "RiteBegan",
        "tap:1",  # `one` is sync: one tap, no Omens
        "SuperstepBegan",  # `two` is async: its Omens as usual
        "SigilBegan",
        "SigilCompleted",
        "SuperstepCompleted",
        "RiteManifested",
    ]
    assert ward.taps == [(1, ["one"], 2, [{"n": 2}], True)]


def test_a_stream_or_another_observer_turns_the_tap_off() -> None:
    class Plain(Ward):
        async def on_omen(self, omen: Omen) -> None:
            pass

    ward = _Tapped()
    _pair().compile(wards=[ward, Plain()]).invoke({"n": 1})
    assert ward.taps == []
    assert ward.seen.count("SigilCompleted") == 2

    streamed = _Tapped()

    async def drain() -> None:
        async for _ in _pair().compile(wards=[streamed]).astream({"n": 1}, mode="omens"):
            pass

    asyncio.run(drain())
    assert streamed.taps == []


def test_a_failing_superstep_is_tapped_unfinished_before_the_error() -> None:
    def fine(aether: dict[str, Any]) -> dict[str, Any]:
        return {"a": 1}

    def broken(aether: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    ritual = Ritual().add_sigil("fine", fine).add_sigil("broken", broken)
    ritual.add_edge(START, "fine").add_edge("fine", "broken").add_edge("broken", END)
    ward = _Tapped()
    with pytest.raises(SigilExecutionError, match="boom"):
        ritual.compile(wards=[ward]).invoke({})
    assert ward.taps == [(1, ["fine"], 2, [{"a": 1}], True), (2, ["broken"], 1, [], False)]
    assert "RiteManifested" not in ward.seen


def test_a_delta_the_merge_refuses_leaves_the_tapped_superstep_unfinished() -> None:
    from sanctum.aether import AetherSchema, Conduit

    def stray(aether: dict[str, Any]) -> dict[str, Any]:
        return {"undeclared": 1}

    ritual = Ritual(AetherSchema({"n": Conduit(int)})).add_sigil("stray", stray)
    ritual.add_edge(START, "stray").add_edge("stray", END)
    ward = _Tapped()
    with pytest.raises(Exception, match="undeclared"):
        ritual.compile(wards=[ward]).invoke({"n": 1})
    assert ward.taps == [(1, ["stray"], 2, [{"undeclared": 1}], False)]


def test_a_sync_sigil_returning_an_awaitable_is_finished_on_the_tapped_path() -> None:
    async def later() -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"b": 2}

    def sneaky(aether: dict[str, Any]) -> Any:
        return later()  # declared sync, hands back a coroutine

    ritual = Ritual().add_sigil("sneaky", sneaky).add_edge(START, "sneaky").add_edge("sneaky", END)
    ward = _Tapped()
    assert ritual.compile(wards=[ward]).invoke({}) == {"b": 2}
    assert ward.taps == [(1, ["sneaky"], 2, [{"b": 2}], True)]


def test_a_wider_frontier_is_observed_through_omens_and_keeps_its_concurrency() -> None:
    # c hands back an awaitable; d then waits for an event e sets: run one after the
    # other, d and e would never finish
    def build() -> Any:
        event = asyncio.Event()

        async def first() -> dict[str, Any]:
            return {"c": 1}

        async def wait() -> dict[str, Any]:
            await event.wait()
            return {"d": 1}

        async def release() -> dict[str, Any]:
            event.set()
            return {"e": 1}

        ritual = Ritual().add_sigil("c", lambda aether: first())
        ritual.add_sigil("d", lambda aether: wait()).add_sigil("e", lambda aether: release())
        for name in ("c", "d", "e"):
            ritual.add_edge(START, name).add_edge(name, END)
        return ritual

    bare = asyncio.run(asyncio.wait_for(build().compile().ainvoke({}), 5))
    ward = _Tapped()
    traced = asyncio.run(asyncio.wait_for(build().compile(wards=[ward]).ainvoke({}), 5))
    assert bare == traced == {"c": 1, "d": 1, "e": 1}
    assert ward.taps == []
    assert ward.seen.count("SigilCompleted") == 3


def test_a_sigil_with_a_writer_or_retries_is_not_tapped() -> None:
    def speaks(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer({"token": "hi"})
        return {"a": 1}

    def flaky(aether: dict[str, Any]) -> dict[str, Any]:
        return {"b": 1}

    ritual = Ritual().add_sigil("speaks", speaks)
    ritual.add_sigil("flaky", flaky, SigilPolicy(retries=2))
    ritual.add_edge(START, "speaks").add_edge("speaks", "flaky").add_edge("flaky", END)
    ward = _Tapped()
    ritual.compile(wards=[ward]).invoke({})
    assert ward.taps == []
    assert "TokenEmitted" in ward.seen
