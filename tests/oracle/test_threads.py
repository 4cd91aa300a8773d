"""stream_from_thread: items in order, the producer's failure after them, early stop."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import pytest

from sanctum.oracle._threads import stream_from_thread


async def test_items_arrive_in_order_from_another_thread() -> None:
    seen: list[str] = []

    def produce(put: Callable[[Any], None], stop: threading.Event) -> None:
        seen.append(threading.current_thread().name)
        for i in range(5):
            put(i)

    assert [item async for item in stream_from_thread(produce, "worker-x")] == [0, 1, 2, 3, 4]
    assert seen == ["worker-x"]


async def test_a_failure_follows_the_items_put_before_it() -> None:
    def produce(put: Callable[[Any], None], stop: threading.Event) -> None:
        put("a")
        raise ValueError("model broke")

    got: list[Any] = []

    async def drain() -> None:
        async for item in stream_from_thread(produce, "w"):
            got.append(item)

    with pytest.raises(ValueError, match="model broke"):
        await drain()
    assert got == ["a"]


async def test_closing_early_tells_the_producer_to_stop() -> None:
    stopped = threading.Event()

    def produce(put: Callable[[Any], None], stop: threading.Event) -> None:
        for i in range(10_000):
            if stop.wait(0.001):
                stopped.set()
                return
            put(i)

    async with contextlib.aclosing(stream_from_thread(produce, "w")) as items:
        async for item in items:
            if item == 3:
                break
    assert stopped.wait(5)
