"""The ``set`` sigil: write conduits from expressions."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from pydantic import Field, JsonValue

from sanctum.ritual.kinds import set_sigil
from sanctum.ritualfile._common import SigilBase
from sanctum.ritualfile._suggest import did_you_mean
from sanctum.ritualfile.kinds.base import SigilKind, register

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker
    from sanctum.ritualfile.loader import YamlPath

__all__ = ["SetKind", "SetSigil", "check_set_values"]


class SetSigil(SigilBase):
    """Write conduits from expressions."""

    values: dict[str, JsonValue] = Field(
        alias="set",
        description="Conduit -> value: strings are bare expressions (write \"'text'\" for "
        "a literal string), other YAML values are written as they are.",
    )


def check_set_values(
    checker: Checker,
    base: YamlPath,
    values: dict[str, Any],
    name: str,
    known: Collection[str],
    *,
    conduits: bool,
) -> None:
    """Check the values of a ``set``: the keys are conduits, the strings expressions.

    Shared by the ``set`` sigil (``conduits=True``: each key must be a conduit) and a
    scatter's inline set (its keys name the keys of each item's result).

    Args:
        checker: The file's Checker.
        base: The document path of the ``set`` mapping.
        values: Key -> value as written (strings are expressions).
        name: The sigil's name (for messages).
        known: Names the expressions may use.
        conduits: Whether the keys must be conduits.
    """
    for key, value in values.items():
        if conduits:
            if (*base, key) in checker.loaded.plain_boolean_keys:
                checker.quoted_hint((*base, key), key=True)
            elif key not in checker.conduits:
                hint = did_you_mean(key, checker.conduits)
                advice = " If not, declare it" if hint else "; declare it"
                checker.problems.add(
                    (*base, key),
                    f"sigil {name!r} sets {key!r}, which is not a conduit{hint}{advice} "
                    "under `aether:`",
                    key=True,
                )
        if isinstance(value, str):
            checker.expression((*base, key), value, name, known)


class SetKind(SigilKind):
    """``set:`` — conduit -> expression (a string) or value (anything else)."""

    key = "set"
    model = SetSigil
    label = "set"

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        check_set_values(checker, self.path(name, "set"), sigil.values, name, known, conduits=True)

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        return set_sigil(builder.values(sigil.values, name, "set", self.path(name, "set")))


KIND = register(SetKind())
