"""Turn any value into plain JSON data, stringifying what JSON cannot hold.

Private helper shared by the AuditWard and the trace recorder: both must write what a
Sigil produced without ever breaking the ritual over an odd value. The conversion is
total — it never raises — and bounded: cycles and absurd nesting become marker
strings instead of a ``RecursionError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "jsonable"]

MAX_DEPTH = 200
"""Containers nested deeper than this are replaced by a marker string."""

_MAX_INT_BITS = 10_000
"""Larger integers are stringified as a summary (CPython refuses to print them)."""

_CYCLE = "<cycle>"
_TOO_DEEP = "<nested too deep>"


def jsonable(value: Any) -> Any:
    """Return ``value`` as JSON data: dicts with str keys, lists, str, finite numbers.

    Mappings become dicts (non-string keys stringified), lists, tuples, sets and
    frozensets become lists (sets sorted by their text for a stable order), NaN and
    infinities become the strings ``"nan"``, ``"inf"`` and ``"-inf"``, and any other
    object becomes ``str(value)`` (``repr`` when ``str`` itself fails).

    Args:
        value: Anything a Sigil may have put in a delta or an Omen.

    Returns:
        A value ``json.dumps(..., allow_nan=False)`` accepts.
    """
    return _convert(value, 0, set())


_PLAIN = frozenset({str, int, bool, type(None)})


def _convert(value: Any, depth: int, active: set[int]) -> Any:
    kind = type(value)
    if kind in _PLAIN and (kind is not int or value.bit_length() <= _MAX_INT_BITS):
        return value
    if kind is dict and depth < MAX_DEPTH:  # the common case, without the ABC checks
        marker = id(value)
        if marker not in active:
            active.add(marker)
            try:
                return {
                    (key if type(key) is str else _key(key)): _convert(item, depth + 1, active)
                    for key, item in value.items()
                }
            finally:
                active.discard(marker)
    if value is None or kind in (str, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        if abs(value).bit_length() > _MAX_INT_BITS:
            return f"<int of {abs(value).bit_length()} bits>"
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        if depth >= MAX_DEPTH:
            return _TOO_DEEP
        marker = id(value)
        if marker in active:
            return _CYCLE
        active.add(marker)
        try:
            if isinstance(value, Mapping):
                return {_key(key): _convert(item, depth + 1, active) for key, item in value.items()}
            items = [_convert(item, depth + 1, active) for item in value]
            if isinstance(value, set | frozenset):
                items.sort(key=_sort_text)
            return items
        finally:
            active.discard(marker)
    return _text(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return str.__str__(key)
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        converted = _convert(key, 0, set())
        return converted if isinstance(converted, str) else _text(converted)
    return _text(key)


def _text(value: Any) -> str:
    try:
        return str(value)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return f"<unprintable {type(value).__name__}>"


def _sort_text(item: Any) -> str:
    return item if isinstance(item, str) else repr(item)
