"""The Omen bus of one Invocation: Wards' ``on_omen`` first, then the stream.

An :class:`Emitter` exists only while someone listens — a Ward overriding
``on_omen`` or an ``astream`` consumer. Without one the scheduler builds no Omen
objects at all. Omens keep their emission order: Omens the scheduler emits are awaited
in line; Omens a Sigil pushes through its writer (which must never block) are queued
and handed to the Wards by one dispatcher task, which the scheduler drains before its
own next Omen.

A Ward that declares the quick-observer capability of the Ward contract
(:class:`~sanctum.wards.base.ObservesOmens`: a plain ``observe(omen)``) is called
through that method instead of awaiting a coroutine per Omen (:class:`ImmediateHook`).
When every hook is immediate the emitter is :attr:`Emitter.immediate`: the scheduler
hands Omens over with the plain :meth:`Emitter.deliver`, and writer Omens are
delivered on the spot instead of queued. Whole-superstep hooks
(:data:`~sanctum.wards.base.SuperstepHook`) are not the emitter's business: the runner
(:mod:`sanctum.ritual.runner`) calls them in place of a superstep's Omens.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sanctum.omens.events import Omen
from sanctum.wards.base import SuperstepHook, observes_omens, superstep_hook_of

__all__ = [
    "Emitter",
    "ImmediateHook",
    "OmenHook",
    "OmenSink",
    "omen_hook_of",
]

OmenHook = Callable[[Omen], Awaitable[None]]
"""An async observer of every Omen (a Ward's ``on_omen``)."""

OmenSink = Callable[[Omen], None]
"""A synchronous, non-blocking consumer of Omens (the stream's queue)."""


class ImmediateHook:
    """An Omen observer called synchronously (a Ward's ``observe``).

    Args:
        call: Plain callable taking the Omen; what it raises fails the Invocation.
        tap: The Ward's :data:`~sanctum.wards.base.SuperstepHook`, if it gives one.
    """

    __slots__ = ("call", "tap")

    def __init__(self, call: Callable[[Omen], None], tap: SuperstepHook | None = None) -> None:
        self.call = call
        self.tap = tap


def omen_hook_of(ward: object) -> OmenHook | ImmediateHook:
    """The hook through which ``ward`` observes Omens (looked up once per Rite).

    Returns:
        An :class:`ImmediateHook` (with the Ward's superstep hook, if it gives one)
        when the Ward declares :class:`~sanctum.wards.base.ObservesOmens` without
        overriding ``on_omen``, else the bound ``on_omen`` coroutine function.
    """
    observer = observes_omens(ward)
    if observer is not None:
        return ImmediateHook(observer.observe, superstep_hook_of(observer))
    hook: OmenHook = ward.on_omen  # type: ignore[attr-defined]
    return hook


class Emitter:
    """Deliver Omens to the Wards' hooks, in order, then to the sink.

    Args:
        hooks: The Wards' ``on_omen`` coroutine functions (or :class:`ImmediateHook`
            for Wards that ``observe``), in registration order.
        sink: Non-blocking consumer called after the hooks (``None``: hooks only).
        veil: Applied to every Omen before anyone sees it (a Rite's Secrets masking).
    """

    __slots__ = (
        "_calls",
        "_error",
        "_hooks",
        "_immediate",
        "_pending",
        "_sink",
        "_task",
        "_veil",
    )

    def __init__(
        self,
        hooks: Sequence[OmenHook | ImmediateHook],
        sink: OmenSink | None,
        veil: Callable[[Omen], Omen] | None = None,
    ) -> None:
        self._veil = veil
        self._hooks = tuple(hooks)
        calls: list[tuple[Callable[[Omen], Any], bool]] = []
        for hook in self._hooks:
            if isinstance(hook, ImmediateHook):
                calls.append((hook.call, True))
            else:
                calls.append((hook, False))
        self._calls = tuple(calls)
        immediate = tuple(call for call, sync in calls if sync)
        self._immediate: tuple[Callable[[Omen], Any], ...] | None = (
            immediate if len(immediate) == len(calls) else None
        )
        self._sink = sink
        self._pending: deque[Omen] = deque()
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    @property
    def secrets(self) -> Any:
        """The Rite's :class:`~sanctum.wards.secrets.Secrets` behind the veil, or None.

        A Sigil streaming text (an Oracle's tokens) reads it through its writer to hold
        back a secret split over two chunks until it is whole.
        """
        owner = getattr(self._veil, "__self__", None)
        return getattr(owner, "secrets", None)

    @property
    def immediate(self) -> bool:
        """True when every hook is synchronous: :meth:`deliver` may be used."""
        return self._immediate is not None

    def deliver(self, omen: Omen) -> None:
        """Deliver ``omen`` synchronously (only when :attr:`immediate`).

        Raises:
            Exception: Whatever a hook raised — now, or earlier for a writer's Omen.
        """
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        if self._veil is not None:
            omen = self._veil(omen)
        for call in self._immediate or ():
            call(omen)
        if self._sink is not None:
            self._sink(omen)

    async def emit(self, omen: Omen) -> None:
        """Deliver ``omen`` after every Omen queued before it.

        Raises:
            Exception: Whatever a Ward's ``on_omen`` raised (the Invocation fails).
        """
        if self._task is not None or self._error is not None:
            await self.drain()
        if self._veil is not None:
            omen = self._veil(omen)
        for call, sync in self._calls:
            if sync:
                call(omen)
            else:
                await call(omen)
        if self._sink is not None:
            self._sink(omen)

    def emit_nowait(self, omen: Omen) -> None:
        """Queue ``omen`` without blocking (the writer's path).

        With only synchronous hooks (or none) the Omen is delivered on the spot; what a
        hook raises then is kept and raised by the scheduler's next delivery or drain,
        and later writer Omens are dropped, as with a queued delivery.
        """
        if self._veil is not None:
            omen = self._veil(omen)
        if self._immediate is not None:
            if self._error is not None:
                return
            try:
                for call in self._immediate:
                    call(omen)
            except Exception as exc:  # surfaced by deliver() / drain()
                self._error = exc
                return
            if self._sink is not None:
                self._sink(omen)
            return
        self._pending.append(omen)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._dispatch())

    async def _dispatch(self) -> None:
        try:
            while self._pending:
                omen = self._pending.popleft()
                for call, sync in self._calls:
                    if sync:
                        call(omen)
                    else:
                        await call(omen)
                if self._sink is not None:
                    self._sink(omen)
        except Exception as exc:  # surfaced by drain()
            self._error = exc
            self._pending.clear()

    async def drain(self) -> None:
        """Wait until every queued Omen was delivered.

        Raises:
            Exception: What a Ward's ``on_omen`` raised while dispatching.
        """
        while self._task is not None:
            task = self._task
            await asyncio.shield(task)
            if self._task is task:
                self._task = None
                if self._pending:
                    self._task = asyncio.get_running_loop().create_task(self._dispatch())
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    async def aclose(self) -> None:
        """Stop the dispatcher (if any) without delivering what is still queued."""
        task, self._task = self._task, None
        self._pending.clear()
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
