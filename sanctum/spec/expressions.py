"""One tongue for conditions and prompts: sandboxed Jinja2 over the Aether.

Expressions (``when``, ``until``, ``set`` values, ``scatter.over``) are bare Jinja2
expressions — ``category == 'billing'`` — and templates (``prompt``, ``interrupt``
reasons, spell arguments) are text with ``{{ expression }}`` parts. Both run in an
:class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` with ``StrictUndefined``, and
names resolve to Aether keys (conduits and inputs).

Both are checked when the ritual file is validated: syntax, braces in an expression
field, undefined names (with a did-you-mean over conduits and inputs), attributes
starting with ``_``, calls to anything not explicitly offered, and statements other
than ``if``/``for``/``set``. At run time the sandbox also refuses huge ranges,
repetition and concatenation (``'x' * 10**9``), huge powers and over-long output; each
refusal is an :class:`ExpressionError` naming the sigil and the expression.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jinja2 import (
    StrictUndefined,
    TemplateError,
    TemplateSyntaxError,
    Undefined,
    UndefinedError,
    meta,
    nodes,
)
from jinja2.exceptions import SecurityError
from jinja2.filters import FILTERS as JINJA_FILTERS
from jinja2.parser import Parser
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.tests import TESTS as JINJA_TESTS

from sanctum.errors import ExpressionError
from sanctum.spec.diagnostics import did_you_mean

__all__ = [
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
]

MAX_RANGE = 10_000
"""Longest ``range()`` an expression may build."""

MAX_ITEMS = 1_000_000
"""Longest string (characters) or list (items) an operation may produce."""

MAX_POWER_BITS = 10_000
"""Largest integer (in bits) ``**`` may produce."""

MAX_SOURCE = 100_000
"""Longest expression or template source accepted, in characters."""

MAX_LOOP_DEPTH = 2
"""Deepest nesting of ``{% for %}`` loops in a template."""

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
    "capitalize",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "groupby",
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


def _size(value: Any) -> int:
    if isinstance(value, (str, list, tuple, bytes)):
        return len(value)
    return 0


def _guard_size(value: Any, what: str) -> Any:
    if _size(value) > MAX_ITEMS:
        raise _refuse(f"{what} would build {_size(value)} items (limit {MAX_ITEMS})")
    return value


def _capped_range(*args: int) -> range:
    result = range(*args)
    if len(result) > MAX_RANGE:
        raise _refuse(f"range of {len(result)} items refused (limit {MAX_RANGE})")
    return result


OFFERED_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "range": _capped_range,
    "len": len,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "sorted": sorted,
    "sum": sum,
    "any": any,
    "all": all,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list": list,
}
"""The only functions expressions may call, by name."""

_OFFERED_IDS = frozenset(id(fn) for fn in OFFERED_FUNCTIONS.values())
_FORMAT_WIDTH = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_format(spec: str) -> None:
    for match in _FORMAT_WIDTH.finditer(spec):
        for part in match.groups():
            if part == "*" or (part is not None and int(part) > 10_000):
                raise _refuse("%-formatting with a huge or computed width refused")


def _wrap_filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        return _guard_size(fn(*args, **kwargs), f"filter {name}")

    return guarded


class _Sandbox(ImmutableSandboxedEnvironment):
    """The sandbox: only offered callables, bounded sizes, no ``_`` attributes."""

    intercepted_binops = frozenset({"*", "**", "+", "%", "//"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if attr.startswith("_"):
            return False
        return super().is_safe_attribute(obj, attr, value)

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
                if _size(seq) and isinstance(count, int) and _size(seq) * count > MAX_ITEMS:
                    raise _refuse(
                        f"repetition would build {_size(seq) * count} items (limit {MAX_ITEMS})"
                    )
            if (
                isinstance(left, int)
                and isinstance(right, int)
                and left.bit_length() + right.bit_length() > MAX_POWER_BITS
            ):
                raise _refuse("multiplication result is too large")
            return left * right
        if operator == "+":
            if _size(left) + _size(right) > MAX_ITEMS:
                raise _refuse(f"concatenation would exceed {MAX_ITEMS} items")
            return left + right
        if operator == "%":
            if isinstance(left, str):
                _check_format(left)
                return _guard_size(left % right, "%-formatting")
            return left % right
        return left // right

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("_loop_vars", None)
        kwargs.pop("_block_vars", None)
        if id(__obj) in _OFFERED_IDS:
            return __self._guarded(__obj(*args, **kwargs))
        owner = getattr(__obj, "__self__", None)
        name = getattr(__obj, "__name__", type(__obj).__name__)
        for kind, allowed in OFFERED_METHODS.items():
            if isinstance(owner, kind) and name in allowed:
                return __self._guarded(__obj(*args, **kwargs))
        raise _refuse(f"calling {name!r} is not offered to expressions")

    @staticmethod
    def _guarded(value: Any) -> Any:
        return _guard_size(value, "call")


def _make_env() -> _Sandbox:
    env = _Sandbox(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.globals.clear()
    env.globals.update(OFFERED_FUNCTIONS)
    base = dict(env.filters)
    env.filters.clear()
    env.filters.update({name: _wrap_filter(name, base[name]) for name in _SAFE_FILTERS})
    return env


_ENV = _make_env()
_SINGLE = re.compile(r"\A\s*\{\{(?P<body>(?:(?!\}\}|\{\{).)*)\}\}\s*\Z", re.S)


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


def check_expression(source: str, known: Collection[str]) -> list[str]:
    """Check a bare expression: syntax, no braces, sandbox rules, defined names.

    Args:
        source: The expression as written (``"category == 'billing'"``).
        known: Names that exist (conduits, inputs, local names such as a scatter item).

    Returns:
        One message per problem; empty when the expression is fine.
    """
    if len(source) > MAX_SOURCE:
        return [f"expression is {len(source)} characters long (limit {MAX_SOURCE})"]
    if "{{" in source or "{%" in source or "}}" in source:
        inner = _SINGLE.match(source)
        suggestion = inner.group("body").strip() if inner else "the expression without braces"
        return [
            "braces in an expression field: conditions and set values are bare "
            f"expressions; write `{suggestion}`"
        ]
    if not source.strip():
        return ["empty expression"]
    try:
        expr = _parse_expression(source)
    except TemplateError as exc:
        return [f"invalid expression: {_jinja_message(exc)}"]
    tree = nodes.Template([nodes.Output([expr])], lineno=1)
    tree.set_environment(_ENV)
    return _checked(tree, known, template=False, what="expression")


def check_template(source: str, known: Collection[str]) -> list[str]:
    """Check a text template: syntax, sandbox rules, defined names.

    Args:
        source: The template as written (``"Classify: {{ ticket }}"``).
        known: Names that exist (conduits, inputs, local names).

    Returns:
        One message per problem; empty when the template is fine.
    """
    if len(source) > MAX_SOURCE:
        return [f"template is {len(source)} characters long (limit {MAX_SOURCE})"]
    try:
        tree = _ENV.parse(source)
    except TemplateError as exc:
        lineno = getattr(exc, "lineno", None)
        where = f" (line {lineno} of the template)" if lineno and lineno > 1 else ""
        return [f"invalid template{where}: {_jinja_message(exc)}"]
    return _checked(tree, known, template=True, what="template")


def _jinja_message(exc: TemplateError) -> str:
    """Jinja2's own message, without its trailing full stop."""
    return (exc.message or type(exc).__name__).rstrip(".")


def _checked(
    tree: nodes.Template, known: Collection[str], *, template: bool, what: str
) -> list[str]:
    """The sandbox rules, then the undefined names, of a parsed expression or template.

    Jinja2's own compile-time refusals (an unknown filter or test, a misplaced
    statement) never escape: each becomes one message.
    """
    problems = _static_checks(tree, template=template)
    try:
        undeclared = _undeclared(tree, known)
    except TemplateError as exc:
        if not problems:  # already explained by the checks above otherwise
            problems.append(f"invalid {what}: {_jinja_message(exc)}")
        return problems
    problems += [_undefined_message(n, known) for n in undeclared]
    return problems


# --------------------------------------------------------------------------- evaluation


@dataclass
class _Located:
    source: str
    sigil: str
    field: str

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

        Raises:
            ExpressionError: On an undefined name, a sandbox refusal or any failure.
        """
        try:
            if self._program is None:
                self._program = _compiled_expression(self.source)
            result = self._program(**aether)
        except Exception as exc:
            raise self._fail(exc) from exc
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

        Raises:
            ExpressionError: On an undefined name, a sandbox refusal or any failure.
        """
        try:
            if self._program is None:
                self._program = _compiled_template(self.source)
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

    def value(self, aether: Mapping[str, Any]) -> Any:
        """Like :meth:`render`, but ``"{{ expr }}"`` alone returns the expression's value."""
        if self._native is not None:
            return self._native.evaluate(aether)
        return self.render(aether)


@functools.lru_cache(maxsize=4096)
def _compiled_expression(source: str) -> Any:
    return _ENV.compile_expression(source, undefined_to_none=False)


@functools.lru_cache(maxsize=4096)
def _compiled_template(source: str) -> Any:
    return _ENV.from_string(source)


def compile_expression(source: str, *, sigil: str, field: str) -> CompiledExpression:
    """Prepare a bare expression for evaluation (check it first with check_expression).

    Args:
        source: The expression text.
        sigil: The Sigil it belongs to (for messages).
        field: The ritual-file field it came from (``when``, ``until``, ``set.x``).

    Returns:
        The :class:`CompiledExpression`.
    """
    return CompiledExpression(source, sigil, field)


def compile_template(source: str, *, sigil: str, field: str) -> CompiledTemplate:
    """Prepare a template for rendering (check it first with check_template).

    Args:
        source: The template text.
        sigil: The Sigil it belongs to (for messages).
        field: The ritual-file field it came from (``prompt``, ``arguments.x``).

    Returns:
        The :class:`CompiledTemplate`.
    """
    template = CompiledTemplate(source, sigil, field)
    single = _SINGLE.match(source)
    if single is not None:
        template._native = CompiledExpression(single.group("body").strip(), sigil, field)
    return template


def known_names(*groups: Iterable[str]) -> frozenset[str]:
    """Union of name groups (conduits, inputs, locals) for the checks."""
    return frozenset(name for group in groups for name in group)
