"""Emitter: Ward hooks before the sink, order kept across writer and loop Omens."""

from __future__ import annotations

import asyncio

import pytest

from sanctum.omens import Omen, RiteBegan, TokenEmitted
from sanctum.ritual.emitter import Emitter, ImmediateHook, omen_hook_of, synchronous_twin


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


class _Twin:
    """A Ward-like observer whose on_omen declares a synchronous twin."""

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    @synchronous_twin("_now")
    async def on_omen(self, omen: Omen) -> None:
        self._now(omen)

    def _now(self, omen: Omen) -> None:
        self.calls.append(f"twin:{type(omen).__name__}")


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
