"""The Omen bus of one Invocation: Wards' ``on_omen`` first, then the stream.

An :class:`Emitter` exists only while someone listens — a Ward overriding
``on_omen`` or an ``astream`` consumer. Without one the scheduler builds no Omen
objects at all. Omens keep their emission order: Omens the scheduler emits are awaited
in line; Omens a Sigil pushes through its writer (which must never block) are queued
and handed to the Wards by one dispatcher task, which the scheduler drains before its
own next Omen.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from sanctum.omens.events import Omen

__all__ = ["Emitter", "OmenHook", "OmenSink"]

OmenHook = Callable[[Omen], Awaitable[None]]
"""An async observer of every Omen (a Ward's ``on_omen``)."""

OmenSink = Callable[[Omen], None]
"""A synchronous, non-blocking consumer of Omens (the stream's queue)."""


class Emitter:
    """Deliver Omens to the Wards' hooks, in order, then to the sink.

    Args:
        hooks: ``on_omen`` coroutines of the Wards, in registration order.
        sink: Non-blocking consumer called after the hooks (``None``: hooks only).
    """

    __slots__ = ("_error", "_hooks", "_pending", "_sink", "_task")

    def __init__(self, hooks: Sequence[OmenHook], sink: OmenSink | None) -> None:
        self._hooks = tuple(hooks)
        self._sink = sink
        self._pending: deque[Omen] = deque()
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    async def emit(self, omen: Omen) -> None:
        """Deliver ``omen`` after every Omen queued before it.

        Raises:
            Exception: Whatever a Ward's ``on_omen`` raised (the Invocation fails).
        """
        if self._task is not None:
            await self.drain()
        for hook in self._hooks:
            await hook(omen)
        if self._sink is not None:
            self._sink(omen)

    def emit_nowait(self, omen: Omen) -> None:
        """Queue ``omen`` without blocking (the writer's path)."""
        if not self._hooks:
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
                for hook in self._hooks:
                    await hook(omen)
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
