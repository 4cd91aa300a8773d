"""One tongue for conditions and prompts: sandboxed Jinja2 over the Aether.

Expressions (``when``, ``until``, ``set`` values, ``scatter.over``) are bare Jinja2
expressions — ``category == 'billing'`` — and templates (``prompt``, ``interrupt``
reasons, spell arguments) are text with ``{{ expression }}`` parts. Both run in an
:class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` with ``StrictUndefined``, and
names resolve to Aether keys (conduits and inputs).

Both are checked when the ritual file is validated: syntax, braces in an expression
field, undefined names (with a did-you-mean over conduits and inputs), attributes
starting with ``_``, calls to anything not explicitly offered, statements other
than ``if``/``for``/``set``, and — by evaluating every part that depends on no name —
sizes over the limits below.

**Bounded before they allocate.** Every operation that builds a string or a list
(``*``, ``+``, ``~``, ``%`` and ``format``, ``replace``, ``join``, ``center``/``ljust``/
``rjust``/``zfill``, ``indent``, ``batch``, ``slice``, ``sum``, ``list``, slicing, a
string conversion, a value written into a template) works out the size of its result
first and refuses when it would hold more than :data:`MAX_ITEMS` characters or items;
what it built is then counted against :data:`MAX_BUILT_BYTES`, the memory one
evaluation may build in all. ``range()`` is capped at :data:`MAX_RANGE` items and
``**`` at :data:`MAX_POWER_BITS` bits. Each refusal is an :class:`ExpressionError`
naming the sigil, the field and the expression.

**``${VAR}`` values are data.** A value a ritual file read from the environment is
never part of an expression's or a template's source: the source is parsed with a
placeholder where the value stood, and the value is bound afterwards as a constant
string (inside a quoted literal, as those characters of the literal; in a template's
text, as text). ``FOO="1 + 1"`` in ``set: {x: "${FOO}"}`` sets the string ``"1 + 1"``.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import functools
import math
import re
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from jinja2 import (
    StrictUndefined,
    TemplateError,
    TemplateSyntaxError,
    Undefined,
    UndefinedError,
    meta,
    nodes,
)
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.environment import TemplateExpression
from jinja2.exceptions import SecurityError
from jinja2.filters import FILTERS as JINJA_FILTERS
from jinja2.filters import make_attrgetter
from jinja2.parser import Parser
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.tests import TESTS as JINJA_TESTS
from jinja2.visitor import NodeTransformer

from sanctum.errors import ExpressionError
from sanctum.ritualfile.diagnostics import did_you_mean

if TYPE_CHECKING:
    from sanctum.ritualfile.env import Interpolation

__all__ = [
    "MAX_BUILT_BYTES",
    "MAX_ITEMS",
    "MAX_RANGE",
    "OFFERED_FUNCTIONS",
    "OFFERED_METHODS",
    "CompiledExpression",
    "CompiledTemplate",
    "ExpressionError",
    "check_expression",
    "check_template",
    "compile_expression",
    "compile_template",
    "shown_source",
]

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


# --------------------------------------------------------------------------- filters


def _filter_value(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, int]:
    """The filtered value and its index among ``args`` (after a context argument)."""
    index = 1 if getattr(fn, "jinja_pass_arg", None) is not None else 0
    return (args[index] if len(args) > index else None), index


def _arg(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: Any
) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


_TEXT_FILTERS = frozenset(
    {
        "capitalize",
        "e",
        "escape",
        "lower",
        "upper",
        "title",
        "trim",
        "striptags",
        "string",
        "truncate",
        "urlencode",
        "wordcount",
        "tojson",
    }
)
"""Filters that turn their value into text (then build at most a few times that)."""

_URL_ASCII = re.compile(r"[\x00-\x2c\x3a-\x40\x5b-\x5e\x60\x7b-\x7d\x7f]")
"""ASCII characters ``urlencode`` writes as ``%XX`` (all but letters, digits, ``-._~/``)."""
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def _count_matches(pattern: re.Pattern[str], text: str) -> int:
    return sum(1 for _ in pattern.finditer(text))


_LIST_FILTERS = frozenset({"list", "sort", "reverse", "dictsort", "items", "groupby"})
"""Filters that build a list about as long as their value."""


def _precheck(name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
    """Size a filter's result before it runs; returns a replacement call, or None."""
    value, at = _filter_value(fn, args)
    rest = args[at + 1 :]
    what = f"filter {name}"
    if name == "urlencode" and isinstance(value, str):
        # %XX for each byte of a character outside the safe set (up to 4 bytes in UTF-8)
        size = len(value) + 2 * _count_matches(_URL_ASCII, value)
        size += 11 * _count_matches(_NOT_ASCII, value) if not value.isascii() else 0
        _allow(size, what)
        return None
    if name in _TEXT_FILTERS:
        size = _text(value)
        _allow(size, what, nbytes=size)
        if name == "tojson":
            indent = _arg(rest, kwargs, 0, "indent", None)
            if isinstance(indent, int) and indent > MAX_JSON_INDENT:
                raise _refuse(f"tojson indent {indent} refused (limit {MAX_JSON_INDENT})")
        return None
    if name == "list":
        return lambda: _listed(value, what)
    if name in _LIST_FILTERS:
        if hasattr(value, "__len__"):
            size = len(value)
            _allow(size, what, nbytes=(80 if name in ("dictsort", "items") else 8) * size)
        return None
    if name == "replace":
        text = _as_text(value, what)
        old = _as_text(_arg(rest, kwargs, 0, "old", ""), what)
        new = _as_text(_arg(rest, kwargs, 1, "new", ""), what)
        count = _arg(rest, kwargs, 2, "count", None)
        if type(text) is str:
            return lambda: _replaced(text, old, new, -1 if count is None else count, what=what)
        return None
    if name == "join":
        separator = _as_text(_arg(rest, kwargs, 0, "d", ""), what)
        attribute = _arg(rest, kwargs, 1, "attribute", None)
        items: Any = value
        if attribute is not None:
            items = map(make_attrgetter(_ENV, attribute), _sequence(value, what))
        return lambda: _joined(separator, items, what, strict=False)
    if name == "center":
        _padded(_as_text(value, what), _arg(rest, kwargs, 0, "width", 80), what)
        return None
    if name == "indent":
        text = _as_text(value, what)
        width = _arg(rest, kwargs, 0, "width", 4)
        step = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        lines = text.count("\n") + text.count("\r") + 2
        size = len(text) + max(step, 0) * lines
        _allow(size, what, nbytes=size * 4)
        return None
    if name == "format":
        spec = _as_text(value, what)
        data = kwargs if kwargs else rest
        return lambda: _formatted(spec, data, what)
    if name == "batch":
        count = _arg(rest, kwargs, 0, "linecount", 1)
        fill = _arg(rest, kwargs, 1, "fill_with", None)
        seq = _sequence(value, what)
        if isinstance(count, int) and count > 0:
            batches = math.ceil(len(seq) / count)
            size = len(seq) + batches + (batches * count - len(seq) if fill is not None else 0)
            _allow(size, what, nbytes=8 * size + 64 * batches)
        return lambda: fn(*args[:at], seq, *rest, **kwargs)
    if name == "slice":
        parts = _arg(rest, kwargs, 0, "slices", 1)
        if isinstance(parts, int) and parts > MAX_SLICES:
            raise _refuse(f"slice into {parts} parts refused (limit {MAX_SLICES})")
        seq = _sequence(value, what)
        if isinstance(parts, int):
            _allow(len(seq) + 2 * max(parts, 0), what, nbytes=8 * len(seq) + 72 * max(parts, 0))
        return lambda: fn(*args[:at], seq, *rest, **kwargs)
    if name == "sum":
        start = _arg(rest, kwargs, 1, "start", 0)
        if isinstance(start, (list, tuple)):
            attribute = _arg(rest, kwargs, 0, "attribute", None)
            summed: Any = value
            if attribute is not None:
                summed = map(make_attrgetter(_ENV, attribute), _sequence(value, what))
            return lambda: _summed(summed, start, what)
        return None
    return None


_PASSING_FILTERS = frozenset({"attr", "d", "default", "first", "last", "max", "min"})
"""Filters that hand back a value they were given (or an item of it), building nothing."""


def _wrap_filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    if name in _PASSING_FILTERS:
        return fn

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        instead = _precheck(name, fn, args, kwargs)
        result = instead() if instead is not None else fn(*args, **kwargs)
        if result is _filter_value(fn, args)[0]:
            return result  # the value itself (an empty replace, a trim with nothing to trim)
        return _built(result, f"filter {name}")

    return guarded


# --------------------------------------------------------------------------- the sandbox


class _Generator(CodeGenerator):
    """Jinja2's code generator, with ``~`` going through the sandbox (it is not a binop)."""

    @optimizeconst
    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.concat_values((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


def _finalize(value: Any) -> Any:
    """What ``{{ value }}`` writes is sized before it is made text."""
    if not isinstance(value, str):
        _allow(_text(value), "writing a value")
    return value


class _Sandbox(ImmutableSandboxedEnvironment):
    """The sandbox: only offered callables, bounded sizes, no ``_`` attributes."""

    code_generator_class = _Generator
    intercepted_binops = frozenset({"*", "**", "+", "%", "//"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if attr.startswith("_"):
            return False
        return super().is_safe_attribute(obj, attr, value)

    def concat_values(self, values: tuple[Any, ...]) -> str:
        """``a ~ b ~ c``: the text of each, sized before it is joined."""
        size = 0
        for value in values:
            size += _text(value, MAX_ITEMS - size)
            if size > MAX_ITEMS:
                size = MAX_ITEMS + 1  # counted no further
                break
        _allow(size, "concatenation (~)", nbytes=4 * size)
        return _built("".join(map(str, values)), "concatenation (~)")

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(argument, slice) and isinstance(obj, (str, list, tuple)):
            size = len(range(*argument.indices(len(obj))))
            _allow(size, "slicing", nbytes=size * (1 if isinstance(obj, str) else 8))
            return _built(obj[argument], "slicing")
        return super().getitem(obj, argument)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if (
                isinstance(left, int)
                and isinstance(right, int)
                and right > 0
                and abs(left) > 1
                and max(left.bit_length(), 1) * right > MAX_POWER_BITS
            ):
                raise _refuse(f"power {left!r} ** {right!r} is too large")
            return left**right
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if (
                    isinstance(seq, (str, list, tuple, bytes))
                    and isinstance(count, int)
                    and not isinstance(count, bool)
                ):
                    size = len(seq) * max(count, 0)
                    if size > MAX_ITEMS:
                        raise _refuse(
                            f"repetition would build {size:,} items (limit {MAX_ITEMS:,})"
                        )
                    wide = 8 if not isinstance(seq, str) else _chars(seq)
                    _allow(size, "repetition", nbytes=size * wide)
                    return _built(left * right, "repetition")
            if (
                isinstance(left, int)
                and isinstance(right, int)
                and left.bit_length() + right.bit_length() > MAX_POWER_BITS
            ):
                raise _refuse("multiplication result is too large")
            return left * right
        if operator == "+":
            if isinstance(left, (str, list, tuple, bytes)) and isinstance(
                right, (str, list, tuple, bytes)
            ):
                size = len(left) + len(right)
                if size > MAX_ITEMS:
                    raise _refuse(f"concatenation would exceed {MAX_ITEMS:,} items")
                _allow(size, "concatenation (+)", nbytes=size * 8)
                return _built(cast(Any, left) + right, "concatenation (+)")
            return left + right
        if operator == "%":
            if isinstance(left, str):
                return _formatted(left, right, "%-formatting")
            return left % right
        return left // right

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("_loop_vars", None)
        kwargs.pop("_block_vars", None)
        if id(__obj) in _OFFERED_IDS:
            if __obj is min or __obj is max:
                return __obj(*args, **kwargs)  # an item it was given: nothing built
            return _built(__obj(*args, **kwargs), "call")
        owner = getattr(__obj, "__self__", None)
        name = getattr(__obj, "__name__", type(__obj).__name__)
        for kind, allowed in OFFERED_METHODS.items():
            if isinstance(owner, kind) and name in allowed:
                return _method(owner, name, __obj, args, kwargs)
        raise _refuse(f"calling {name!r} is not offered to expressions")


def _make_env() -> _Sandbox:
    env = _Sandbox(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.globals.clear()
    env.globals.update(OFFERED_FUNCTIONS)
    base = dict(env.filters)
    env.filters.clear()
    env.filters.update({name: _wrap_filter(name, base[name]) for name in _SAFE_FILTERS})
    return env


_ENV = _make_env()
_SINGLE = re.compile(r"\A\s*\{\{(?P<body>(?:(?!\}\}|\{\{).)*)\}\}\s*\Z", re.S)


# --------------------------------------------------------------------------- ${VAR} values


@dataclass(frozen=True)
class _Bound:
    """A source with each ``${VAR}`` value taken out, to be bound back as data.

    ``text`` is what is parsed: each value replaced by a placeholder name (``marker``,
    its index, ``_``); ``values`` and ``names`` are the values and their variables.
    """

    text: str
    values: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    marker: str = ""

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.marker) + r"(\d+)_")

    def show(self, text: str) -> str:
        """``text`` as messages show it: ``${NAME}`` where a value stood."""
        if not self.values:
            return text
        return self.pattern.sub(lambda m: "${" + self.names[int(m.group(1))] + "}", text)

    def value(self, text: str) -> str:
        """``text`` (a string of the parsed source) with its values put back."""
        return self.pattern.sub(lambda m: self.values[int(m.group(1))], text)


def _bind(source: str, done: Sequence[Interpolation] | None) -> _Bound:
    """Take the ``${VAR}`` values out of ``source`` (the text after substitution)."""
    if not done:
        return _Bound(source)
    marker = "sanctum_env_"
    while marker in source:
        marker = "x" + marker
    text: list[str] = []
    values: list[str] = []
    names: list[str] = []
    cursor = 0
    for item in sorted(done, key=lambda i: i.at):
        end = item.at + len(item.value)
        if item.at < cursor or source[item.at : end] != item.value:
            continue  # not where it says (an Interpolation built elsewhere): plain text
        text.append(source[cursor : item.at])
        text.append(f"{marker}{len(values)}_")
        values.append(item.value)
        names.append(item.name)
        cursor = end
    text.append(source[cursor:])
    return _Bound("".join(text), tuple(values), tuple(names), marker)


def shown_source(source: str, done: Sequence[Interpolation] | None = None) -> str:
    """An expression or template as messages show it: ``${NAME}`` where a value stood.

    Args:
        source: The text after ``${VAR}`` substitution.
        done: The substitutions made in it (:attr:`LoadedFile.interpolations`).

    Returns:
        The text with each value written back as its ``${NAME}``, so a message never
        repeats a value read from the environment.
    """
    bound = _bind(source, done)
    return bound.show(bound.text)


class _Binder(NodeTransformer):
    """Puts the values back into a parsed tree, as constants and as literal text."""

    def __init__(self, bound: _Bound) -> None:
        self.bound = bound

    def visit_Name(self, node: nodes.Name) -> nodes.Node:
        match = self.bound.pattern.fullmatch(node.name)
        if match is None or node.ctx != "load":
            return node
        return nodes.Const(self.bound.values[int(match.group(1))], lineno=node.lineno)

    def visit_Const(self, node: nodes.Const) -> nodes.Node:
        if isinstance(node.value, str) and self.bound.marker in node.value:
            return nodes.Const(self.bound.value(node.value), lineno=node.lineno)
        return node

    def visit_TemplateData(self, node: nodes.TemplateData) -> nodes.Node:
        if self.bound.marker in node.data:
            return nodes.TemplateData(self.bound.value(node.data), lineno=node.lineno)
        return node


def _bound_tree(tree: nodes.Node, bound: _Bound) -> tuple[nodes.Node, list[str]]:
    """``tree`` with its values bound, and a message per value standing where none can."""
    if not bound.values:
        return tree, []
    tree = _Binder(bound).visit(tree)
    problems: list[str] = []
    for node in (tree, *tree.find_all(nodes.Node)):
        for _name, value in node.iter_fields():
            texts = value if isinstance(value, list) else [value]
            for text in texts:
                if not isinstance(text, str):
                    continue
                for match in bound.pattern.finditer(text):
                    name = bound.names[int(match.group(1))]
                    problems.append(
                        f"${{{name}}} stands inside a name here; a value read from the "
                        "environment is text, never expression source: use it alone as a "
                        f"value, or inside quotes ('...${{{name}}}...')"
                    )
    return tree, list(dict.fromkeys(problems))


# --------------------------------------------------------------------------- static checks


def _parse_expression(source: str) -> nodes.Expr:
    parser = Parser(_ENV, source, state="variable")
    expr = parser.parse_expression()
    if not parser.stream.eos:
        raise TemplateSyntaxError(
            f"unexpected {parser.stream.current.value!r} after the expression",
            parser.stream.current.lineno,
        )
    return expr


def _unknown_helper(kind: str, name: str, offered: Collection[str], jinja: Collection[str]) -> str:
    """The message for a filter or test the sandbox does not have."""
    offered = [n for n in offered if n.isidentifier()]  # not the `==` style aliases
    if name in jinja:
        return (
            f"{kind} {name!r} is not offered in the sandbox; offered {kind}s: "
            f"{', '.join(sorted(offered))}"
        )
    hint = did_you_mean(name, offered)
    return f"unknown {kind} {name!r}" + (hint or f"; offered {kind}s: {', '.join(sorted(offered))}")


def _static_checks(tree: nodes.Node, *, template: bool) -> list[str]:
    problems: list[str] = []
    for node in tree.find_all(nodes.Node):
        if isinstance(node, nodes.Filter) and node.name not in _ENV.filters:
            problems.append(_unknown_helper("filter", node.name, _ENV.filters, JINJA_FILTERS))
        elif isinstance(node, nodes.Test) and node.name not in _ENV.tests:
            problems.append(_unknown_helper("test", node.name, _ENV.tests, JINJA_TESTS))
        elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            problems.append(f"attribute {node.attr!r} refused (names starting with _ are private)")
        elif isinstance(node, nodes.Call):
            target = node.node
            if isinstance(target, nodes.Name):
                if target.name not in OFFERED_FUNCTIONS:
                    problems.append(
                        f"calling {target.name!r} is not offered; offered functions: "
                        f"{', '.join(sorted(OFFERED_FUNCTIONS))}"
                    )
            elif isinstance(target, nodes.Getattr):
                if target.attr not in _ALL_METHODS:
                    problems.append(
                        f"calling method {target.attr!r} is not offered; offered methods: "
                        f"{', '.join(sorted(_ALL_METHODS))}"
                    )
            else:
                problems.append("only offered functions and methods may be called")
        elif (
            template and isinstance(node, nodes.Stmt) and not isinstance(node, _ALLOWED_STATEMENTS)
        ):
            problems.append(
                f"statement {type(node).__name__.lower()} is not allowed in templates "
                "(only if, for and set)"
            )
    if template and _loop_depth(tree) > MAX_LOOP_DEPTH:
        problems.append(f"for loops nested deeper than {MAX_LOOP_DEPTH} levels")
    return problems


def _loop_depth(node: nodes.Node) -> int:
    deepest = 0
    for child in node.iter_child_nodes():
        depth = _loop_depth(child)
        if isinstance(child, nodes.For):
            depth += 1
        deepest = max(deepest, depth)
    return deepest


def _undeclared(tree: nodes.Template, known: Collection[str]) -> list[str]:
    names = meta.find_undeclared_variables(tree)  # may raise TemplateError
    called = {c.node.name for c in tree.find_all(nodes.Call) if isinstance(c.node, nodes.Name)}
    return sorted(n for n in names if n not in known and n not in called)


def _undefined_message(name: str, known: Collection[str]) -> str:
    hint = did_you_mean(name, known)
    text = f"{name!r} is not a conduit or input{hint}"
    if not hint:
        text += (
            f"; declare it under `aether:` or `inputs:` (to write the text {name}, quote it "
            f"inside the expression: \"'{name}'\")"
        )
    return text


def check_expression(
    source: str, known: Collection[str], done: Sequence[Interpolation] | None = None
) -> list[str]:
    """Check a bare expression: syntax, no braces, sandbox rules, defined names, sizes.

    Args:
        source: The expression as written (``"category == 'billing'"``), after
            ``${VAR}`` substitution.
        known: Names that exist (conduits, inputs, local names such as a scatter item).
        done: The ``${VAR}`` substitutions made in ``source``: their values are data
            (string constants), never part of the expression's source.

    Returns:
        One message per problem; empty when the expression is fine.
    """
    bound = _bind(source, done)
    text = bound.text
    if len(text) > MAX_SOURCE:
        return [f"expression is {len(text)} characters long (limit {MAX_SOURCE})"]
    if "{{" in text or "{%" in text or "}}" in text:
        inner = _SINGLE.match(text)
        suggestion = (
            bound.show(inner.group("body").strip()) if inner else "the expression without braces"
        )
        return [
            "braces in an expression field: conditions and set values are bare "
            f"expressions; write `{suggestion}`"
        ]
    if not text.strip():
        return ["empty expression"]
    try:
        expr = _parse_expression(text)
    except TemplateError as exc:
        return [f"invalid expression: {bound.show(_jinja_message(exc))}"]
    tree: nodes.Node = nodes.Template([nodes.Output([expr])], lineno=1)
    tree, misplaced = _bound_tree(tree, bound)
    tree.set_environment(_ENV)
    if misplaced:
        return misplaced
    return _checked(tree, known, template=False, what="expression", bound=bound)


def check_template(
    source: str, known: Collection[str], done: Sequence[Interpolation] | None = None
) -> list[str]:
    """Check a text template: syntax, sandbox rules, defined names, sizes.

    Args:
        source: The template as written (``"Classify: {{ ticket }}"``), after ``${VAR}``
            substitution.
        known: Names that exist (conduits, inputs, local names).
        done: The ``${VAR}`` substitutions made in ``source``: their values are data
            (text, or string constants inside ``{{ }}``), never template source.

    Returns:
        One message per problem; empty when the template is fine.
    """
    bound = _bind(source, done)
    if len(bound.text) > MAX_SOURCE:
        return [f"template is {len(bound.text)} characters long (limit {MAX_SOURCE})"]
    try:
        tree: nodes.Node = _ENV.parse(bound.text)
    except TemplateError as exc:
        lineno = getattr(exc, "lineno", None)
        where = f" (line {lineno} of the template)" if lineno and lineno > 1 else ""
        return [f"invalid template{where}: {bound.show(_jinja_message(exc))}"]
    tree, misplaced = _bound_tree(tree, bound)
    tree.set_environment(_ENV)
    if misplaced:
        return misplaced
    return _checked(tree, known, template=True, what="template", bound=bound)


def _jinja_message(exc: TemplateError) -> str:
    """Jinja2's own message, without its trailing full stop."""
    return (exc.message or type(exc).__name__).rstrip(".")


def _checked(
    tree: nodes.Node, known: Collection[str], *, template: bool, what: str, bound: _Bound
) -> list[str]:
    """The sandbox rules, the undefined names, then the sizes of a parsed source.

    Jinja2's own compile-time refusals (an unknown filter or test, a misplaced
    statement) never escape: each becomes one message.
    """
    assert isinstance(tree, nodes.Template)
    problems = _static_checks(tree, template=template)
    try:
        undeclared = _undeclared(tree, known)
    except TemplateError as exc:
        if not problems:  # already explained by the checks above otherwise
            problems.append(f"invalid {what}: {bound.show(_jinja_message(exc))}")
        return problems
    problems += [_undefined_message(n, known) for n in undeclared]
    if not problems:
        problems += _constant_refusals(tree, known)
    return problems


_OPERATIONS = (nodes.BinExpr, nodes.Concat, nodes.Filter, nodes.Call, nodes.Getitem)
_AMPLIFYING = (nodes.Mul, nodes.Pow, nodes.Mod, nodes.Filter, nodes.Call)
"""What can build more than its operands hold (``~`` and ``+`` of literals cannot)."""


def _constant_refusals(tree: nodes.Node, known: Collection[str]) -> list[str]:
    """Evaluate every part that depends on no name; report what the sandbox refuses.

    ``(('x' * 100000).replace('x', 'x' * 10000)) | length`` is refused when the file
    is validated, at the expression's position, without building anything big (each
    operation sizes its result first). Other failures are left for run time, where
    they belong to a branch that may never be taken.
    """
    problems: list[str] = []

    def visit(node: nodes.Node) -> None:
        if (
            isinstance(node, _OPERATIONS)
            and _calls_offered(node, known)
            and (isinstance(node, _AMPLIFYING) or any(True for _ in node.find_all(_AMPLIFYING)))
        ):
            message = _evaluate_constant(node)
            if message is not None:
                problems.append(message)
            return
        for child in node.iter_child_nodes():
            visit(child)

    visit(tree)
    return problems


def _calls_offered(node: nodes.Node, known: Collection[str]) -> bool:
    """Whether ``node`` depends on no name: its only Names are offered functions."""
    for inner in (node, *node.find_all(nodes.Node)):
        if isinstance(inner, (nodes.ContextReference, nodes.DerivedContextReference)):
            return False
        if isinstance(inner, nodes.Name) and (
            inner.name not in OFFERED_FUNCTIONS or inner.name in known
        ):
            return False
    return True


def _evaluate_constant(node: nodes.Expr) -> str | None:
    """Evaluate a part that depends on no name; the sandbox's refusal, or None."""
    try:
        program = _program_of(copy.deepcopy(node, {id(_ENV): _ENV}))
    except Exception:
        return None
    token = _SPENT.set([0])
    try:
        program()
    except SecurityError as exc:
        return f"refused by the sandbox: {exc}"
    except Exception:
        return None
    finally:
        _SPENT.reset(token)
    return None


def _program_of(expr: nodes.Expr) -> TemplateExpression:
    """The program of one expression (its value is the template's ``result``)."""
    body = [nodes.Assign(nodes.Name("result", "store", lineno=1), expr, lineno=1)]
    template = nodes.Template(body, lineno=1)
    template.set_environment(_ENV)
    return TemplateExpression(_ENV.from_string(template), undefined_to_none=False)


# --------------------------------------------------------------------------- evaluation


@dataclass
class _Located:
    source: str
    """The source as messages show it (``${NAME}`` where a value stood)."""
    sigil: str
    field: str
    _bound: _Bound | None = dataclasses.field(default=None, repr=False, compare=False)
    """The parsed source and its ``${VAR}`` values (None: ``source`` itself, no values)."""

    @property
    def _code(self) -> _Bound:
        return self._bound if self._bound is not None else _Bound(self.source)

    def _fail(self, exc: BaseException) -> ExpressionError:
        if isinstance(exc, UndefinedError):
            why = f"{exc.message}; it has no value yet (give the conduit a default)"
        elif isinstance(exc, SecurityError):
            why = f"refused by the sandbox: {exc}"
        else:
            why = f"{type(exc).__name__}: {exc}"
        return ExpressionError(
            f"sigil {self.sigil!r}: {self.field} `{self.source}`: {why}",
            sigil=self.sigil,
            expression=self.source,
            field=self.field,
        )


@dataclass
class CompiledExpression(_Located):
    """A bare expression, parsed and ready to evaluate against an Aether.

    The Python code is generated lazily on first use and shared between identical
    sources, so validating a large ritual stays fast.
    """

    _program: Any = field(default=None, repr=False)

    def evaluate(self, aether: Mapping[str, Any]) -> Any:
        """Evaluate against the Aether (names are Aether keys).

        Every result is sized before it is built (:data:`MAX_ITEMS`), and the
        evaluation builds at most :data:`MAX_BUILT_BYTES` in all.

        Raises:
            ExpressionError: On an undefined name, a sandbox refusal or any failure.
        """
        token = _SPENT.set([0])
        try:
            if self._program is None:
                code = self._code
                self._program = _compiled_expression(code.text, code.values, code.marker)
            result = self._program(**aether)
        except Exception as exc:
            raise self._fail(exc) from exc
        finally:
            _SPENT.reset(token)
        if isinstance(result, Undefined):
            try:
                str(result)
            except Exception as exc:
                raise self._fail(exc) from exc
            raise self._fail(UndefinedError(f"{self.source!r} is undefined"))
        return result

    def condition(self, aether: Mapping[str, Any]) -> bool:
        """Evaluate as a condition, which must be a boolean.

        Raises:
            ExpressionError: When the result is not ``True``/``False`` (compare
                explicitly, e.g. ``count > 0``), or evaluation fails.
        """
        result = self.evaluate(aether)
        if not isinstance(result, bool):
            raise ExpressionError(
                f"sigil {self.sigil!r}: {self.field} `{self.source}` gave "
                f"{type(result).__name__} {result!r:.60}, not a boolean; compare explicitly "
                "(e.g. `x == 'yes'`, `items | length > 0`, `x is defined`)",
                sigil=self.sigil,
                expression=self.source,
                field=self.field,
            )
        return result


@dataclass
class CompiledTemplate(_Located):
    """A text template (or a single ``{{ expression }}`` keeping its type)."""

    _program: Any = field(default=None, repr=False)
    _native: CompiledExpression | None = field(default=None, repr=False)

    def render(self, aether: Mapping[str, Any]) -> str:
        """Render to text against the Aether; output is capped at MAX_ITEMS characters.

        Every value built on the way is sized first, as for expressions.

        Raises:
            ExpressionError: On an undefined name, a sandbox refusal or any failure.
        """
        token = _SPENT.set([0])
        try:
            if self._program is None:
                code = self._code
                self._program = _compiled_template(code.text, code.values, code.marker)
            size = 0
            parts: list[str] = []
            for chunk in self._program.generate(**aether):
                size += len(chunk)
                if size > MAX_ITEMS:
                    raise _refuse(f"template output exceeds {MAX_ITEMS} characters")
                parts.append(chunk)
            return "".join(parts)
        except Exception as exc:
            raise self._fail(exc) from exc
        finally:
            _SPENT.reset(token)

    def value(self, aether: Mapping[str, Any]) -> Any:
        """Like :meth:`render`, but ``"{{ expr }}"`` alone returns the expression's value."""
        if self._native is not None:
            return self._native.evaluate(aether)
        return self.render(aether)


def _bound_values(tree: nodes.Node, values: tuple[str, ...], marker: str) -> nodes.Node:
    """A parsed tree with its ``${VAR}`` values bound (names are only for messages)."""
    if not values:
        return tree
    bound = _Bound("", values, tuple("VAR" for _ in values), marker)
    tree, misplaced = _bound_tree(tree, bound)
    if misplaced:
        raise TemplateSyntaxError(misplaced[0], 1)
    return tree


@functools.lru_cache(maxsize=4096)
def _compiled_expression(text: str, values: tuple[str, ...], marker: str) -> Any:
    if not values:
        return _ENV.compile_expression(text, undefined_to_none=False)
    expr = _bound_values(_parse_expression(text), values, marker)
    assert isinstance(expr, nodes.Expr)
    expr.set_environment(_ENV)
    return _program_of(expr)


@functools.lru_cache(maxsize=4096)
def _compiled_template(text: str, values: tuple[str, ...], marker: str) -> Any:
    if not values:
        return _ENV.from_string(text)
    tree = _bound_values(_ENV.parse(text), values, marker)
    assert isinstance(tree, nodes.Template)
    tree.set_environment(_ENV)
    return _ENV.from_string(tree)


def compile_expression(
    source: str, *, sigil: str, field: str, done: Sequence[Interpolation] | None = None
) -> CompiledExpression:
    """Prepare a bare expression for evaluation (check it first with check_expression).

    Args:
        source: The expression text (after ``${VAR}`` substitution).
        sigil: The Sigil it belongs to (for messages).
        field: The ritual-file field it came from (``when``, ``until``, ``set.x``).
        done: The ``${VAR}`` substitutions made in ``source``: each value is bound as
            a string constant after the expression is parsed, never parsed itself.

    Returns:
        The :class:`CompiledExpression`.
    """
    bound = _bind(source, done)
    return CompiledExpression(bound.show(bound.text), sigil, field, bound if done else None)


def compile_template(
    source: str, *, sigil: str, field: str, done: Sequence[Interpolation] | None = None
) -> CompiledTemplate:
    """Prepare a template for rendering (check it first with check_template).

    Args:
        source: The template text (after ``${VAR}`` substitution).
        sigil: The Sigil it belongs to (for messages).
        field: The ritual-file field it came from (``prompt``, ``arguments.x``).
        done: The ``${VAR}`` substitutions made in ``source``: each value is bound as
            text (or a string constant inside ``{{ }}``) after the template is
            parsed, never parsed itself.

    Returns:
        The :class:`CompiledTemplate`.
    """
    bound = _bind(source, done)
    template = CompiledTemplate(bound.show(bound.text), sigil, field, bound if done else None)
    single = _SINGLE.match(bound.text)
    if single is not None:
        body = single.group("body").strip()
        inner = _Bound(body, bound.values, bound.names, bound.marker) if done else None
        template._native = CompiledExpression(bound.show(body), sigil, field, inner)
    return template


def known_names(*groups: Iterable[str]) -> frozenset[str]:
    """Union of name groups (conduits, inputs, locals) for the checks."""
    return frozenset(name for group in groups for name in group)
