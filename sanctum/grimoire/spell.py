"""The Grimoire's pages: Spells and the @spell inscription.

Spell — a tool. A Spell wraps a callable with a JSON schema (name, description,
parameters) an Oracle (LLM adapter) can reason about. Declare one with the
:func:`spell` decorator — the schema is inferred from the type hints and the
docstring — or load a folder of them with ``Tome.load_from_directory``.
"""

from __future__ import annotations

import copy
import enum
import functools
import inspect
import json
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from sanctum.errors import SpellExecutionError
from sanctum.ritual.mandate import Mandate, current_mandate

__all__ = ["ACCESS_LEVELS", "Spell", "infer_parameters", "injected_parameters", "spell"]

ACCESS_LEVELS = ("read", "propose", "write")
"""What a Spell may do: read records, propose a draft, or write (unlabeled: write)."""

_SCALARS: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    bytes: "string",
}


@dataclass(slots=True)
class Spell:
    """One inscribed tool: a callable and the schema that describes it.

    Spell — a tool. ``parameters`` is a JSON Schema object describing the keyword
    arguments of ``fn``, which may be sync or async. Instances stay callable —
    invoking the Spell directly calls ``fn`` unchanged.

    A parameter of ``fn`` annotated :class:`~sanctum.ritual.mandate.Mandate` is not
    the model's to fill: it is left out of the inferred schema and receives the run's
    Mandate when the Spell is cast.

    Attributes:
        name: The name Oracles use to request the Spell.
        description: One line telling the model what the Spell does.
        parameters: JSON Schema (``{"type": "object", "properties", "required"}``).
        fn: The callable cast with the arguments as keyword arguments.
        access: ``"read"``, ``"propose"`` or ``"write"``; None (unlabeled) counts as
            ``"write"``, the conservative choice (see :attr:`level`).
        roles: The roles allowed to use the Spell (a Mandate needs one of them); None
            means anyone.
        repeatable: A poller: calling it again with the same arguments is normal work,
            so the loop guard never counts its identical results.
        record: The Spell acts on an outside system (mail, a ticket desk, a payment):
            a cassette records its casts and a replay answers them from the recording
            instead of casting it (see :mod:`sanctum.grimoire.recorded`). Ordinary
            Spells are the code under test and always run.

    Raises:
        ValueError: If ``access`` is not an access level or ``roles`` is a bare string.
    """

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )
    fn: Callable[..., Any] = field(default=lambda: None, repr=False)
    access: str | None = None
    roles: frozenset[str] | None = None
    repeatable: bool = False
    record: bool = False

    def __post_init__(self) -> None:
        if self.access is not None and self.access not in ACCESS_LEVELS:
            raise ValueError(
                f"spell {self.name!r}: access must be one of {', '.join(ACCESS_LEVELS)}, "
                f"not {self.access!r}"
            )
        if isinstance(self.roles, str):
            raise ValueError(
                f"spell {self.name!r}: roles must be a list of role names, not the string "
                f"{self.roles!r}"
            )
        if self.roles is not None:
            self.roles = frozenset(self.roles)

    @property
    def level(self) -> str:
        """The access level the Spell counts as (``"write"`` when unlabeled)."""
        return self.access or "write"

    def allows(self, mandate: Mandate | None) -> bool:
        """Whether ``mandate`` may see and cast this Spell (no Mandate holds no role)."""
        if self.roles is None:
            return True
        return mandate is not None and mandate.holds(self.roles)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call ``fn`` directly, unchanged (no schema checks, no error wrapping)."""
        return self.fn(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        """``fn``'s signature, so callers that inspect a callable (``scatter`` choosing
        ``fn(item)`` or ``fn(item, aether)``) see the Spell's real parameters."""
        return inspect.signature(self.fn)

    def schema(self) -> dict[str, Any]:
        """The JSON schema handed to Oracles: name, description, parameters.

        Returns:
            ``{"name": str, "description": str, "parameters": dict}`` — a deep copy.
        """
        return {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
        }

    async def execute(self, arguments: Mapping[str, Any] | None = None) -> Any:
        """Cast the Spell with keyword arguments matching its schema.

        Awaits async callables transparently and returns the raw result.

        Args:
            arguments: Keyword arguments for ``fn`` (``None`` means none).

        Returns:
            Whatever ``fn`` returns (awaited when it is awaitable).

        Raises:
            SpellExecutionError: If the underlying callable raises (the original
                exception is chained as ``__cause__``), or the Spell takes a Mandate
                and the run was given none.
        """
        kwargs = _with_enum_members(self.fn, dict(arguments or {}))
        injected = injected_parameters(self.fn)
        if injected:
            mandate = current_mandate()
            if mandate is None:
                raise SpellExecutionError(
                    f"spell {self.name!r} needs to know who it acts for and the run has no "
                    "Mandate; pass mandate=Mandate(...) to ainvoke/resume (CLI: --as NAME)",
                    spell=self.name,
                )
            kwargs.update(dict.fromkeys(injected, mandate))
        try:
            result = self.fn(**kwargs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:
            raise SpellExecutionError(
                f"spell {self.name!r} failed: {type(error).__name__}: {error}",
                spell=self.name,
            ) from error
        return result


def _enum_class(hint: Any) -> type[enum.Enum] | None:
    """The Enum a parameter hint names (also inside Optional/Annotated), or None."""
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _enum_class(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        return _enum_class(members[0]) if len(members) == 1 else None
    return None


@functools.lru_cache(maxsize=512)
def _enum_parameters(fn: Callable[..., Any]) -> dict[str, type[enum.Enum]]:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return {}
    found = {name: _enum_class(hint) for name, hint in hints.items() if name != "return"}
    return {name: cls for name, cls in found.items() if cls is not None}


def _with_enum_members(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Turn the plain values a model sends (``"blue"``) into the Enum members
    (``Color.BLUE``) a function annotated with an Enum expects."""
    try:
        enums = _enum_parameters(fn)
    except TypeError:  # an unhashable callable
        return kwargs
    for name, cls in enums.items():
        value = kwargs.get(name)
        if value is not None and not isinstance(value, cls):
            try:
                kwargs[name] = cls(value)
            except ValueError:
                pass  # left as sent: the function reports it
    return kwargs


def _is_mandate(hint: Any) -> bool:
    if hint is Mandate or hint == "Mandate":
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _is_mandate(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        return len(members) == 1 and _is_mandate(members[0])
    return False


@functools.lru_cache(maxsize=512)
def _mandate_parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return ()
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        hints = {}
    return tuple(
        name
        for name, parameter in signature.parameters.items()
        if _is_mandate(hints.get(name, parameter.annotation))
    )


def injected_parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The parameters of ``fn`` the host fills in (annotated ``Mandate``), in order.

    They are left out of the inferred schema; a model-supplied argument with one of
    these names is refused by the summon loop.

    Args:
        fn: A Spell's callable.

    Returns:
        The parameter names (empty when there are none).
    """
    try:
        return _mandate_parameters(fn)
    except TypeError:  # an unhashable callable
        return ()


# --------------------------------------------------------------------------- inference


def _type_schema(hint: Any) -> dict[str, Any]:
    """JSON Schema for one type hint (``{}`` — anything — when it cannot be expressed)."""
    if hint is Any or hint is inspect.Parameter.empty or hint is object:
        return {}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        return {**_literal_type(values), "enum": values}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        schema = _type_schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**schema, "description": notes[0]} if notes else schema
    if origin is Literal:
        values = list(args)
        return {**_literal_type(values), "enum": values}
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in args if a is not type(None)]
        nullable = len(members) < len(args)
        if len(members) == 1:
            schema = _type_schema(members[0])
            if not nullable:
                return schema
            kind = schema.get("type")
            if isinstance(kind, str):
                return {**schema, "type": [kind, "null"]}
            return {"anyOf": [schema, {"type": "null"}]} if schema else {}
        options = [_type_schema(a) for a in members]
        if nullable:
            options.append({"type": "null"})
        return {} if any(not o for o in options) else {"anyOf": options}
    if hint in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        array: dict[str, Any] = {"type": "array"}
        if args and (origin is not tuple or (len(args) == 2 and args[1] is Ellipsis)):
            item = _type_schema(args[0])
            if item:
                array["items"] = item
        return array
    if origin is not None and isinstance(origin, type) and issubclass(origin, Sequence):
        if issubclass(origin, str):
            return {"type": "string"}
        sequence: dict[str, Any] = {"type": "array"}
        if args and _type_schema(args[0]):
            sequence["items"] = _type_schema(args[0])
        return sequence
    if hint is dict or origin is dict or (isinstance(origin, type) and issubclass(origin, Mapping)):
        mapping: dict[str, Any] = {"type": "object"}
        if len(args) == 2 and _type_schema(args[1]):
            mapping["additionalProperties"] = _type_schema(args[1])
        return mapping
    if isinstance(hint, type) and issubclass(hint, Mapping):
        return {"type": "object"}
    return {}


def _literal_type(values: Sequence[Any]) -> dict[str, Any]:
    kinds = {_SCALARS.get(type(v)) for v in values}
    if len(kinds) == 1 and None not in kinds:
        return {"type": kinds.pop()}
    return {}


def _doc_arguments(doc: str) -> dict[str, str]:
    """Per-argument descriptions from a Google-style ``Args:`` section."""
    found: dict[str, str] = {}
    lines = doc.splitlines()
    headers = ("Args:", "Arguments:", "Parameters:")
    starts = [i for i, line in enumerate(lines) if line.strip() in headers]
    if not starts:
        return found
    header = lines[starts[0]]
    floor = len(header) - len(header.lstrip())
    indent: int | None = None
    last: str | None = None
    for line in lines[starts[0] + 1 :]:
        stripped = line.strip()
        if not stripped:
            continue
        here = len(line) - len(line.lstrip())
        if here <= floor:
            break
        if indent is None:
            indent = here
        if here == indent:
            name, colon, text = stripped.partition(":")
            name = name.split("(")[0].strip().lstrip("*")
            if not colon or not name.isidentifier():
                break
            found[name] = text.strip()
            last = name
        elif here > indent and last is not None:
            found[last] = f"{found[last]} {stripped}".strip()
    return found


def infer_parameters(fn: Callable[..., Any]) -> dict[str, Any]:
    """Infer the JSON Schema of ``fn``'s keyword arguments from its signature.

    Type hints map to JSON types (``Optional``/``X | None`` add ``"null"``,
    ``list[str]`` gives typed items, ``Literal``/``Enum`` give ``enum``,
    ``Annotated[T, "text"]`` a description); parameters with defaults are optional
    and carry their default when it is JSON-serialisable; ``*args``/``**kwargs`` are
    skipped, and so are parameters annotated ``Mandate`` (the host fills them).
    Argument descriptions come from a Google-style ``Args:`` docstring
    section when there is one.

    Args:
        fn: Any callable.

    Returns:
        ``{"type": "object", "properties": {...}, "required": [...]}``.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return {"type": "object", "properties": {}, "required": []}
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolved forward references: fall back to no types
        hints = {}
    notes = _doc_arguments(inspect.getdoc(fn) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in signature.parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if _is_mandate(hints.get(name, parameter.annotation)):
            continue  # the host's to fill, never the model's
        schema = _type_schema(hints.get(name, parameter.annotation))
        if name in notes and notes[name] and "description" not in schema:
            schema["description"] = notes[name]
        if parameter.default is parameter.empty:
            required.append(name)
        else:
            default = parameter.default
            if isinstance(default, enum.Enum):
                default = default.value
            try:
                json.dumps(default)
            except (TypeError, ValueError):
                pass
            else:
                schema["default"] = default
        properties[name] = schema
    return {"type": "object", "properties": properties, "required": required}


def _first_line(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


@overload
def spell(
    fn: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    access: str | None = None,
    roles: Iterable[str] | None = None,
    repeatable: bool = False,
    record: bool = False,
) -> Spell: ...


@overload
def spell(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    access: str | None = None,
    roles: Iterable[str] | None = None,
    repeatable: bool = False,
    record: bool = False,
) -> Callable[[Callable[..., Any]], Spell]: ...


def spell(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    access: str | None = None,
    roles: Iterable[str] | None = None,
    repeatable: bool = False,
    record: bool = False,
) -> Spell | Callable[[Callable[..., Any]], Spell]:
    """Inscribe a Python function as a Spell (a tool).

    Decorator, usable bare or with arguments::

        @spell
        def word_count(text: str) -> int:
            \"\"\"Count the words in a text.\"\"\"
            return len(text.split())

        @spell(name="shout", description="Say it louder.")
        async def loud(text: str) -> str: ...

    The Spell's name defaults to the function name, the description to the
    docstring's first line, and parameters to a JSON Schema inferred from the type
    hints (see :func:`infer_parameters`; defaults become optional properties). The
    decorated object is a Spell but remains directly callable.

    Args:
        fn: The function (when used bare).
        name: The name exposed to Oracles.
        description: What the Spell does, for the model.
        access: ``"read"``, ``"propose"`` or ``"write"`` (None: unlabeled, counts as
            write).
        roles: Roles allowed to use the Spell (None: anyone).
        repeatable: Marks a poller the loop guard should not count repeats of.
        record: Marks a Spell with outside effects: cassettes record its casts and
            replays answer them without casting it.

    Returns:
        A :class:`Spell`, or a decorator producing one.

    Raises:
        TypeError: If the decorated object is not callable.
        ValueError: If the resulting name is empty, or ``access`` or ``roles`` is
            invalid.
    """
    allowed = None if roles is None else _role_set(roles)

    def inscribe(target: Callable[..., Any]) -> Spell:
        if isinstance(target, Spell):
            return Spell(
                name=name or target.name,
                description=target.description if description is None else description,
                parameters=copy.deepcopy(target.parameters),
                fn=target.fn,
                access=target.access if access is None else access,
                roles=target.roles if roles is None else allowed,
                repeatable=target.repeatable or repeatable,
                record=target.record or record,
            )
        if not callable(target):
            raise TypeError(f"@spell needs a function, got {type(target).__name__}")
        spell_name = name or getattr(target, "__name__", "")
        if not spell_name or spell_name == "<lambda>":
            raise ValueError("@spell needs a name: pass @spell(name=...) for this callable")
        return Spell(
            name=spell_name,
            description=_first_line(target) if description is None else description,
            parameters=infer_parameters(target),
            fn=target,
            access=access,
            roles=allowed,
            repeatable=repeatable,
            record=record,
        )

    if fn is not None:
        return inscribe(fn)
    return inscribe


def _role_set(roles: Iterable[str]) -> frozenset[str]:
    if isinstance(roles, str):
        raise ValueError(f"roles must be a list of role names, not the string {roles!r}")
    return frozenset(roles)
