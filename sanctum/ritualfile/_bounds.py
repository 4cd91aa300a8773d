"""The limits of expressions, and the sizes worked out before anything is built.

Private to :mod:`sanctum.ritualfile` (see :mod:`sanctum.ritualfile.expressions`, which
re-exports the limits): the constants bounding an expression's work, the methods and
functions offered to expressions, and the helpers that size a string or a list before
it is made and count what one evaluation built against :data:`MAX_BUILT_BYTES`.
"""

from __future__ import annotations

import contextvars
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import (
    nodes,
)
from jinja2.exceptions import SecurityError

if TYPE_CHECKING:
    pass

MAX_RANGE = 10_000
"""Longest ``range()`` an expression may build."""

MAX_ITEMS = 1_000_000
"""Most characters (of a string) or items (of a list) any one result may hold.

Checked before the result is built: ``'x' * 1000001`` is refused without allocating.
"""

MAX_BUILT_BYTES = 24 * 1024 * 1024
"""Most memory (bytes, as ``sys.getsizeof`` counts) one evaluation may build in all.

Every result an operation builds is counted against it, so a template or an expression
holding many results under :data:`MAX_ITEMS` each still stays bounded.
"""

MAX_POWER_BITS = 10_000
"""Largest integer (in bits) ``**`` may produce."""

MAX_SOURCE = 100_000
"""Longest expression or template source accepted, in characters."""

MAX_LOOP_DEPTH = 2
"""Deepest nesting of ``{% for %}`` loops in a template."""

MAX_SLICES = MAX_RANGE
"""Most parts ``slice`` may cut a list into."""

MAX_JSON_INDENT = 32
"""Widest ``tojson(indent=...)``."""

_STR_METHODS = frozenset(
    [
        "lower",
        "upper",
        "strip",
        "lstrip",
        "rstrip",
        "startswith",
        "endswith",
        "split",
        "rsplit",
        "splitlines",
        "replace",
        "join",
        "title",
        "capitalize",
        "casefold",
        "count",
        "find",
        "rfind",
        "index",
        "isdigit",
        "isalpha",
        "isalnum",
        "isspace",
        "isupper",
        "islower",
        "partition",
        "rpartition",
        "removeprefix",
        "removesuffix",
        "center",
        "ljust",
        "rjust",
        "zfill",
    ]
)
_DICT_METHODS = frozenset({"get", "keys", "values", "items"})
_LIST_METHODS = frozenset({"count", "index"})
OFFERED_METHODS: dict[type, frozenset[str]] = {
    str: _STR_METHODS,
    dict: _DICT_METHODS,
    list: _LIST_METHODS,
    tuple: _LIST_METHODS,
}
"""Methods expressions may call, by the type of the object they belong to."""

_ALL_METHODS = _STR_METHODS | _DICT_METHODS | _LIST_METHODS

_SAFE_FILTERS = [
    "abs",
    "attr",
    "batch",
    "capitalize",
    "center",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "select",
    "selectattr",
    "slice",
    "sort",
    "string",
    "striptags",
    "sum",
    "title",
    "tojson",
    "trim",
    "truncate",
    "unique",
    "upper",
    "urlencode",
    "wordcount",
    "filesizeformat",
]
_ALLOWED_STATEMENTS = (nodes.Output, nodes.If, nodes.For, nodes.Assign)


def _refuse(message: str) -> SecurityError:
    return SecurityError(message)


# --------------------------------------------------------------------------- sizes


_T = TypeVar("_T")

_SPENT: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "sanctum_expression_spent", default=None
)
"""Bytes built so far by the evaluation running in this context (None: no budget)."""


class _Over(Exception):
    """A size estimate went past the limit (the count stopped there)."""


def _count(value: Any) -> int:
    """Characters of a string, items of a container; 0 for anything else."""
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
        return len(value)
    return 0


def _text(value: Any, limit: int = MAX_ITEMS) -> int:
    """About how many characters ``str(value)`` has, counting no further than ``limit``.

    A list shown as text repeats each item it holds as often as it holds it
    (``[s] * 1000`` shows ``s`` a thousand times), so items are counted each time they
    occur; the size of each container is worked out once, so this costs time in
    proportion to the distinct values, never to the text itself. Past ``limit`` the
    count stops and ``limit + 1`` is returned.
    """
    if isinstance(value, str):
        return len(value)
    known: dict[int, int] = {}

    def size(item: Any, depth: int) -> int:
        if isinstance(item, str):
            return len(item) + 2
        if isinstance(item, (bytes, bytearray)):
            return 4 * len(item) + 3
        if item is None or isinstance(item, (bool, float)):
            return 5
        if isinstance(item, int):
            return item.bit_length() // 3 + 2
        if isinstance(item, (list, tuple, set, frozenset, dict)):
            key = id(item)
            if key in known:
                return known[key]
            if depth > 100:
                raise _Over
            total = 2
            pairs = item.items() if isinstance(item, dict) else ((x, None) for x in item)
            for first, second in pairs:
                total += size(first, depth + 1) + 2
                if second is not None or isinstance(item, dict):
                    total += size(second, depth + 1) + 2
                if total > limit:
                    raise _Over
            known[key] = total
            return total
        return 64  # another object: its own text, assumed short

    try:
        total = size(value, 0)
    except (_Over, RecursionError):
        return limit + 1
    if isinstance(value, (bytes, bytearray)):
        total -= 3
    return total


def _shown(size: int) -> str:
    """``size`` for a message (a count that stopped past the limit says so)."""
    return f"more than {MAX_ITEMS:,}" if size == MAX_ITEMS + 1 else f"{size:,}"


def _allow(size: int, what: str, *, nbytes: int | None = None) -> None:
    """Refuse, before building it, a result of ``size`` characters or items.

    ``nbytes`` is the memory it would take (default: ``size`` bytes); it must fit in
    what is left of the evaluation's :data:`MAX_BUILT_BYTES`.
    """
    if size > MAX_ITEMS:
        raise _refuse(f"{what} would build {_shown(size)} items (limit {MAX_ITEMS:,})")
    spent = _SPENT.get()
    if spent is not None and spent[0] + (size if nbytes is None else nbytes) > MAX_BUILT_BYTES:
        raise _refuse(
            f"{what} would take the expression past {MAX_BUILT_BYTES // (1024 * 1024)} MiB "
            "built in all"
        )


_SMALL = (type(None), bool)


def _weight(value: Any) -> int:
    """The memory ``value`` took to build: itself and the items it directly holds."""
    try:
        total = sys.getsizeof(value)
        if isinstance(value, (list, tuple, set, frozenset)) and value:
            total += sum(_item_bytes(item) for item in value)
        elif isinstance(value, dict) and value:
            total += sum(_item_bytes(k) + _item_bytes(v) for k, v in value.items())
    except Exception:  # an object whose __sizeof__ misbehaves
        return 0
    return total


def _item_bytes(item: Any) -> int:
    if isinstance(item, _SMALL) or (type(item) is int and -5 <= item <= 256):
        return 0  # shared by the interpreter
    if isinstance(item, str) and len(item) <= 1 and (not item or ord(item) < 256):
        return 0
    return sys.getsizeof(item)


def _built(value: _T, what: str) -> _T:
    """Count a result just built: its size (limit MAX_ITEMS) and its memory."""
    size = _count(value)
    if size > MAX_ITEMS:
        raise _refuse(f"{what} built {_shown(size)} items (limit {MAX_ITEMS:,})")
    spent = _SPENT.get()
    if spent is not None and value is not None:
        spent[0] += _weight(value) if size else _item_bytes(value)
        if spent[0] > MAX_BUILT_BYTES:
            raise _refuse(
                f"{what} took the expression past {MAX_BUILT_BYTES // (1024 * 1024)} MiB "
                "built in all"
            )
    return value


def _chars(*texts: str) -> int:
    """Bytes per character a string joining ``texts`` takes (1, or 4 to be safe)."""
    return 1 if all(t.isascii() for t in texts) else 4


def _as_text(value: Any, what: str) -> str:
    """``str(value)``, refused first when it would be too long."""
    if isinstance(value, str):
        return value
    _allow(_text(value), what)
    return str(value)


def _capped_range(*args: int) -> range:
    result = range(*args)
    if len(result) > MAX_RANGE:
        raise _refuse(f"range of {len(result)} items refused (limit {MAX_RANGE})")
    return result


def _sequence(value: Any, what: str) -> Any:
    """``value`` when it has a length; a generator made into a list (counted) otherwise."""
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset, range)):
        return value
    return _built(list(value), what)


def _listed(value: Any, what: str) -> list[Any]:
    """``list(value)``, its size checked first when it is known."""
    if isinstance(value, str):
        _allow(len(value), what, nbytes=len(value) * (8 if value.isascii() else 88))
    elif hasattr(value, "__len__"):
        _allow(len(value), what, nbytes=8 * len(value))
    return _built(list(value), what)


def _sorted(value: Any, *args: Any, **kwargs: Any) -> list[Any]:
    if hasattr(value, "__len__"):
        _allow(len(value), "sorted", nbytes=8 * len(value))
    return _built(sorted(value, *args, **kwargs), "sorted")


def _summed(values: Any, start: Any, what: str) -> Any:
    """``sum(values, start)``; lists and tuples are joined in one pass, their size first."""
    if not isinstance(start, (list, tuple)):
        return sum(values, start)
    items = _sequence(values, what)
    total = len(start)
    for item in items:
        if not isinstance(item, type(start)):
            raise TypeError(
                f"can only concatenate {type(start).__name__} (not {type(item).__name__!r}) "
                f"to {type(start).__name__}"
            )
        total += len(item)
    _allow(total, what, nbytes=8 * total)
    out = list(start)
    for item in items:
        out.extend(item)
    return _built(out if isinstance(start, list) else tuple(out), what)


def _sum_function(values: Any, start: Any = 0) -> Any:
    return _summed(values, start, "sum")


def _list_function(*args: Any) -> list[Any]:
    if not args:
        return []
    if len(args) > 1:
        raise TypeError(f"list expected at most 1 argument, got {len(args)}")
    return _listed(args[0], "list()")


def _str_function(*args: Any, **kwargs: Any) -> str:
    if len(args) == 1 and not kwargs:
        return _built(_as_text(args[0], "str()"), "str()")
    return _built(str(*args, **kwargs), "str()")


OFFERED_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "range": _capped_range,
    "len": len,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "sorted": _sorted,
    "sum": _sum_function,
    "any": any,
    "all": all,
    "int": int,
    "float": float,
    "str": _str_function,
    "bool": bool,
    "list": _list_function,
}
"""The only functions expressions may call, by name."""

_OFFERED_IDS = frozenset(id(fn) for fn in OFFERED_FUNCTIONS.values())
_FORMAT_WIDTH = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_CONVERSION = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[-+ #0]*(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d+))?"
    r"[hlL]?(?P<kind>[diouxXeEfFgGcrsa%])"
)


def _check_format(spec: str) -> None:
    for match in _FORMAT_WIDTH.finditer(spec):
        for part in match.groups():
            if part == "*" or (part is not None and int(part) > 10_000):
                raise _refuse("%-formatting with a huge or computed width refused")


def _formatted(spec: str, args: Any, what: str) -> str:
    """``spec % args``, its size worked out from the conversions first."""
    _check_format(spec)
    if isinstance(args, tuple):
        positional: Sequence[Any] = args
    else:
        positional = (args,)
    mapping = args if isinstance(args, Mapping) else None
    size = len(spec)
    index = 0
    for match in _CONVERSION.finditer(spec):
        if match.group("kind") == "%":
            continue
        size += int(match.group("width") or 0) + int(match.group("precision") or 0)
        key = match.group("key")
        if key is not None and mapping is not None:
            value = mapping.get(key, "")
        elif index < len(positional):
            value = positional[index]
            index += 1
        else:
            value = ""
        size += _text(value) * (4 if match.group("kind") in "ra" else 1)
        if size > MAX_ITEMS:
            size = MAX_ITEMS + 1  # counted no further
            break
    _allow(size, what)
    text: str = spec % args
    return _built(text, what)


def _replaced(text: str, old: Any, new: Any, count: int = -1, *, what: str) -> str:
    """``text.replace(old, new, count)``, its size worked out first."""
    if not isinstance(old, str) or not isinstance(new, str):
        return _built(text.replace(old, new, count), what)
    found = len(text) + 1 if not old else text.count(old)
    if count is not None and count >= 0:
        found = min(found, count)
    size = len(text) + found * (len(new) - len(old))
    _allow(size, what, nbytes=size * _chars(text, new))
    return _built(text.replace(old, new, count), what)


def _joined(separator: str, items: Iterable[Any], what: str, *, strict: bool) -> str:
    """``separator.join(items)`` (``str`` of each unless ``strict``), its size first."""
    items = _sequence(items, what)
    size = 0
    for index, item in enumerate(items):
        if strict and not isinstance(item, str):
            raise TypeError(
                f"sequence item {index}: expected str instance, {type(item).__name__} found"
            )
        size += _text(item, MAX_ITEMS - size) + (len(separator) if index else 0)
        if size > MAX_ITEMS:
            size = MAX_ITEMS + 1  # counted no further
            break
    _allow(size, what, nbytes=4 * size)
    if strict:
        return _built(separator.join(items), what)
    return _built(separator.join(map(str, items)), what)


def _padded(text: str, width: Any, what: str) -> None:
    if isinstance(width, int):
        _allow(max(len(text), width), what, nbytes=max(len(text), width) * 4)


def _split_count(text: str, sep: Any, maxsplit: Any) -> int:
    found = text.count(sep) + 1 if isinstance(sep, str) and sep else len(text) // 2 + 1
    if isinstance(maxsplit, int) and maxsplit >= 0:
        found = min(found, maxsplit + 1)
    return found


def _method(obj: Any, name: str, bound: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """Call an offered method, sizing first what it would build."""
    what = f"{name}()"
    if name == "get" or name in ("count", "index", "find", "rfind") or name.startswith("is"):
        return bound(*args, **kwargs)  # an item of the object, or a number: nothing built
    if isinstance(obj, str):
        if name == "replace" and len(args) >= 2 and not kwargs:
            return _replaced(obj, args[0], args[1], *args[2:3], what=what)
        if name == "join" and len(args) == 1 and not kwargs:
            return _joined(obj, args[0], what, strict=True)
        if name in ("center", "ljust", "rjust", "zfill") and args:
            _padded(obj, args[0], what)
        elif name in ("split", "rsplit"):
            sep = args[0] if args else kwargs.get("sep")
            maxsplit = args[1] if len(args) > 1 else kwargs.get("maxsplit", -1)
            items = _split_count(obj, sep, maxsplit)
            _allow(items, what, nbytes=len(obj) + 64 * items)
        elif name == "splitlines":
            items = obj.count("\n") + obj.count("\r") + 1
            _allow(items, what, nbytes=len(obj) + 64 * items)
        elif name in ("upper", "lower", "title", "capitalize", "casefold"):
            _allow(len(obj), what, nbytes=3 * len(obj) * _chars(obj))
    result = bound(*args, **kwargs)
    if result is obj:
        return result  # the string itself (nothing to strip or replace)
    return _built(result, what)
