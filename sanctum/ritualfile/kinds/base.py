"""The registry of sigil kinds: what each kind of sigil (node) declares in one place.

A :class:`SigilKind` holds everything sanctum knows about one kind of sigil: the key
that selects it in a ritual file (``oracle:``), its pydantic model, its file-level
checks, its compile step (the sigil function handed to the Ritual builder) and the word
drawn under its name by ``sanctum graph``. The checker, the compiler, the diagram, the
shape checks and the diagnostics ask the registry; none of them names a kind.

Registration order is documentation order: it orders the model's discriminated union,
the JSON Schema, and the kind keys listed in messages.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker
    from sanctum.ritualfile.loader import YamlPath

__all__ = [
    "SigilKind",
    "common_keys",
    "key_owners",
    "kind_keys",
    "kind_named",
    "kind_of",
    "placeholder",
    "register",
    "registered",
    "sigil_keys",
    "unregister",
]


def placeholder(aether: Mapping[str, Any]) -> dict[str, Any]:
    """A sigil function that writes nothing: stands in for user code not resolved.

    Args:
        aether: The Aether (state dict), unread.

    Returns:
        An empty delta.
    """
    return {}


class SigilKind:
    """One kind of sigil, declared once: model, checks, compile step, drawing.

    Subclass it in one module per kind, set the class attributes, override
    :meth:`compile` (and :meth:`check` when the kind names things to check), and
    :func:`register` an instance.

    Attributes:
        key: The key that selects the kind in a ritual file (``"oracle"``), or None for
            the kind without a key (a sigil that only routes).
        model: The kind's pydantic model (a subclass of ``SigilBase``).
        label: The word drawn under the sigil's name in a diagram.
    """

    key: ClassVar[str | None] = None
    model: ClassVar[type[BaseModel]]
    label: ClassVar[str] = "route"

    @property
    def tag(self) -> str:
        """The kind's name in the registry and the union: its key, or ``"pass"``."""
        return self.key if self.key is not None else "pass"

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key a sigil of this kind may have, as written in a file (aliases)."""
        return tuple(info.alias or name for name, info in self.model.model_fields.items())

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        """Check what a sigil of this kind names (conduits, oracles, expressions, ...).

        Runs after the checks every sigil gets (edges, policy). Records problems with
        ``checker.problems.add``; raises nothing. The default checks nothing.

        Args:
            checker: The file's Checker (names in scope, helpers, where problems go).
            name: The sigil's name.
            sigil: The validated model instance (of :attr:`model`).
            known: Names expressions may use (conduits, inputs, ``__errors__``).
        """

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        """The sigil function for a sigil of this kind, built with public factories.

        Problems found here (a callable that does not import, a spell in no tome) are
        recorded in ``builder.problems``; a :func:`placeholder` stands in so the rest
        of the graph still compiles.

        Args:
            builder: The Builder of the ritual (oracles, tomes, expressions, secrets).
            name: The sigil's name.
            sigil: The validated model instance (of :attr:`model`).

        Returns:
            A callable the Ritual builder accepts as a sigil (sync or async).
        """
        return placeholder

    def path(self, name: str, *keys: str | int) -> YamlPath:
        """The document path of a key of sigil ``name`` (for positions in messages)."""
        return ("sigils", name, *keys)


_KINDS: dict[str, SigilKind] = {}
_BY_MODEL: dict[type[BaseModel], SigilKind] = {}


def register(kind: SigilKind) -> SigilKind:
    """Add a sigil kind to the registry.

    Args:
        kind: The kind; its tag and its model must not be registered yet.

    Returns:
        The kind, so a module can write ``KIND = register(MyKind())``.

    Raises:
        ValueError: When the tag or the model is registered already.
    """
    if kind.tag in _KINDS:
        raise ValueError(f"a sigil kind {kind.tag!r} is registered already")
    if kind.model in _BY_MODEL:
        raise ValueError(
            f"model {kind.model.__name__} belongs to sigil kind {_BY_MODEL[kind.model].tag!r} "
            "already; give each kind its own model"
        )
    _KINDS[kind.tag] = kind
    _BY_MODEL[kind.model] = kind
    return kind


def unregister(tag: str) -> None:
    """Remove the kind ``tag`` from the registry (for tests of kinds of their own).

    Raises:
        KeyError: When no kind has that tag.
    """
    kind = _KINDS.pop(tag)
    del _BY_MODEL[kind.model]


def registered() -> tuple[SigilKind, ...]:
    """Every registered kind, in registration (documentation) order."""
    return tuple(_KINDS.values())


def kind_named(tag: str) -> SigilKind:
    """The kind registered under ``tag`` (a kind key, or ``"pass"``).

    Raises:
        KeyError: When no kind has that tag.
    """
    return _KINDS[tag]


def kind_of(sigil: object) -> SigilKind:
    """The kind a validated sigil belongs to, by its model.

    Raises:
        TypeError: When the sigil's model belongs to no registered kind.
    """
    kind = _BY_MODEL.get(type(sigil)) if isinstance(sigil, BaseModel) else None
    if kind is None:
        raise TypeError(
            f"{type(sigil).__name__} is the model of no registered sigil kind; "
            "register its kind with sanctum.ritualfile.kinds.register"
        )
    return kind


def kind_keys() -> tuple[str, ...]:
    """The keys that select a kind, in documentation order (``pass`` has none)."""
    return tuple(kind.key for kind in _KINDS.values() if kind.key is not None)


def common_keys() -> tuple[str, ...]:
    """Keys every sigil may have, whatever its kind (those of the keyless kind)."""
    keyless = [kind for kind in _KINDS.values() if kind.key is None]
    return keyless[0].keys if keyless else ()


def sigil_keys() -> frozenset[str]:
    """Every key some sigil may have (kind keys and their companions included)."""
    return frozenset(key for kind in _KINDS.values() for key in kind.keys)


def key_owners(key: str) -> list[str]:
    """The sigil kinds a companion key belongs to (``prompt`` -> oracle, agent).

    Args:
        key: A sigil key.

    Returns:
        The kinds whose model has this key, in documented order; empty for common keys,
        kind keys and unknown keys.
    """
    if key in common_keys() or key in kind_keys():
        return []
    return [kind.tag for kind in _KINDS.values() if kind.key is not None and key in kind.keys]
