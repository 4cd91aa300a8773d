"""Scatter: one Sigil mapped over a list whose size is known only at run time.

``scatter(fn, over, into=...)`` returns an async Sigil that calls ``fn`` once per item
with ``{**aether, item_key: item}``, at most ``max_concurrency`` at a time, and writes
the results in item order to ``{into: [...]}`` — each result is the item's delta, or
``delta[pick]`` when ``pick`` is given. The first failing item cancels the others and
fails the Sigil (so the Sigil's policy — retries, on_error — applies to the whole
scatter).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sanctum.errors import DeltaTypeError
from sanctum.omens.events import Writer
from sanctum.ritual.graph import SigilFn, detect_async, detect_writer
from sanctum.ritual.runner import cancel_all

__all__ = ["scatter"]


def scatter(
    fn: SigilFn,
    over: str | Callable[[Mapping[str, Any]], Any],
    *,
    into: str,
    item_key: str = "item",
    max_concurrency: int = 4,
    pick: str | None = None,
) -> Callable[[dict[str, Any], Writer], Awaitable[dict[str, Any]]]:
    """Map a Sigil function over a list with bounded concurrency.

    Args:
        fn: Sigil function (sync or async, optionally taking a writer) called per item.
        over: Aether key naming the list, or a callable ``aether -> list``.
        into: Aether key receiving the list of results, in item order.
        item_key: Key under which each item is added to the Aether ``fn`` sees.
        max_concurrency: Most items in flight at once (>= 1).
        pick: When given, each result is ``delta[pick]`` instead of the whole delta.

    Returns:
        An async Sigil ``fn(aether, writer) -> {into: [...]}``.

    Raises:
        TypeError: If ``fn`` is not callable, or ``over``/``into`` have the wrong type.
        ValueError: If ``max_concurrency`` is below 1.
    """
    if not callable(fn):
        raise TypeError(f"scatter needs a callable sigil function, got {type(fn).__name__}")
    if not (isinstance(over, str) or callable(over)):
        raise TypeError("scatter(over=...) must be an Aether key or a callable aether -> list")
    if not isinstance(into, str) or not into:
        raise TypeError(f"scatter(into=...) must be a non-empty Aether key, got {into!r}")
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
        raise TypeError(f"max_concurrency must be an int, got {max_concurrency!r}")
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
    takes_writer = detect_writer(fn)
    is_async = detect_async(fn)
    label = getattr(fn, "__name__", type(fn).__name__)

    def items_of(aether: Mapping[str, Any]) -> list[Any]:
        if isinstance(over, str):
            if over not in aether:
                raise KeyError(
                    f"scatter over {over!r}: the Aether has no such key; "
                    f"available keys: {', '.join(map(repr, aether)) or '(none)'}"
                )
            value = aether[over]
        else:
            value = over(aether)
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise TypeError(f"scatter over {over!r} needs a list, got {type(value).__name__}")
        return list(value)

    def result_of(delta: Any) -> Any:
        if not isinstance(delta, Mapping):
            kind = type(delta).__name__
            raise DeltaTypeError(
                f"scattered sigil {label!r} returned {kind}, not a mapping",
                sigil=label,
                returned=kind,
            )
        return delta[pick] if pick is not None else dict(delta)

    async def one(
        aether: Mapping[str, Any], item: Any, writer: Writer, gate: asyncio.Semaphore
    ) -> Any:
        async with gate:
            view = {**aether, item_key: item}
            result = fn(view, writer) if takes_writer else fn(view)
            if is_async or inspect.isawaitable(result):
                result = await result
            return result_of(result)

    async def scatter_sigil(aether: dict[str, Any], writer: Writer) -> dict[str, Any]:
        items = items_of(aether)
        if not is_async:
            results = []
            for item in items:
                view = {**aether, item_key: item}
                result = fn(view, writer) if takes_writer else fn(view)
                if inspect.isawaitable(result):
                    result = await result
                results.append(result_of(result))
            return {into: results}
        gate = asyncio.Semaphore(max_concurrency)
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(one(aether, item, writer, gate)) for item in items]
        if not tasks:
            return {into: []}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        except BaseException:
            await cancel_all(tasks)
            raise
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                error = task.exception()
                await cancel_all(tasks)
                for other in tasks:
                    if not other.cancelled():
                        other.exception()
                assert error is not None
                raise error
        return {into: [task.result() for task in tasks]}

    scatter_sigil.__name__ = f"scatter_{label}"
    scatter_sigil.__qualname__ = scatter_sigil.__name__
    return scatter_sigil
