"""The engine's graph rules, worded for a ritual file and placed where to fix them.

The rules belong to the engine (:mod:`sanctum.ritual.validation`): every sigil reachable
from the entry, ``join: all`` barriers that can fire, fallbacks that exist. Here the
file's ``entry``, ``next``, ``routes`` and ``on_error`` become the engine's names (a
:class:`~sanctum.ritual.validation.Topology`), the engine finds every problem — and, on
request, every sigil from which no path leads to END — and each
:class:`~sanctum.errors.GraphProblem` is worded from its code and the names it carries,
never from its message (which speaks of ``add_edge()`` and ``path_map``), at the
``next``, route, ``on_error`` or sigil to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from sanctum.errors import ErrorCode, GraphProblem
from sanctum.ritual.constants import END, START
from sanctum.ritual.validation import Topology, graph_problems

if TYPE_CHECKING:  # annotations only: this module stays a leaf of the YAML layer
    from sanctum.ritualfile.diagnostics import Problems
    from sanctum.ritualfile.loader import YamlPath
    from sanctum.ritualfile.models import PolicySpec, RitualSpec

    Placed = list[tuple[YamlPath, str, bool]]
    """Where a problem goes and what it says: ``[(path, message, at the key)]``."""

__all__ = ["check_topology", "file_topology", "place"]

_END = frozenset({"END", "__end__"})


def _engine(name: str) -> str:
    return END if name in _END else name


def _entries(spec: RitualSpec) -> list[str]:
    return [spec.entry] if isinstance(spec.entry, str) else list(spec.entry)


def _policy(spec: RitualSpec, name: str | None) -> tuple[PolicySpec | None, YamlPath]:
    """The policy of sigil ``name`` (its own, else the default; ``None``: the default)
    and where it is written."""
    own = None if name is None else spec.sigils[name].policy
    ref = own if own is not None else spec.default_policy
    if isinstance(ref, str):
        return spec.policies.get(ref), ("policies", ref)
    where: YamlPath = ("default_policy",) if own is None else ("sigils", str(name), "policy")
    return ref, where


def file_topology(spec: RitualSpec) -> Topology:
    """The ritual file's graph in the engine's names, as the compiler builds it.

    Args:
        spec: A ritual whose names all resolve (after the name checks).

    Returns:
        ``entry`` as START's edges, ``next`` as static edges (END for ``END``),
        ``routes`` as a path_map of their targets, each sigil's ``on_error``.
    """
    edges: dict[str, list[str]] = {START: [_engine(n) for n in _entries(spec)]}
    routes: dict[str, dict[Hashable, str] | None] = {}
    fallbacks: dict[str, str | None] = {}
    for name, sigil in spec.sigils.items():
        if sigil.next is not None:
            step = [sigil.next] if isinstance(sigil.next, str) else sigil.next
            edges[name] = [_engine(target) for target in step]
        elif sigil.routes:
            routes[name] = {_engine(r.to): _engine(r.to) for r in sigil.routes}
        if sigil.policy is not None:
            policy = _policy(spec, name)[0]
            fallbacks[name] = policy.on_error if policy is not None else None
    default = _policy(spec, None)[0]
    return Topology(
        sigils=tuple(spec.sigils),
        edges=edges,
        routes=routes,
        fallbacks=fallbacks,
        default_fallback=default.on_error if default is not None else None,
        joins=frozenset(name for name, sigil in spec.sigils.items() if sigil.join == "all"),
    )


def check_topology(spec: RitualSpec, problems: Problems) -> None:
    """Report the engine's graph problems and the sigils that can never reach END.

    A sigil from which no path leads to END (a cycle without an exit) could only stop
    at ``recursion_limit``; a ``join: all`` barrier no ``next:`` names never fires.

    Args:
        spec: A ritual whose names all resolve (run after the name checks).
        problems: Where problems are recorded, at the sigil or the reference to fix.
    """
    for problem in graph_problems(file_topology(spec), endless=True):
        place(problem, spec, problems)


def place(problem: GraphProblem, spec: RitualSpec, problems: Problems) -> None:
    """Record an engine problem in the file's words, at the place to fix.

    The wording comes from ``problem.code`` and its names; a code with no file wording
    (a refusal the file checks make impossible) keeps the engine's message, at the
    sigils it names.

    Args:
        problem: A problem from the engine's validation (or a RitualValidationError's
            ``problems``).
        spec: The ritual file the problem was found in.
        problems: Where the problem is recorded.
    """
    words = _WORDS.get(problem.code)
    placed = words(problem, spec) if words is not None else []
    if not placed:
        message = f"the graph cannot be compiled: {problem.message}"
        named = [s for s in problem.sigils if s in spec.sigils]
        placed = [(("sigils", s), message, True) for s in named] or [(("sigils",), message, True)]
    for path, message, key in placed:
        problems.add(path, message, key=key)


def _no_entry(problem: GraphProblem, spec: RitualSpec) -> Placed:
    return [(("entry",), "the ritual has no entry point; name a sigil in `entry:`", False)]


def _named_at(value: str | list[str] | None, base: YamlPath, target: str) -> list[YamlPath]:
    """Where ``value`` (an ``entry`` or a ``next``, one name or a list) names ``target``."""
    if isinstance(value, str):
        return [base] if _engine(value) == target else []
    return [(*base, i) for i, name in enumerate(value or []) if _engine(name) == target]


def _unknown_target(problem: GraphProblem, spec: RitualSpec) -> Placed:
    source, target = str(problem.source), str(problem.target)
    message = f"names {target!r}, which is not a sigil; define it under `sigils:`"
    if source == START:
        paths = _named_at(spec.entry, ("entry",), target)
        return [(path, f"`entry` {message}", False) for path in paths]
    if source not in spec.sigils:
        return []
    paths = _named_at(spec.sigils[source].next, ("sigils", source, "next"), target)
    return [(path, f"`next` of sigil {source!r} {message}", False) for path in paths]


def _route_paths(spec: RitualSpec, source: str | None, target: str | None) -> list[YamlPath]:
    """Where the routes of sigil ``source`` lead to ``target``."""
    sigil = spec.sigils.get(str(source))
    routes = sigil.routes if sigil is not None else None
    return [
        ("sigils", str(source), "routes", i, "to")
        for i, route in enumerate(routes or [])
        if _engine(route.to) == target
    ]


def _unknown_route_target(problem: GraphProblem, spec: RitualSpec) -> Placed:
    message = (
        f"a route of sigil {problem.source!r} leads to {problem.target!r}, which is not a "
        "sigil; define it under `sigils:`"
    )
    return [(path, message, False) for path in _route_paths(spec, problem.source, problem.target)]


def _fallback_path(spec: RitualSpec, name: str | None) -> YamlPath:
    return (*_policy(spec, name)[1], "on_error")


def _self_fallback(problem: GraphProblem, spec: RitualSpec) -> Placed:
    message = f"sigil {problem.sigil!r} cannot be its own on_error fallback"
    return [(_fallback_path(spec, problem.sigil), message, False)]


def _unknown_fallback(problem: GraphProblem, spec: RitualSpec) -> Placed:
    owner = "`default_policy`" if problem.sigil is None else f"sigil {problem.sigil!r}"
    message = (
        f"on_error of {owner} names {problem.target!r}, which is not a sigil; "
        "define it under `sigils:`"
    )
    return [(_fallback_path(spec, problem.sigil), message, False)]


def _unreachable(problem: GraphProblem, spec: RitualSpec) -> Placed:
    return [
        (
            ("sigils", name),
            f"sigil {name!r} cannot be reached: no `entry`, `next`, `routes` or "
            "`on_error` leads to it; add it to a `next:` (or a route) or remove it",
            True,
        )
        for name in problem.sigils
    ]


def _dead_end(problem: GraphProblem, spec: RitualSpec) -> Placed:
    return [
        (
            ("sigils", name),
            f"sigil {name!r} has nowhere to go; add `next:` (a sigil, a list, or END) or `routes:`",
            True,
        )
        for name in problem.sigils
    ]


def _endless(problem: GraphProblem, spec: RitualSpec) -> Placed:
    name = str(problem.sigil)
    if len(problem.sigils) == 1:
        how, fix = "it only leads back to itself", "give it"
    else:
        among = ", ".join(repr(n) for n in problem.sigils)
        how, fix = f"every path from it stays among {among}", "give one of them"
    message = (
        f"sigil {name!r} can never reach END: {how}, so a run would loop until "
        f"`recursion_limit`; {fix} a route (or `next`) to END"
    )
    return [(("sigils", name), message, True)]


def _join_unwaited(problem: GraphProblem, spec: RitualSpec) -> Placed:
    name = problem.sigil
    message = (
        f"sigil {name!r} has `join: all`, but no `entry` or `next:` names it, so the "
        "barrier has nothing to wait for; name it in its predecessors' `next:`, or use "
        "`join: any`"
    )
    return [(("sigils", str(name), "join"), message, False)]


def _join_routed(problem: GraphProblem, spec: RitualSpec) -> Placed:
    source, target = problem.source, problem.target
    message = (
        f"a route of sigil {source!r} leads to {target!r}, which has `join: all`; a barrier "
        "waits only for the sigils whose `next:` names it — use `next:` here, or "
        f"`join: any` on {target!r}"
    )
    return [(path, message, False) for path in _route_paths(spec, source, target)]


def _join_fallback(problem: GraphProblem, spec: RitualSpec) -> Placed:
    owner, target = problem.sigil, problem.target
    message = (
        f"on_error of sigil {owner!r} names {target!r}, which has `join: all`; a fallback "
        f"runs on its own — use `join: any` on {target!r}"
    )
    return [(_fallback_path(spec, owner), message, False)]


_WORDS: dict[ErrorCode, Callable[[GraphProblem, RitualSpec], Placed]] = {
    ErrorCode.NO_ENTRY: _no_entry,
    ErrorCode.UNKNOWN_TARGET: _unknown_target,
    ErrorCode.UNKNOWN_ROUTE_TARGET: _unknown_route_target,
    ErrorCode.SELF_FALLBACK: _self_fallback,
    ErrorCode.UNKNOWN_FALLBACK: _unknown_fallback,
    ErrorCode.UNREACHABLE: _unreachable,
    ErrorCode.DEAD_END: _dead_end,
    ErrorCode.ENDLESS: _endless,
    ErrorCode.JOIN_UNWAITED: _join_unwaited,
    ErrorCode.JOIN_ROUTED: _join_routed,
    ErrorCode.JOIN_FALLBACK: _join_fallback,
}
"""The file's words and places for each code the file can run into."""
