"""The checks a Ritual must pass before it is sealed into a Rite.

``compile()`` runs them in the order the specification gives, stopping at the first
violation: an entry point exists; every static edge and every path_map target
references a bound Sigil (or END); every policy's ``on_error`` names a bound Sigil
other than its owner; every Sigil is reachable from START (on_error fallbacks count as
reachable, and a conditional edge without path_map reaches every Sigil); every Sigil
has an outgoing edge. Then the join checks: a ``join="all"`` Sigil needs at least one
static incoming edge and can be neither the target of a conditional edge nor an
on_error fallback (a router without path_map is checked when it routes: sending the
Invocation to a join raises RouteError). Each :class:`RitualValidationError` names the
Sigils at fault.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from sanctum.errors import RitualValidationError
from sanctum.ritual.constants import END, START
from sanctum.ritual.graph import Router, SigilSpec
from sanctum.ritual.policy import SigilPolicy

__all__ = ["validate_ritual"]


def _names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)


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
        RitualValidationError: On the first violation found; ``sigils`` names the
            offenders.
    """
    _check_entry(edges)
    _check_references(specs, edges, conditional)
    _check_fallbacks(specs, default_policy)
    _check_reachable(specs, edges, conditional, default_policy)
    _check_outgoing(specs, edges, conditional)
    _check_joins(specs, edges, conditional, default_policy)


def _check_entry(edges: Mapping[str, list[str]]) -> None:
    if not edges.get(START):
        raise RitualValidationError(
            "the Ritual has no entry point: call set_entry_point(name) or add_edge(START, name)"
        )


def _check_references(
    specs: Mapping[str, SigilSpec],
    edges: Mapping[str, list[str]],
    conditional: Mapping[str, tuple[Router, Mapping[Hashable, str] | None]],
) -> None:
    for source, targets in edges.items():
        if source != START and source not in specs:
            raise RitualValidationError(
                f"edge {source!r} -> {targets[0]!r} starts at unknown Sigil {source!r} "
                "(not bound); bind it with add_sigil() first",
                sigils=[source],
            )
        for target in targets:
            if target != END and target not in specs:
                raise RitualValidationError(
                    f"edge {source!r} -> {target!r} references unknown Sigil {target!r} "
                    f"(not bound); bound sigils: {_names(list(specs)) or '(none)'}",
                    sigils=[source, target],
                )
    for source, (_router, path_map) in conditional.items():
        if source not in specs:
            raise RitualValidationError(
                f"conditional edge starts at unknown Sigil {source!r} (not bound); "
                "bind it with add_sigil()",
                sigils=[source],
            )
        for key, target in (path_map or {}).items():
            if target != END and target not in specs:
                raise RitualValidationError(
                    f"path_map of {source!r} maps {key!r} to unknown Sigil {target!r} "
                    f"(not bound); bound sigils: {_names(list(specs)) or '(none)'}",
                    sigils=[source, target],
                )


def _check_fallbacks(specs: Mapping[str, SigilSpec], default_policy: SigilPolicy | None) -> None:
    for spec in specs.values():
        if spec.policy is None or spec.policy.on_error is None:
            continue
        target = spec.policy.on_error
        if target == spec.name:
            raise RitualValidationError(
                f"sigil {spec.name!r} names itself as its on_error fallback; "
                "point on_error at another sigil",
                sigils=[spec.name],
            )
        if target not in specs:
            raise RitualValidationError(
                f"on_error of sigil {spec.name!r} names unknown Sigil {target!r} "
                "(not bound); bind the fallback with add_sigil()",
                sigils=[spec.name, target],
            )
    if (
        default_policy is not None
        and default_policy.on_error is not None
        and default_policy.on_error not in specs
    ):
        raise RitualValidationError(
            f"on_error of the default policy names unknown Sigil "
            f"{default_policy.on_error!r} (not bound); bind the fallback with add_sigil()",
            sigils=[default_policy.on_error],
        )


def _fallback_of(spec: SigilSpec, default_policy: SigilPolicy | None) -> str | None:
    policy = spec.policy if spec.policy is not None else default_policy
    if policy is None or policy.on_error is None or policy.on_error == spec.name:
        return None
    return policy.on_error


def _check_reachable(
    specs: Mapping[str, SigilSpec],
    edges: Mapping[str, list[str]],
    conditional: Mapping[str, tuple[Router, Mapping[Hashable, str] | None]],
    default_policy: SigilPolicy | None,
) -> None:
    seen: set[str] = set()
    stack = [START]
    while stack:
        node = stack.pop()
        successors: list[str] = list(edges.get(node, ()))
        if node in conditional:
            path_map = conditional[node][1]
            successors += list(specs) if path_map is None else list(path_map.values())
        if node in specs:
            fallback = _fallback_of(specs[node], default_policy)
            if fallback is not None:
                successors.append(fallback)
        for succ in successors:
            if succ != END and succ not in seen:
                seen.add(succ)
                stack.append(succ)
    unreachable = [name for name in specs if name not in seen]
    if unreachable:
        raise RitualValidationError(
            f"sigil(s) {_names(unreachable)} cannot be reached from START (unreachable); "
            "connect them with add_edge() or remove them",
            sigils=unreachable,
        )


def _check_outgoing(
    specs: Mapping[str, SigilSpec],
    edges: Mapping[str, list[str]],
    conditional: Mapping[str, tuple[Router, Mapping[Hashable, str] | None]],
) -> None:
    dead = [name for name in specs if not edges.get(name) and name not in conditional]
    if dead:
        raise RitualValidationError(
            f"sigil(s) {_names(dead)} have no outgoing edge; add an edge "
            "(to END if the branch finishes there)",
            sigils=dead,
        )


def _check_joins(
    specs: Mapping[str, SigilSpec],
    edges: Mapping[str, list[str]],
    conditional: Mapping[str, tuple[Router, Mapping[Hashable, str] | None]],
    default_policy: SigilPolicy | None,
) -> None:
    joins = [name for name, spec in specs.items() if spec.join == "all"]
    if not joins:
        return
    for name in joins:
        if not any(name in targets for targets in edges.values()):
            raise RitualValidationError(
                f"join='all' sigil {name!r} has no static incoming edge to wait for; "
                "add static edges from its predecessors or use join='any'",
                sigils=[name],
            )
    for source, (_router, path_map) in conditional.items():
        if path_map is None:
            continue  # a dynamic router is checked when it routes (RouteError)
        targets = set(path_map.values())
        routed = [name for name in joins if name in targets]
        if routed:
            raise RitualValidationError(
                f"join='all' sigil(s) {_names(routed)} can be reached by the conditional edge "
                f"of {source!r}; a barrier waits for static predecessors only — give the "
                "router a path_map that excludes them, or use join='any'",
                sigils=[source, *routed],
            )
    for spec in specs.values():
        fallback = _fallback_of(spec, default_policy)
        if fallback is not None and fallback in joins:
            raise RitualValidationError(
                f"join='all' sigil {fallback!r} is the on_error fallback of {spec.name!r}; "
                "a fallback must run on its own — use join='any' for it",
                sigils=[spec.name, fallback],
            )
