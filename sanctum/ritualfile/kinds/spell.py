"""The ``spell`` sigil: cast one spell (tool) with templated arguments."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import Field, JsonValue

from sanctum.ritualfile._common import SigilBase
from sanctum.ritualfile._suggest import did_you_mean
from sanctum.ritualfile.kinds.base import SigilKind, placeholder, register

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker
    from sanctum.ritualfile.loader import YamlPath

__all__ = ["SpellKind", "SpellSigil", "check_spell_use"]


class SpellSigil(SigilBase):
    """Cast one spell with templated arguments."""

    spell: str = Field(description="The spell's name, found in the ritual's tomes.")
    tome: str | None = Field(None, description="The tome to look in (default: all tomes).")
    arguments: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Arguments; strings are templates, and a string that is exactly one "
        "{{ expression }} keeps the expression's type.",
    )
    output: str | None = Field(None, description="Conduit that receives the spell's result.")


def check_spell_use(
    checker: Checker, base: YamlPath, name: str, sigil: Any, known: Collection[str]
) -> None:
    """Check a spell cast: the tome and the spell exist, the argument templates compile.

    Shared by the ``spell`` sigil and a scatter's inline spell. Spell names come from
    the tomes' ``spell.json`` manifests (no spell module is imported).

    Args:
        checker: The file's Checker.
        base: The document path of the mapping holding ``spell``/``tome``/``arguments``.
        name: The sigil's name (for messages).
        sigil: A model with ``spell``, ``tome`` and ``arguments``.
        known: Names the argument templates may use.
    """
    if sigil.tome is not None:
        checker.ref((*base, "tome"), sigil.tome, checker.tomes, "tome", "")
        pools = {sigil.tome: checker.tome_spells.get(sigil.tome, set())}
        unknown = sigil.tome in checker.broken_tomes
    else:
        pools = checker.tome_spells
        unknown = bool(checker.broken_tomes or checker.dropped.get("tomes"))
    if unknown:
        pass  # a tome is broken (already reported): its spells are unknown
    elif not checker.tomes:
        checker.problems.add(
            (*base, "spell"), "a spell sigil needs a tome; declare one under `tomes:`"
        )
    elif len(pools) == len([t for t in pools if t in checker.tome_spells]):
        available = set().union(*pools.values()) if pools else set()
        if sigil.spell not in available:
            checker.problems.add(
                (*base, "spell"),
                f"spell {sigil.spell!r} is in no tome{did_you_mean(sigil.spell, available)}",
            )
    for key, value in sigil.arguments.items():
        for path, text in _strings((*base, "arguments", key), value):
            checker.template(path, text, name, known)


def _strings(path: YamlPath, value: Any) -> Iterable[tuple[YamlPath, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings((*path, key), item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings((*path, index), item)


class SpellKind(SigilKind):
    """``spell:`` — one spell of the ritual's tomes, its result written to ``output``."""

    key = "spell"
    model = SpellSigil
    label = "spell"

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        check_spell_use(checker, self.path(name), name, sigil, known)
        if sigil.output is not None:
            checker.conduit(self.path(name, "output"), sigil.output, name)

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        if not builder.resolve:
            return placeholder
        spell = builder.spell(self.path(name, "spell"), sigil.spell, sigil.tome)
        if spell is None:
            return placeholder
        from sanctum.grimoire.sigils import spell_sigil

        arguments = builder.arguments(sigil.arguments, name, self.path(name, "arguments"))
        return spell_sigil(spell, arguments, sigil.output)


KIND = register(SpellKind())
