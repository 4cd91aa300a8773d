"""The ``scatter`` sigil: map an inline sigil over a list, concurrently, results in order."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Discriminator, Field, JsonValue, Tag

from sanctum.errors import ExpressionError
from sanctum.ritual import scatter
from sanctum.ritual.kinds import set_sigil
from sanctum.ritualfile._common import Expression, SigilBase, Strict, Template
from sanctum.ritualfile._suggest import did_you_mean
from sanctum.ritualfile.expressions import compile_expression
from sanctum.ritualfile.kinds.base import SigilKind, placeholder, register
from sanctum.ritualfile.kinds.oracle import check_oracle_use
from sanctum.ritualfile.kinds.setting import check_set_values
from sanctum.ritualfile.kinds.spell import check_spell_use

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker
    from sanctum.ritualfile.loader import YamlPath

__all__ = [
    "INLINE_KINDS",
    "InlineCall",
    "InlineOracle",
    "InlineSet",
    "InlineSigil",
    "InlineSpell",
    "ScatterKind",
    "ScatterOptions",
    "ScatterSigil",
]

INLINE_KINDS = ("call", "oracle", "spell", "set")
"""The kind keys a scatter's inline sigil may have."""


class InlineCall(Strict):
    """A callable applied to each item."""

    call: str = Field(description="'module:function' applied to each item.")


class InlineOracle(Strict):
    """An oracle consulted for each item."""

    oracle: str = Field(description="Name of an oracle under `oracles:`.")
    prompt: Template
    output: str = Field(description="Key of the per-item result holding the answer.")
    system: Template | None = Field(None, description="System prompt template.")


class InlineSpell(Strict):
    """A spell cast for each item."""

    spell: str = Field(description="The spell's name.")
    tome: str | None = Field(None, description="The tome to look in.")
    arguments: dict[str, JsonValue] = Field(
        default_factory=dict, description="Arguments (templates)."
    )
    output: str = Field("result", description="Key of the per-item result.")


class InlineSet(Strict):
    """Expressions computed for each item."""

    values: dict[str, JsonValue] = Field(
        alias="set", description="Key -> expression, computed per item."
    )


_INLINE_MODELS: dict[type[Strict], str] = {
    InlineCall: "call",
    InlineOracle: "oracle",
    InlineSpell: "spell",
    InlineSet: "set",
}


def _inline_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        present = [k for k in INLINE_KINDS if k in value]
        return present[0] if len(present) == 1 else None
    return _INLINE_MODELS.get(type(value))


InlineSigil = Annotated[
    Annotated[InlineCall, Tag("call")]
    | Annotated[InlineOracle, Tag("oracle")]
    | Annotated[InlineSpell, Tag("spell")]
    | Annotated[InlineSet, Tag("set")],
    Discriminator(_inline_kind),
    Field(description="The work done per item: one of call, oracle, spell or set."),
]


class ScatterOptions(Strict):
    """Map an inline sigil over a list, results in item order."""

    over: Expression
    item: str = Field("item", description="Name the current item has in expressions.")
    into: str = Field(description="Conduit receiving the list of results.")
    pick: str | None = Field(None, description="Keep only this key of each item's result.")
    max_concurrency: int = Field(4, ge=1, le=256, description="Items worked on at once.")
    sigil: InlineSigil


class ScatterSigil(SigilBase):
    """Run work for every item of a list, concurrently."""

    scatter: ScatterOptions = Field(description="What to map over and where results go.")


class ScatterKind(SigilKind):
    """``scatter:`` — ``over`` a list, an inline call/oracle/spell/set per item."""

    key = "scatter"
    model = ScatterSigil
    label = "scatter"

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        options = sigil.scatter
        where = self.path(name, "scatter")
        checker.expression((*where, "over"), options.over, name, known)
        checker.conduit((*where, "into"), options.into, name)
        local = {*known, options.item}
        inline = options.sigil
        inner: YamlPath = (*where, "sigil")
        if isinstance(inline, InlineCall):
            if not checker.is_reference(inline.call):
                checker.problems.add((*inner, "call"), "`call` must be 'module:function'")
        elif isinstance(inline, InlineOracle):
            check_oracle_use(checker, inner, name, inline, local)
        elif isinstance(inline, InlineSpell):
            check_spell_use(checker, inner, name, inline, local)
        elif isinstance(inline, InlineSet):
            check_set_values(checker, (*inner, "set"), inline.values, name, local, conduits=False)
        gives = _result_keys(inline)
        if options.pick is not None and gives is not None and options.pick not in gives:
            checker.problems.add(
                (*where, "pick"),
                f"scatter of sigil {name!r} picks {options.pick!r}, a key its sigil's "
                f"result never has{did_you_mean(options.pick, gives)} "
                f"(its keys: {', '.join(sorted(gives))})",
            )

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        options = sigil.scatter
        spread = scatter(
            _inline(builder, name, options.sigil, self.path(name, "scatter", "sigil")),
            _items(builder, options.over, name),
            into=options.into,
            item_key=options.item,
            max_concurrency=options.max_concurrency,
        )
        if options.pick is None:
            return spread
        return _picking(spread, name, options.into, options.pick)


def _result_keys(inline: Any) -> set[str] | None:
    """The keys a scattered sigil's result holds, or None when only its code knows."""
    if isinstance(inline, InlineSet):
        return set(inline.values)
    if isinstance(inline, (InlineOracle, InlineSpell)):
        return {inline.output}
    return None


def _items(builder: Builder, source: str, sigil: str) -> Callable[[Mapping[str, Any]], Any]:
    """``scatter.over``: the expression, whose value must be a list."""
    compiled = compile_expression(
        source,
        sigil=sigil,
        field="scatter.over",
        done=builder.done(("sigils", sigil, "scatter", "over")),
    )

    def items(aether: Mapping[str, Any]) -> Any:
        value = compiled.evaluate(builder.context(aether))
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise ExpressionError(
                f"sigil {sigil!r}: scatter.over `{compiled.source}` gave "
                f"{type(value).__name__} {value!r:.60}, not a list to scatter over",
                sigil=sigil,
                expression=compiled.source,
                field="scatter.over",
            )
        return value

    return items


def _inline(builder: Builder, name: str, inline: Any, path: YamlPath) -> Callable[..., Any]:
    if isinstance(inline, InlineCall):
        return builder.call((*path, "call"), inline.call)
    if isinstance(inline, InlineOracle):
        oracle = builder.oracle(inline.oracle, name)
        if oracle is None:
            return placeholder
        from sanctum.grimoire.sigils import oracle_sigil

        return oracle_sigil(
            oracle,
            builder.text(inline.prompt, name, "scatter.sigil.prompt"),
            inline.output,
            system=None
            if inline.system is None
            else builder.text(inline.system, name, "scatter.sigil.system"),
            stream_tokens=False,
            scrub=builder.secrets.mask if builder.secrets else None,
            secrets=builder.secrets or None,
        )
    if isinstance(inline, InlineSpell):
        if not builder.resolve:
            return placeholder
        spell = builder.spell((*path, "spell"), inline.spell, inline.tome)
        if spell is None:
            return placeholder
        from sanctum.grimoire.sigils import spell_sigil

        arguments = builder.arguments(inline.arguments, name, (*path, "arguments"))
        return spell_sigil(spell, arguments, inline.output)
    assert isinstance(inline, InlineSet)
    return set_sigil(builder.values(inline.values, name, "scatter.sigil.set", (*path, "set")))


def _picking(
    spread: Callable[..., Awaitable[dict[str, Any]]], sigil: str, into: str, pick: str
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """A scatter sigil that keeps only key ``pick`` of each item's result.

    Raises (when run):
        ExpressionError: When an item's result has no such key, naming the keys it has.
    """

    @functools.wraps(spread)
    async def picked(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        delta = await spread(aether, writer)
        results = []
        for index, result in enumerate(delta[into]):
            if pick not in result:
                keys = ", ".join(repr(k) for k in result) or "none"
                raise ExpressionError(
                    f"sigil {sigil!r}: scatter.pick {pick!r}: the result of item {index} has "
                    f"no key {pick!r} (its keys: {keys}); pick one of them",
                    sigil=sigil,
                    expression=pick,
                    field="scatter.pick",
                )
            results.append(result[pick])
        return {into: results}

    return picked


KIND = register(ScatterKind())
