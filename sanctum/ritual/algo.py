"""Pure step logic: which Sigils run next, and how a superstep's deltas merge.

Nothing here awaits, emits or stores; the loop (:mod:`sanctum.ritual.loop`) calls these
functions between supersteps. Join bookkeeping is copy-on-write: ``joins`` maps each
waiting ``join="all"`` Sigil to the frozenset of static predecessors that activated it
so far, and a new mapping is returned whenever it changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sanctum.aether.schema import ERRORS_CONDUIT, AetherSchema
from sanctum.codex.frontier import Frontier
from sanctum.errors import DeltaTypeError, RouteError, SigilJoinError
from sanctum.ritual.constants import END, START
from sanctum.ritual.graph import Graph, SigilPlan

__all__ = [
    "Joins",
    "check_delta",
    "entry_frontier",
    "error_entry",
    "frontier_names",
    "join_error",
    "merge_deltas",
    "next_frontier",
    "pending_joins",
    "resolve_route",
    "restore_frontier",
    "with_error",
    "writers_of",
]

Joins = Mapping[str, frozenset[str]]
"""Activations gathered so far by waiting ``join="all"`` Sigils."""

_EMPTY: tuple[SigilPlan, ...] = ()


def check_delta(sigil: str, result: Any) -> Mapping[str, Any]:
    """Return ``result`` if it is a mapping (a delta).

    Raises:
        DeltaTypeError: (a TypeError) If a Sigil returned anything else, None included.
    """
    if isinstance(result, Mapping):
        return result
    kind = type(result).__name__
    raise DeltaTypeError(
        f"sigil {sigil!r} returned {kind}, not a mapping; a sigil must return a dict delta "
        "(return {} to change nothing)",
        sigil=sigil,
        returned=kind,
    )


def resolve_route(plan: SigilPlan, value: Any, graph: Graph) -> SigilPlan | None:
    """Turn a router's return value into the next Sigil (``None`` for END).

    Raises:
        RouteError: (a ValueError) If the value is missing from the path_map, is neither
            a bound Sigil nor END, or names a ``join="all"`` Sigil.
    """
    table = plan.route_table
    if table is not None:
        try:
            return table[value]
        except (KeyError, TypeError):
            raise RouteError(
                f"router of sigil {plan.name!r} returned {value!r}, which is not a key of "
                f"its path_map (keys: {', '.join(map(repr, table))})",
                sigil=plan.name,
                value=value,
            ) from None
    if value == END:
        return None
    target = graph.by_name.get(value) if isinstance(value, str) else None
    if target is None:
        raise RouteError(
            f"router of sigil {plan.name!r} returned unknown Sigil {value!r}, which is "
            f"neither a bound sigil nor END; bound sigils: {', '.join(map(repr, graph.by_name))}",
            sigil=plan.name,
            value=value,
        )
    if target.join_all:
        raise RouteError(
            f"router of sigil {plan.name!r} routed to join='all' sigil {value!r}; a barrier "
            "is activated only by its static predecessors",
            sigil=plan.name,
            value=value,
        )
    return target


def _activate(
    source: str,
    targets: Sequence[SigilPlan],
    chosen: dict[int, SigilPlan],
    joins: dict[str, frozenset[str]] | None,
    base: Joins,
) -> dict[str, frozenset[str]] | None:
    for target in targets:
        if not target.join_all:
            chosen[target.index] = target
            continue
        if joins is None:
            joins = dict(base)
        got = joins.get(target.name, frozenset()) | {source}
        if got >= target.preds:
            joins.pop(target.name, None)
            chosen[target.index] = target
        else:
            joins[target.name] = got
    return joins


def entry_frontier(graph: Graph, joins: Joins) -> tuple[tuple[SigilPlan, ...], Joins]:
    """The first superstep's frontier: every START target (fan-out from START)."""
    chosen: dict[int, SigilPlan] = {}
    new = _activate(START, graph.entry, chosen, None, joins)
    return tuple(chosen[i] for i in sorted(chosen)), (joins if new is None else new)


def next_frontier(
    completed: Sequence[SigilPlan],
    aether: Mapping[str, Any],
    joins: Joins,
    graph: Graph,
    routed: Mapping[str, Any] | None = None,
) -> tuple[tuple[SigilPlan, ...], Joins]:
    """Compute the next superstep's frontier from the Sigils that just completed.

    Static successors activate; a router (sync, or pre-awaited into ``routed``) is
    called with the merged Aether. "any" Sigils activated several times coalesce into
    one execution; a ``join="all"`` Sigil records the activation and joins the frontier
    only when every static predecessor has arrived. END is dropped.

    Args:
        completed: The superstep's Sigils, in bind order.
        aether: The Aether after the superstep's merge.
        joins: Activations gathered so far by waiting joins.
        graph: The compiled graph.
        routed: Router values already computed (async routers), by source name.

    Returns:
        ``(frontier in bind order, joins)``.

    Raises:
        RouteError: If a router returns an unknown value.
    """
    if len(completed) == 1:
        plan = completed[0]
        if plan.router is None:
            targets = plan.targets
        else:
            value = routed[plan.name] if routed and plan.name in routed else plan.router(aether)
            target = resolve_route(plan, value, graph)
            if target is None:
                return _EMPTY, joins
            targets = (target,)
        if len(targets) == 1 and not targets[0].join_all:
            return targets, joins
        if not targets:
            return _EMPTY, joins
    chosen: dict[int, SigilPlan] = {}
    new: dict[str, frozenset[str]] | None = None
    for plan in completed:
        if plan.router is None:
            targets = plan.targets
        else:
            value = routed[plan.name] if routed and plan.name in routed else plan.router(aether)
            target = resolve_route(plan, value, graph)
            targets = _EMPTY if target is None else (target,)
        if targets:
            new = _activate(plan.name, targets, chosen, new, joins)
    frontier = tuple(chosen[i] for i in sorted(chosen))
    return frontier, (joins if new is None else new)


def pending_joins(joins: Joins, graph: Graph) -> dict[str, list[str]]:
    """Map each waiting join to the sorted predecessors it still misses."""
    return {
        name: sorted(graph.by_name[name].preds - got)
        for name, got in joins.items()
        if got and name in graph.by_name
    }


def join_error(joins: Joins, graph: Graph, invocation_id: str) -> SigilJoinError | None:
    """Build the SigilJoinError for an Invocation that ended with waiting joins."""
    pending = pending_joins(joins, graph)
    if not pending:
        return None
    detail = "; ".join(
        f"{name!r} still waits for {', '.join(map(repr, missing))}"
        for name, missing in pending.items()
    )
    return SigilJoinError(
        f"invocation {invocation_id!r} ended while join='all' sigil(s) were still waiting: "
        f"{detail}. A router probably steered a feeding branch away; route every branch to "
        "the join or use join='any'",
        pending=pending,
    )


def merge_deltas(
    aether: Mapping[str, Any],
    deltas: Sequence[tuple[str, Mapping[str, Any]]],
    schema: AetherSchema | None,
) -> dict[str, Any]:
    """Fold one superstep's deltas into a new Aether, in the order given (bind order).

    Raises:
        AetherValidationError: If a delta writes an undeclared Conduit (schema only).
    """
    if schema is not None:
        return schema.apply_deltas(aether, deltas)
    new = dict(aether)
    for _sigil, delta in deltas:
        new.update(delta)
    return new


def writers_of(deltas: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Map each written Conduit to the Sigils that wrote it, in bind order."""
    writers: dict[str, list[str]] = {}
    for sigil, delta in deltas:
        for key in delta:
            writers.setdefault(str(key), []).append(sigil)
    return writers


def error_entry(sigil: str, error: BaseException, superstep: int, attempts: int) -> dict[str, Any]:
    """The JSON-serialisable record an on_error jump appends to ``__errors__``."""
    return {
        "sigil": sigil,
        "error": str(error) or type(error).__name__,
        "type": type(error).__name__,
        "superstep": superstep,
        "attempts": attempts,
    }


def with_error(aether: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """A new Aether with ``entry`` appended to the reserved ``__errors__`` Conduit."""
    new = dict(aether)
    previous = new.get(ERRORS_CONDUIT)
    new[ERRORS_CONDUIT] = [*previous, dict(entry)] if isinstance(previous, list) else [dict(entry)]
    return new


def frontier_names(frontier: Sequence[SigilPlan]) -> Frontier:
    """The names of a frontier, in bind order: a :class:`~sanctum.codex.frontier.Frontier`
    (a tuple that also equals a list of the same names), for Seals and Omens alike."""
    return Frontier(plan.name for plan in frontier)


def restore_frontier(names: Sequence[str], graph: Graph) -> tuple[SigilPlan, ...]:
    """Map a Seal's frontier names back to plans, in bind order.

    Raises:
        KeyError: If a name is not bound in this graph (the caller reports it).
    """
    plans = {graph.by_name[name].index: graph.by_name[name] for name in names if name != END}
    return tuple(plans[i] for i in sorted(plans))
