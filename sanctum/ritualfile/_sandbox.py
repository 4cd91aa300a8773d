"""The sandbox expressions run in: bounded filters and operators, ``${VAR}`` as data.

Private to :mod:`sanctum.ritualfile` (see :mod:`sanctum.ritualfile.expressions`): the
Jinja2 filters wrapped to size their results first, the sandboxed environment whose
operators, calls and ``~`` go through the bounds of :mod:`._bounds`, and the binding of
``${VAR}`` values as constants after parsing.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from jinja2 import (
    StrictUndefined,
    nodes,
)
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.filters import make_attrgetter
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from sanctum.ritualfile._bounds import (
    _OFFERED_IDS,
    _SAFE_FILTERS,
    MAX_ITEMS,
    MAX_JSON_INDENT,
    MAX_POWER_BITS,
    MAX_SLICES,
    OFFERED_FUNCTIONS,
    OFFERED_METHODS,
    _allow,
    _as_text,
    _built,
    _chars,
    _formatted,
    _joined,
    _listed,
    _method,
    _padded,
    _refuse,
    _replaced,
    _sequence,
    _summed,
    _text,
)

if TYPE_CHECKING:
    from sanctum.ritualfile.env import Interpolation

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
