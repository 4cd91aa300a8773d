"""The Omen bus of one Invocation: Wards' ``on_omen`` first, then the stream.

An :class:`Emitter` exists only while someone listens — a Ward overriding
``on_omen`` or an ``astream`` consumer. Without one the scheduler builds no Omen
objects at all. Omens keep their emission order: Omens the scheduler emits are awaited
in line; Omens a Sigil pushes through its writer (which must never block) are queued
and handed to the Wards by one dispatcher task, which the scheduler drains before its
own next Omen.

A Ward whose ``on_omen`` does all its work synchronously may say so with
:func:`synchronous_twin`; the engine then calls that plain method instead of awaiting
a coroutine per Omen (:class:`ImmediateHook`). When every hook is immediate the
emitter is :attr:`Emitter.immediate`: the scheduler hands Omens over with the plain
:meth:`Emitter.deliver`, and writer Omens are delivered on the spot instead of queued.

A twin may also name a *superstep tap* (:data:`SuperstepTap`): a method that takes a
whole superstep of one synchronous Sigil at once, as two raw clock marks and a delta. When
every observer has one (and no stream listens), the scheduler runs such supersteps
without building their four Omens (SuperstepBegan, SigilBegan, SigilCompleted,
SuperstepCompleted) and calls the taps instead (:attr:`Emitter.taps`) — for a
superstep of one Sigil, so that a copy taken by the tap is as early as the one a
SigilCompleted observer takes; every other Omen is still delivered as usual. This is
how a TraceRecorder records a run for about the cost of the run itself.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from sanctum.omens.events import Omen

__all__ = [
    "SYNC_TWIN_ATTRIBUTE",
    "Emitter",
    "ImmediateHook",
    "OmenHook",
    "OmenSink",
    "SuperstepTap",
    "omen_hook_of",
    "synchronous_twin",
]

OmenHook = Callable[[Omen], Awaitable[None]]
"""An async observer of every Omen (a Ward's ``on_omen``)."""

OmenSink = Callable[[Omen], None]
"""A synchronous, non-blocking consumer of Omens (the stream's queue)."""

SuperstepTap = Callable[[str, int, str, int, int | None, Mapping[str, Any] | None, bool], None]
"""``tap(invocation_id, superstep, sigil, began, ended, delta, finished)``.

Called once per superstep run on the tapped path — a frontier of one Sigil that is
synchronous, without retries and without a writer — in place of that superstep's
SuperstepBegan, SigilBegan, SigilCompleted and SuperstepCompleted Omens, after its
delta was merged and before its Seal, if any.

* ``sigil`` — the Sigil's name.
* ``began``, ``ended`` — ``time.perf_counter_ns()`` readings (a monotonic clock: add
  ``time.time_ns() - time.perf_counter_ns()`` for epoch nanoseconds) taken just before
  the call and just after it returned; ``ended`` is None when the Sigil did not
  complete (it raised, paused or returned a bad delta).
* ``delta`` — what the Sigil returned (the tap must copy what it keeps), or None when
  it did not complete.
* ``finished`` — False when the superstep did not complete: the Sigil did not, or the
  merge refused its delta (then ``ended`` and ``delta`` are set).

What the tap raises fails the Invocation.
"""

SYNC_TWIN_ATTRIBUTE = "__sanctum_synchronous_twin__"
"""Set on an ``on_omen`` function: the name of the plain method doing all its work."""

TAP_ATTRIBUTE = "__sanctum_superstep_tap__"
"""Set on an ``on_omen`` function: the name of the ward's :data:`SuperstepTap` method."""

_F = TypeVar("_F", bound=Callable[..., Any])


def synchronous_twin(name: str, *, tap: str | None = None) -> Callable[[_F], _F]:
    """Declare that the decorated async ``on_omen`` only calls the plain method ``name``.

    The engine then calls ``ward.<name>(omen)`` directly — same order, same moment,
    no coroutine per Omen. The mark sits on the function, so a subclass that overrides
    ``on_omen`` is awaited as usual (and one that overrides ``<name>`` is honoured on
    both paths). The method must not block and must not need the event loop.

    Args:
        name: The attribute name of the synchronous method taking ``(omen)``.
        tap: The attribute name of a :data:`SuperstepTap` method recording a superstep
            of synchronous Sigils exactly as the four Omens it replaces would.

    Returns:
        A decorator returning the function unchanged apart from the mark.
    """

    def mark(function: _F) -> _F:
        setattr(function, SYNC_TWIN_ATTRIBUTE, name)
        if tap is not None:
            setattr(function, TAP_ATTRIBUTE, tap)
        return function

    return mark


class ImmediateHook:
    """An Omen observer called synchronously (a Ward's declared synchronous twin).

    Args:
        call: Plain callable taking the Omen; what it raises fails the Invocation.
        tap: The Ward's :data:`SuperstepTap`, if it has one.
    """

    __slots__ = ("call", "tap")

    def __init__(self, call: Callable[[Omen], None], tap: SuperstepTap | None = None) -> None:
        self.call = call
        self.tap = tap


def omen_hook_of(ward: object) -> OmenHook | ImmediateHook:
    """The hook through which ``ward`` observes Omens.

    Returns:
        An :class:`ImmediateHook` when the class's ``on_omen`` declares a
        :func:`synchronous_twin`, else the bound ``on_omen`` coroutine function.
    """
    on_omen = getattr(type(ward), "on_omen", None)
    twin = getattr(on_omen, SYNC_TWIN_ATTRIBUTE, None)
    if isinstance(twin, str):
        call = getattr(ward, twin, None)
        if callable(call):
            tap_name = getattr(on_omen, TAP_ATTRIBUTE, None)
            tap = getattr(ward, tap_name, None) if isinstance(tap_name, str) else None
            return ImmediateHook(call, tap if callable(tap) else None)
    hook: OmenHook = ward.on_omen  # type: ignore[attr-defined]
    return hook


class Emitter:
    """Deliver Omens to the Wards' hooks, in order, then to the sink.

    Args:
        hooks: The Wards' ``on_omen`` coroutine functions (or :class:`ImmediateHook`
            twins), in registration order.
        sink: Non-blocking consumer called after the hooks (``None``: hooks only).
        veil: Applied to every Omen before anyone sees it (a Rite's Secrets masking);
            with one, there are no superstep taps (a tap would see a raw delta).
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
        "taps",
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
        taps = tuple(h.tap for h in self._hooks if isinstance(h, ImmediateHook) and h.tap)
        tapped = taps and len(taps) == len(self._hooks) and sink is None and veil is None
        self.taps: tuple[SuperstepTap, ...] | None = taps if tapped else None
        """Every observer's superstep tap, when all have one and no stream listens."""
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
