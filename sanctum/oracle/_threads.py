"""Streaming from a worker thread: what the in-process Oracles share.

An in-process model (llama.cpp, transformers) produces its answer in a blocking call.
:func:`stream_from_thread` runs that call in a daemon thread and hands what it produces
to the event loop item by item, so the loop never blocks and a consumer that stops
reading stops the producer at its next item.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable
from typing import Any

__all__ = ["Producer", "stream_from_thread"]

Producer = Callable[[Callable[[Any], None], threading.Event], None]
"""``produce(put, stop)``: call ``put(item)`` per item; return early once ``stop`` is set.
What it raises is re-raised to the consumer after the items put before it."""

_END = object()


async def stream_from_thread(produce: Producer, name: str) -> AsyncGenerator[Any, None]:
    """Run ``produce`` in a daemon thread named ``name`` and yield what it puts.

    Yields:
        Each item, in order.

    Raises:
        BaseException: Whatever ``produce`` raised, after the items put before it.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def put(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the consumer's loop closed; nobody is listening
            stop.set()

    def work() -> None:
        try:
            produce(put, stop)
        except BaseException as exc:  # handed to the consumer, re-raised there
            put(_Failure(exc))
        finally:
            put(_END)

    threading.Thread(target=work, name=name, daemon=True).start()
    try:
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()


class _Failure:
    """What the producer raised, in transit (so an exception can also be an item)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error
