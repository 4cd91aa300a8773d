"""Scatter: one function mapped over a list whose size is known only at run time.

:func:`scatter` builds a Sigil (a graph node) that maps a function over the items of
a list in the Aether, at most so many at a time, and writes the results, in item
order, to ``{into: [...]}``. It reads two call forms, told apart by how ``over`` is
passed:

* The item form (the original engine's): ``scatter(fn, over="key", into="out",
  concurrency=8, on_item_error="raise")`` — ``over`` given by keyword. ``fn`` maps
  one item: ``fn(item)`` or ``fn(item, aether)``, sync or async; each result is what
  it returns. ``on_item_error="collect"`` keeps going past a failing item and puts
  ``{"__scatter_error__": repr(exc)}`` in its place.
* The Sigil form: ``scatter(fn, "key", into="out", item_key="item",
  max_concurrency=4, pick=None)`` — ``over`` given by position, or any of
  ``item_key``/``max_concurrency``/``pick`` given. ``fn`` is a Sigil function
  called with ``{**aether, item_key: item}`` (and a writer, when it takes one); each
  result is its delta, or ``delta[pick]``.

In both forms (except under ``on_item_error="collect"``) the first failing item
cancels the others and fails the Sigil, so the Sigil's policy — retries, on_error —
applies to the whole scatter; an interrupt() inside an item pauses the Invocation.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, overload

from sanctum.errors import DeltaTypeError, Interrupt
from sanctum.omens.events import Writer
from sanctum.ritual.graph import SigilFn, detect_async, detect_writer
from sanctum.ritual.runner import cancel_all

__all__ = ["ON_ITEM_ERROR", "SCATTER_ERROR_KEY", "scatter"]

SCATTER_ERROR_KEY = "__scatter_error__"
"""Key of the placeholder ``{"__scatter_error__": repr(exc)}`` for a failed item."""

ON_ITEM_ERROR = ("raise", "collect")
"""The item form's ``on_item_error`` choices."""

Over = str | Callable[[Mapping[str, Any]], Any]
"""Where the items come from: an Aether key, or a callable ``aether -> list``."""

ScatterSigil = Callable[..., Awaitable[dict[str, Any]]]
"""The async Sigil :func:`scatter` returns: ``fn(aether[, writer]) -> {into: [...]}``."""

_UNSET: Any = object()


@overload
def scatter(
    fn: Callable[..., Any],
    *,
    over: Over,
    into: str,
    concurrency: int = 8,
    on_item_error: str = "raise",
) -> ScatterSigil: ...


@overload
def scatter(
    fn: SigilFn,
    over: Over,
    /,
    *,
    into: str,
    item_key: str = "item",
    max_concurrency: int = 4,
    pick: str | None = None,
) -> ScatterSigil: ...


@overload
def scatter(
    fn: SigilFn,
    *,
    over: Over,
    into: str,
    item_key: str = "item",
    max_concurrency: int = 4,
    pick: str | None = None,
) -> ScatterSigil: ...


def scatter(
    fn: Callable[..., Any],
    *positional: Any,
    over: Any = _UNSET,
    into: str,
    concurrency: Any = _UNSET,
    on_item_error: Any = _UNSET,
    item_key: Any = _UNSET,
    max_concurrency: Any = _UNSET,
    pick: Any = _UNSET,
) -> ScatterSigil:
    """Map a function over a list in the Aether with bounded concurrency.

    Item form — ``scatter(fn, *, over, into, concurrency=8, on_item_error="raise")``
    (``over`` by keyword, none of the Sigil form's options): ``fn(item)`` or
    ``fn(item, aether)`` (when it takes a second positional parameter without a
    default, or one named ``aether``), sync or async, maps one item to its result.
    Sync functions run one after another; async ones at most ``concurrency`` at once.
    ``on_item_error="raise"`` fails the Sigil with the first failure (in item order
    among those that failed before the rest were cancelled); ``"collect"`` lets every
    item run and puts ``{"__scatter_error__": repr(exc)}`` in each failed item's place.

    Sigil form — ``scatter(fn, over, *, into, item_key="item", max_concurrency=4,
    pick=None)`` (``over`` by position, or with any of these options): ``fn`` is a
    Sigil function (sync or async, optionally taking a writer) called per item with
    ``{**aether, item_key: item}``; each result is its delta, or ``delta[pick]``.

    Args:
        fn: The function mapped over the items (see the two forms above).
        *positional: ``over``, in the Sigil form.
        over: Aether key naming the list (or a callable ``aether -> list``).
        into: Aether key receiving the list of results, in item order.
        concurrency: Item form: most items in flight at once (>= 1, default 8).
        on_item_error: Item form: ``"raise"`` (default) or ``"collect"``.
        item_key: Sigil form: key under which the item is added to the Aether ``fn``
            sees (default ``"item"``).
        max_concurrency: Sigil form: most items in flight at once (>= 1, default 4).
        pick: Sigil form: when given, each result is ``delta[pick]``.

    Returns:
        An async Sigil returning ``{into: [result, ...]}``.

    Raises:
        TypeError: If ``fn`` is not callable, ``over`` is missing or given twice,
            ``over``/``into``/``concurrency`` have the wrong type, or options of the
            two forms are mixed.
        ValueError: If ``concurrency`` (or ``max_concurrency``) is below 1, or
            ``on_item_error`` is not ``"raise"`` or ``"collect"``.
    """
    if len(positional) > 1:
        raise TypeError(
            f"scatter() takes fn and over as positional arguments, got {1 + len(positional)}"
        )
    if positional and over is not _UNSET:
        raise TypeError("scatter() got over twice: by position and by keyword")
    if not positional and over is _UNSET:
        raise TypeError("scatter() needs over=: the Aether key naming the list to map over")
    sigil_options = [
        name
        for name, value in (
            ("item_key", item_key),
            ("max_concurrency", max_concurrency),
            ("pick", pick),
        )
        if value is not _UNSET
    ]
    item_options = [
        name
        for name, value in (("concurrency", concurrency), ("on_item_error", on_item_error))
        if value is not _UNSET
    ]
    if sigil_options and item_options:
        raise TypeError(
            f"scatter() mixes {', '.join(item_options)} (the item form: fn(item)) with "
            f"{', '.join(sigil_options)} (the Sigil form: fn(aether)); use one form"
        )
    source = positional[0] if positional else over
    if item_options or (not positional and not sigil_options):
        return _item_form(
            fn,
            source,
            into,
            8 if concurrency is _UNSET else concurrency,
            "raise" if on_item_error is _UNSET else on_item_error,
        )
    return _sigil_form(
        fn,
        source,
        into,
        "item" if item_key is _UNSET else item_key,
        4 if max_concurrency is _UNSET else max_concurrency,
        None if pick is _UNSET else pick,
    )


def _check_common(fn: Any, over: Any, into: Any) -> str:
    if not callable(fn):
        raise TypeError(f"scatter needs a callable function, got {type(fn).__name__}")
    if not (isinstance(over, str) or callable(over)):
        raise TypeError("scatter(over=...) must be an Aether key or a callable aether -> list")
    if not isinstance(into, str) or not into:
        raise TypeError(f"scatter(into=...) must be a non-empty Aether key, got {into!r}")
    return getattr(fn, "__name__", type(fn).__name__)


def _check_bound(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


def _items_of(over: Over, aether: Mapping[str, Any]) -> list[Any]:
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


async def _first_failure(tasks: list[asyncio.Task[Any]]) -> None:
    """Wait for ``tasks``; on the first failure cancel the rest and raise it."""
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


def _takes_aether(fn: Callable[..., Any]) -> bool:
    """Whether an item function wants the Aether as its second positional argument."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) >= 2:
        second = positional[1]
        return second.default is inspect.Parameter.empty or second.name == "aether"
    return any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)


def _item_form(
    fn: Callable[..., Any], over: Over, into: str, concurrency: Any, on_item_error: Any
) -> ScatterSigil:
    label = _check_common(fn, over, into)
    _check_bound("concurrency", concurrency)
    if on_item_error not in ON_ITEM_ERROR:
        raise ValueError(
            f"on_item_error must be 'raise' or 'collect', got {on_item_error!r}; 'collect' "
            f'puts {{"{SCATTER_ERROR_KEY}": repr(error)}} in a failed item\'s place'
        )
    collect = on_item_error == "collect"
    with_aether = _takes_aether(fn)
    is_async = detect_async(fn)

    async def run(item: Any, aether: Mapping[str, Any]) -> Any:
        try:
            result = fn(item, dict(aether)) if with_aether else fn(item)
            if inspect.isawaitable(result):
                result = await result
        except Interrupt:
            raise
        except Exception as exc:
            if not collect:
                raise
            return {SCATTER_ERROR_KEY: repr(exc)}
        return result

    async def scatter_sigil(aether: dict[str, Any]) -> dict[str, Any]:
        items = _items_of(over, aether)
        if not is_async:
            return {into: [await run(item, aether) for item in items]}
        if not items:
            return {into: []}
        gate = asyncio.Semaphore(concurrency)

        async def gated(item: Any) -> Any:
            async with gate:
                return await run(item, aether)

        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(gated(item)) for item in items]
        await _first_failure(tasks)
        return {into: [task.result() for task in tasks]}

    scatter_sigil.__name__ = f"scatter_{label}"
    scatter_sigil.__qualname__ = scatter_sigil.__name__
    return scatter_sigil


def _sigil_form(
    fn: SigilFn, over: Over, into: str, item_key: Any, max_concurrency: Any, pick: Any
) -> ScatterSigil:
    label = _check_common(fn, over, into)
    _check_bound("max_concurrency", max_concurrency)
    if not isinstance(item_key, str) or not item_key:
        raise TypeError(f"scatter(item_key=...) must be a non-empty string, got {item_key!r}")
    takes_writer = detect_writer(fn)
    is_async = detect_async(fn)

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
        items = _items_of(over, aether)
        if not is_async:
            results = []
            for item in items:
                view = {**aether, item_key: item}
                result = fn(view, writer) if takes_writer else fn(view)
                if inspect.isawaitable(result):
                    result = await result
                results.append(result_of(result))
            return {into: results}
        if not items:
            return {into: []}
        gate = asyncio.Semaphore(max_concurrency)
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(one(aether, item, writer, gate)) for item in items]
        await _first_failure(tasks)
        return {into: [task.result() for task in tasks]}

    scatter_sigil.__name__ = f"scatter_{label}"
    scatter_sigil.__qualname__ = scatter_sigil.__name__
    return scatter_sigil
