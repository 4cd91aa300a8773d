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

This module checks and compiles; the limits and the sizing live in the private
``_bounds`` module, the sandboxed environment and the binding of ``${VAR}`` values in
``_sandbox``.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jinja2 import (
    TemplateError,
    TemplateSyntaxError,
    Undefined,
    UndefinedError,
    meta,
    nodes,
)
from jinja2.environment import TemplateExpression
from jinja2.exceptions import SecurityError
from jinja2.filters import FILTERS as JINJA_FILTERS
from jinja2.parser import Parser
from jinja2.tests import TESTS as JINJA_TESTS

from sanctum.errors import ExpressionError
from sanctum.ritualfile._bounds import (
    _ALL_METHODS,
    _ALLOWED_STATEMENTS,
    _SPENT,
    MAX_BUILT_BYTES,
    MAX_ITEMS,
    MAX_LOOP_DEPTH,
    MAX_RANGE,
    MAX_SOURCE,
    OFFERED_FUNCTIONS,
    OFFERED_METHODS,
    _refuse,
)
from sanctum.ritualfile._sandbox import _ENV, _SINGLE, _bind, _Bound, _bound_tree, shown_source
from sanctum.ritualfile._suggest import did_you_mean

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
    "TemplateProblem",
    "check_expression",
    "check_template",
    "compile_expression",
    "compile_template",
    "shown_source",
]


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


class TemplateProblem(str):
    """A template problem's message that knows the template line it is on (1-based)."""

    line: int | None = None

    @classmethod
    def at(cls, message: str, line: int | None) -> TemplateProblem:
        """The message, marked with its line (None: the template as a whole)."""
        problem = cls(message)
        problem.line = line
        return problem


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
        One message per problem; empty when the template is fine. A syntax error's
        message is a :class:`TemplateProblem` whose ``line`` is the template's line.
    """
    bound = _bind(source, done)
    if len(bound.text) > MAX_SOURCE:
        return [f"template is {len(bound.text)} characters long (limit {MAX_SOURCE})"]
    try:
        tree: nodes.Node = _ENV.parse(bound.text)
    except TemplateError as exc:
        lineno = getattr(exc, "lineno", None)
        where = f" (line {lineno} of the template)" if lineno and lineno > 1 else ""
        message = f"invalid template{where}: {bound.show(_jinja_message(exc))}"
        return [TemplateProblem.at(message, lineno)]
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
