"""The checks a Ritual must pass before it is sealed into a Rite.

``compile()`` runs them in the order the specification gives: an entry point exists;
every static edge and every path_map target references a bound Sigil (or END); every
policy's ``on_error`` names a bound Sigil other than its owner; every Sigil is reachable
from START (on_error fallbacks count as reachable, and a conditional edge without
path_map reaches every Sigil); every Sigil has an outgoing edge. Then the join checks: a
``join="all"`` Sigil needs at least one static incoming edge and can be neither the
target of a conditional edge nor an on_error fallback (a router without path_map is
checked when it routes: sending the Invocation to a join raises RouteError).

The rules are pure functions of names (a :class:`Topology`): :func:`graph_problems`
returns every :class:`~sanctum.errors.GraphProblem` found, each with its
:class:`~sanctum.errors.ErrorCode` and the names involved, so another layer (the ritual
file) can word and place each one without parsing a message. On request it also finds
the Sigils from which no path leads to END, which ``compile()`` accepts (the recursion
limit bounds such a cycle). :func:`validate_ritual` raises them as one
:class:`~sanctum.errors.RitualValidationError` whose message is the first violation's.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from sanctum.errors import ErrorCode, GraphProblem, RitualValidationError
from sanctum.ritual.constants import END, START
from sanctum.ritual.graph import Router, SigilSpec
from sanctum.ritual.policy import SigilPolicy

__all__ = ["Topology", "graph_problems", "validate_ritual"]


@dataclass(frozen=True, slots=True)
class Topology:
    """A Ritual's graph by names alone: everything its rules look at.

    Attributes:
        sigils: Sigil names in bind order.
        edges: Static edges ``{source: [targets]}``, START as a source, END a target.
        routes: Conditional edges ``{source: path_map}``; ``None`` for a router without
            path_map (it may send the Invocation to any Sigil, or END).
        fallbacks: ``{sigil: on_error}`` for each Sigil bound with its own policy
            (``None`` when that policy has no on_error); the others use
            ``default_fallback``.
        default_fallback: The default policy's on_error, or ``None``.
        joins: The ``join="all"`` Sigils.
    """

    sigils: tuple[str, ...]
    edges: Mapping[str, Sequence[str]]
    routes: Mapping[str, Mapping[Hashable, str] | None]
    fallbacks: Mapping[str, str | None]
    default_fallback: str | None = None
    joins: frozenset[str] = frozenset()
    bound: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound", frozenset(self.sigils))

    @classmethod
    def of(
        cls,
        specs: Mapping[str, SigilSpec],
        edges: Mapping[str, Sequence[str]],
        conditional: Mapping[str, tuple[Router, Mapping[Hashable, str] | None]],
        default_policy: SigilPolicy | None,
    ) -> Topology:
        """The names of a Ritual's graph, as :meth:`Ritual.compile` holds it."""
        return cls(
            sigils=tuple(specs),
            edges=edges,
            routes={source: path_map for source, (_router, path_map) in conditional.items()},
            fallbacks={n: s.policy.on_error for n, s in specs.items() if s.policy is not None},
            default_fallback=default_policy.on_error if default_policy is not None else None,
            joins=frozenset(n for n, s in specs.items() if s.join == "all"),
        )

    def fallback(self, name: str) -> str | None:
        """The on_error fallback Sigil ``name`` runs on failure (never itself), or None."""
        target = self.fallbacks.get(name, self.default_fallback)
        return None if target == name else target

    def successors(self, node: str) -> list[str]:
        """Where ``node`` (a Sigil or START) can lead: targets, routes, its fallback.

        END is among them when an edge or a route can finish there; a router without
        path_map leads to every Sigil and to END.
        """
        found = list(self.edges.get(node, ()))
        if node in self.routes:
            path_map = self.routes[node]
            found += [*self.sigils, END] if path_map is None else list(path_map.values())
        fallback = self.fallback(node) if node in self.bound else None
        if fallback is not None:
            found.append(fallback)
        return found

    def onward(self, *starts: str) -> set[str]:
        """The Sigils reachable from ``starts`` (the starts themselves not included)."""
        seen: set[str] = set()
        stack = list(starts)
        while stack:
            for succ in self.successors(stack.pop()):
                if succ != END and succ not in seen:
                    seen.add(succ)
                    stack.append(succ)
        return seen


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def graph_problems(topology: Topology, *, endless: bool = False) -> list[GraphProblem]:
    """Every violation of the graph rules, in the specification's order.

    Args:
        topology: The graph by names.
        endless: Also report each reachable Sigil from which no path leads to END
            (code ``endless``), which ``compile()`` accepts.

    Returns:
        The problems found; empty when the graph is sound. Later rules are checked
        even when earlier ones fail, so a problem may follow from an earlier one.
    """
    problems = [
        *_entry(topology),
        *_references(topology),
        *_fallbacks(topology),
        *_reachable(topology),
        *_outgoing(topology),
        *_joins(topology),
    ]
    if endless:
        problems += _endless(topology)
    return problems


def validate_ritual(
    specs: Mapping[str, SigilSpec],
    edges: Mapping[str, list[str]],
    conditional: Mapping[str, tuple[Router, Mapping[Hashable, str] | None]],
    default_policy: SigilPolicy | None,
) -> None:
    """Validate a Ritual's graph, in the specification's order.

    Args:
        specs: Sigils in bind order.
        edges: Static edges ``{source: [targets]}`` (START as a source).
        conditional: Conditional edges ``{source: (router, path_map or None)}``.
        default_policy: The policy for Sigils bound without one.

    Raises:
        RitualValidationError: When a rule is violated: the message, ``code`` and
            ``sigils`` are those of the first violation, ``problems`` holds every one.
    """
    problems = graph_problems(Topology.of(specs, edges, conditional, default_policy))
    if problems:
        raise RitualValidationError(problems=problems)


def _entry(t: Topology) -> Iterator[GraphProblem]:
    if not t.edges.get(START):
        yield GraphProblem(
            ErrorCode.NO_ENTRY,
            "the Ritual has no entry point: call set_entry_point(name) or add_edge(START, name)",
        )


def _references(t: Topology) -> Iterator[GraphProblem]:
    bound = _names(t.sigils) or "(none)"
    for source, targets in t.edges.items():
        if source != START and source not in t.bound:
            yield GraphProblem(
                ErrorCode.UNKNOWN_SOURCE,
                f"edge {source!r} -> {targets[0]!r} starts at unknown Sigil {source!r} "
                "(not bound); bind it with add_sigil() first",
                source=source,
                target=targets[0],
                sigils=(source,),
            )
        for target in targets:
            if target != END and target not in t.bound:
                yield GraphProblem(
                    ErrorCode.UNKNOWN_TARGET,
                    f"edge {source!r} -> {target!r} references unknown Sigil {target!r} "
                    f"(not bound); bound sigils: {bound}",
                    source=source,
                    target=target,
                    sigils=(source, target),
                )
    for source, path_map in t.routes.items():
        if source not in t.bound:
            yield GraphProblem(
                ErrorCode.UNKNOWN_ROUTER,
                f"conditional edge starts at unknown Sigil {source!r} (not bound); "
                "bind it with add_sigil()",
                source=source,
                sigils=(source,),
            )
        for key, target in (path_map or {}).items():
            if target != END and target not in t.bound:
                yield GraphProblem(
                    ErrorCode.UNKNOWN_ROUTE_TARGET,
                    f"path_map of {source!r} maps {key!r} to unknown Sigil {target!r} "
                    f"(not bound); bound sigils: {bound}",
                    source=source,
                    target=target,
                    key=key,
                    sigils=(source, target),
                )


def _fallbacks(t: Topology) -> Iterator[GraphProblem]:
    for name, target in t.fallbacks.items():
        if target == name:
            yield GraphProblem(
                ErrorCode.SELF_FALLBACK,
                f"sigil {name!r} names itself as its on_error fallback; "
                "point on_error at another sigil",
                sigil=name,
                target=name,
                sigils=(name,),
            )
        elif target is not None and target not in t.bound:
            yield GraphProblem(
                ErrorCode.UNKNOWN_FALLBACK,
                f"on_error of sigil {name!r} names unknown Sigil {target!r} "
                "(not bound); bind the fallback with add_sigil()",
                sigil=name,
                target=target,
                sigils=(name, target),
            )
    target = t.default_fallback
    if target is not None and target not in t.bound:
        yield GraphProblem(
            ErrorCode.UNKNOWN_FALLBACK,
            f"on_error of the default policy names unknown Sigil {target!r} (not bound); "
            "bind the fallback with add_sigil()",
            target=target,
            sigils=(target,),
        )


def _reachable(t: Topology) -> Iterator[GraphProblem]:
    seen = t.onward(START)
    unreachable = tuple(name for name in t.sigils if name not in seen)
    if unreachable:
        yield GraphProblem(
            ErrorCode.UNREACHABLE,
            f"sigil(s) {_names(unreachable)} cannot be reached from START (unreachable); "
            "connect them with add_edge() or remove them",
            sigils=unreachable,
        )


def _outgoing(t: Topology) -> Iterator[GraphProblem]:
    dead = tuple(name for name in t.sigils if not t.edges.get(name) and name not in t.routes)
    if dead:
        yield GraphProblem(
            ErrorCode.DEAD_END,
            f"sigil(s) {_names(dead)} have no outgoing edge; add an edge "
            "(to END if the branch finishes there)",
            sigils=dead,
        )


def _joins(t: Topology) -> Iterator[GraphProblem]:
    joins = [name for name in t.sigils if name in t.joins]
    for name in joins:
        if not any(name in targets for targets in t.edges.values()):
            yield GraphProblem(
                ErrorCode.JOIN_UNWAITED,
                f"join='all' sigil {name!r} has no static incoming edge to wait for; "
                "add static edges from its predecessors or use join='any'",
                sigil=name,
                sigils=(name,),
            )
    for source, path_map in t.routes.items():
        targets = set((path_map or {}).values())  # a dynamic router is checked as it routes
        for name in (join for join in joins if join in targets):
            yield GraphProblem(
                ErrorCode.JOIN_ROUTED,
                f"join='all' sigil {name!r} can be reached by the conditional edge of "
                f"{source!r}; a barrier waits for static predecessors only — give the "
                "router a path_map that excludes it, or use join='any'",
                source=source,
                target=name,
                sigils=(source, name),
            )
    for owner in t.sigils:
        fallback = t.fallback(owner)
        if fallback is not None and fallback in t.joins:
            yield GraphProblem(
                ErrorCode.JOIN_FALLBACK,
                f"join='all' sigil {fallback!r} is the on_error fallback of {owner!r}; "
                "a fallback must run on its own — use join='any' for it",
                sigil=owner,
                target=fallback,
                sigils=(owner, fallback),
            )


def _endless(t: Topology) -> Iterator[GraphProblem]:
    """The reachable Sigils from which no path leads to END, one problem each."""
    leads: dict[str, set[str]] = {name: set() for name in t.sigils}
    ending: set[str] = set()
    for name in t.sigils:
        for succ in t.successors(name):
            if succ == END:
                ending.add(name)
            elif succ in leads:
                leads[succ].add(name)
    stack = list(ending)
    while stack:
        for before in leads[stack.pop()] - ending:
            ending.add(before)
            stack.append(before)
    reached = t.onward(START)
    for name in t.sigils:
        if name in reached and name not in ending:
            among = tuple(sorted(t.onward(name) | {name}))
            yield GraphProblem(
                ErrorCode.ENDLESS,
                f"sigil {name!r} can never reach END: every path from it stays among "
                f"{_names(among)}, so an Invocation entering it runs until the recursion "
                "limit; give one of them an edge (or a path_map entry) to END",
                sigil=name,
                sigils=among,
            )
