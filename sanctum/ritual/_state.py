"""Where an Invocation starts: a fresh Aether, or a Seal restored (and updated).

The loop (:mod:`sanctum.ritual.loop`) calls :func:`fresh_state` or
:func:`resumed_state` once per call and then carries the :class:`State` from
superstep to superstep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sanctum.codex.base import Codex
from sanctum.errors import SealError
from sanctum.ritual.algo import Joins, entry_frontier, restore_frontier
from sanctum.ritual.graph import Graph, SigilPlan

__all__ = ["State", "apply_updates", "fresh_state", "joins_metadata", "resumed_state"]


@dataclass(slots=True)
class State:
    """What one call carries between supersteps (the start, then the progress)."""

    aether: dict[str, Any]
    frontier: tuple[SigilPlan, ...]
    superstep: int
    joins: Joins
    parent: str | None
    expected: str | None
    resumed_from: str | None = None
    updates: dict[str, Any] | None = None
    errors_by: str | None = None


def joins_metadata(joins: Joins) -> dict[str, list[str]]:
    """The joins as a Seal stores them: ``{sigil: sorted names arrived}``."""
    return {name: sorted(got) for name, got in joins.items()}


async def fresh_state(
    graph: Graph,
    codex: Codex | None,
    input: Mapping[str, Any],
    invocation_id: str,
    updates: Mapping[str, Any] | None,
) -> State:
    """The start of a fresh run: ``input`` validated, ``updates`` merged, entry frontier.

    Raises:
        TypeError: If ``input`` (or ``updates``) is not a mapping.
        AetherValidationError: If the schema refuses them.
    """
    if not isinstance(input, Mapping):
        raise TypeError(f"input must be a mapping (the initial Aether), got {type(input).__name__}")
    schema = graph.schema
    if schema is not None:
        schema.validate_input(input)
        aether = schema.initial(input)
    else:
        aether = dict(input)
    if updates:
        aether = apply_updates(graph, aether, updates)
    frontier, joins = entry_frontier(graph, {})
    expected = None
    if codex is not None:
        expected = await codex.latest_seal_id(invocation_id)
    return State(aether, frontier, 0, joins, None, expected)


def apply_updates(
    graph: Graph, aether: dict[str, Any], updates: Mapping[str, Any]
) -> dict[str, Any]:
    """``aether`` with ``updates`` merged through the schema's reducers (if any).

    Raises:
        TypeError: If ``updates`` is not a mapping.
        AetherValidationError: If the schema refuses them.
    """
    if not isinstance(updates, Mapping):
        raise TypeError(f"updates must be a mapping, got {type(updates).__name__}")
    schema = graph.schema
    if schema is None:
        return {**aether, **updates}
    schema.validate_updates(updates)
    return schema.apply_delta(aether, updates, sigil="updates")


async def resumed_state(
    graph: Graph,
    codex: Codex | None,
    invocation_id: str | None,
    seal_id: str | None,
    updates: Mapping[str, Any] | None,
) -> State:
    """The start of a resumption: the latest Seal (or ``seal_id``), ``updates`` merged.

    Raises:
        SealError: Without a Codex or an invocation_id, for a missing Seal, a Seal
            naming a Sigil this graph lacks, or updates to a finished run.
    """
    if codex is None:
        raise SealError(
            "cannot resume: this Rite has no Codex; compile(codex=...) or "
            "rite.with_options(codex=...), or pass input for a fresh run",
            invocation_id=invocation_id,
            seal_id=seal_id,
        )
    if not invocation_id:
        raise SealError(
            "cannot resume without an invocation_id; pass ainvoke(invocation_id=...) "
            "(or input for a fresh run)",
            seal_id=seal_id,
        )
    if seal_id is not None:
        seal = await codex.get_seal(invocation_id, seal_id)
        if seal is None:
            raise SealError(
                f"invocation {invocation_id!r} has no seal {seal_id!r}; list its seals to "
                "pick one to time-travel from",
                invocation_id=invocation_id,
                seal_id=seal_id,
            )
        expected = await codex.latest_seal_id(invocation_id)
    else:
        latest = await codex.get(invocation_id)
        if latest is None:
            raise SealError(
                f"No Seals for invocation {invocation_id!r}: nothing to resume from; start "
                "it with input first (or check the invocation_id and the codex)",
                invocation_id=invocation_id,
            )
        seal = latest
        expected = latest.seal_id
    try:
        frontier = restore_frontier(seal.frontier, graph)
    except KeyError as exc:
        raise SealError(
            f"seal {seal.seal_id!r} of invocation {invocation_id!r} names sigil {exc.args[0]!r}, "
            "which this Rite does not bind; resume with the Rite that wrote it",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        ) from None
    raw_joins = seal.metadata.get("joins") or {}
    joins: Joins = {str(name): frozenset(got) for name, got in dict(raw_joins).items() if got}
    aether = dict(seal.aether)
    if updates:
        aether = apply_updates(graph, aether, updates)
    if updates and not frontier:
        raise SealError(
            f"seal {seal.seal_id!r} of invocation {invocation_id!r} ends a finished run "
            "(its frontier is END); updates would rewrite a finished history, so nothing "
            "was written. To run part of it again with new values, resume from an "
            "earlier seal with seal_id=... (it branches, and the history is kept)",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        )
    return State(
        aether,
        frontier,
        seal.superstep,
        joins,
        seal.seal_id,
        expected,
        resumed_from=seal.seal_id,
        updates=dict(updates) if updates else None,
    )
