"""Emitter: Ward hooks before the sink, order kept across writer and loop Omens."""

from __future__ import annotations

import asyncio

import pytest

from sanctum.omens import Omen, RiteBegan, TokenEmitted
from sanctum.ritual.emitter import Emitter


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
