"""The graph checks of a ritual file, worded for the file rather than the Python API.

The engine refuses a Ritual whose sigils cannot all be reached from START, or whose
``join="all"`` barriers could never fire; its messages speak of ``add_edge()`` and
``path_map``. Here the same rules are checked on the file — ``entry``, ``next``,
``routes`` and ``on_error`` — and each problem is reported at the place to fix, in the
file's words. :func:`file_wording` translates any engine message that still gets through.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sanctum.ritualfile.diagnostics import Problems
from sanctum.ritualfile.loader import YamlPath
from sanctum.ritualfile.models import PolicySpec, RitualSpec

__all__ = ["check_topology", "file_wording"]

_END = frozenset({"END", "__end__"})


def _steps(spec: RitualSpec, name: str) -> Iterator[tuple[str, YamlPath, str]]:
    """Where sigil ``name`` can lead: ``(target, position path, how)``."""
    sigil = spec.sigils[name]
    base: YamlPath = ("sigils", name)
    if isinstance(sigil.next, str):
        yield sigil.next, (*base, "next"), "next"
    elif isinstance(sigil.next, list):
        for index, target in enumerate(sigil.next):
            yield target, (*base, "next", index), "next"
    for index, route in enumerate(sigil.routes or []):
        yield route.to, (*base, "routes", index, "to"), "routes"
    fallback = _fallback(spec, name)
    if fallback is not None:
        yield fallback[0], fallback[1], "on_error"


def _fallback(spec: RitualSpec, name: str) -> tuple[str, YamlPath] | None:
    """The on_error fallback of sigil ``name`` (its own policy, else the default)."""
    sigil = spec.sigils[name]
    ref = sigil.policy if sigil.policy is not None else spec.default_policy
    if ref is None:
        return None
    if isinstance(ref, str):
        policy: PolicySpec | None = spec.policies.get(ref)
        where: YamlPath = ("policies", ref)
    else:
        policy = ref
        where = ("sigils", name, "policy") if sigil.policy is not None else ("default_policy",)
    if policy is None or policy.on_error is None or policy.on_error == name:
        return None
    return policy.on_error, (*where, "on_error")


def check_topology(spec: RitualSpec, problems: Problems) -> None:
    """Report unreachable sigils, sigils that never reach END, and idle barriers.

    A sigil from which no path leads to END (a cycle without an exit) could only stop
    at ``recursion_limit``; a ``join: all`` barrier no ``next:`` names never fires.

    Args:
        spec: A ritual whose names all resolve (run after the name checks).
        problems: Where problems are recorded, at the sigil or the reference to fix.
    """
    entry = [spec.entry] if isinstance(spec.entry, str) else list(spec.entry)
    seen: set[str] = set()
    stack = [name for name in entry if name in spec.sigils]
    seen.update(stack)
    while stack:
        for target, _path, _how in _steps(spec, stack.pop()):
            if target in spec.sigils and target not in seen:
                seen.add(target)
                stack.append(target)
    for name in spec.sigils:
        if name not in seen:
            problems.add(
                ("sigils", name),
                f"sigil {name!r} cannot be reached: no `entry`, `next`, `routes` or "
                "`on_error` leads to it; add it to a `next:` (or a route) or remove it",
                key=True,
            )
    _endless(spec, seen, problems)
    joins = [name for name, sigil in spec.sigils.items() if sigil.join == "all"]
    if not joins:
        return
    waited: set[str] = set(entry)
    for name in spec.sigils:
        for target, path, how in _steps(spec, name):
            if how == "next":
                waited.add(target)
            elif target in joins and how == "routes":
                problems.add(
                    path,
                    f"a route of sigil {name!r} leads to {target!r}, which has `join: all`; "
                    "a barrier waits only for the sigils whose `next:` names it — use "
                    f"`next:` here, or `join: any` on {target!r}",
                )
            elif target in joins:
                problems.add(
                    path,
                    f"on_error of sigil {name!r} names {target!r}, which has `join: all`; "
                    f"a fallback runs on its own — use `join: any` on {target!r}",
                )
    for name in joins:
        if name not in waited:
            problems.add(
                ("sigils", name, "join"),
                f"sigil {name!r} has `join: all`, but no `entry` or `next:` names it, so "
                "the barrier has nothing to wait for; name it in its predecessors' `next:`, "
                "or use `join: any`",
            )


def _endless(spec: RitualSpec, reached: set[str], problems: Problems) -> None:
    """Report the reachable sigils from which no path leads to END.

    Every way a sigil can lead on counts (``next``, each route, the ``on_error``
    fallback); route targets are all written in the file, so the graph is fully known.
    A run entering such a sigil could only loop until the recursion limit.
    """
    leads: dict[str, set[str]] = {name: set() for name in spec.sigils}
    finishing: set[str] = set()
    for name in spec.sigils:
        for target, _path, _how in _steps(spec, name):
            if target in _END:
                finishing.add(name)
            elif target in spec.sigils:
                leads[target].add(name)
    ending = set(finishing)
    stack = list(finishing)
    while stack:
        for before in leads[stack.pop()]:
            if before not in ending:
                ending.add(before)
                stack.append(before)
    trapped = [name for name in spec.sigils if name in reached and name not in ending]
    for name in trapped:
        loop = sorted(_onward(spec, name))
        if len(loop) == 1:
            how, fix = "it only leads back to itself", "give it"
        else:
            among = ", ".join(repr(n) for n in loop)
            how, fix = f"every path from it stays among {among}", "give one of them"
        problems.add(
            ("sigils", name),
            f"sigil {name!r} can never reach END: {how}, so a run would loop until "
            f"`recursion_limit`; {fix} a route (or `next`) to END",
            key=True,
        )


def _onward(spec: RitualSpec, name: str) -> set[str]:
    """The sigils reachable from ``name`` (itself included)."""
    found = {name}
    stack = [name]
    while stack:
        for target, _path, _how in _steps(spec, stack.pop()):
            if target in spec.sigils and target not in found:
                found.add(target)
                stack.append(target)
    return found


_WORDING = (
    (r"connect them with add_edge\(\) or remove them", "add them to a `next:` or remove them"),
    (r"; bind (?:it|the fallback) with add_sigil\(\)(?: first)?", "; define it under `sigils:`"),
    (r"call set_entry_point\(name\) or add_edge\(START, name\)", "name a sigil in `entry:`"),
    (r"; use set_entry_point\(\) for entry points", "; name it in `entry:`"),
    (r"add an edge \(to END if the branch finishes there\)", "add `next:` (END to finish)"),
    (r"add static edges from its predecessors", "name it in its predecessors' `next:`"),
    (r"give the router a path_map that excludes them", "route elsewhere"),
    (r"join='(all|any)'", r"`join: \1`"),
    (r"\bedge '([^']*)' -> '([^']*)'", r"`next: \2` of sigil '\1'"),
    (r"have no outgoing edge", "lead nowhere"),
    (r"\bbound sigils\b", "defined sigils"),
    (r"\bstatic (?:incoming )?edges?\b", "`next:`"),
    (r"\bconditional edge\b", "`routes:`"),
    (r"\bpath_map\b", "routes"),
    (r"\bunbound sigil\b", "undefined sigil"),
    (r"\bthe Ritual\b", "the ritual"),
    (r"\bSTART\b", "`entry`"),
    (r"\bedge\b", "`next`"),
)


def file_wording(message: str) -> str:
    """An engine validation message with its Python-API advice put in ritual-file terms.

    Args:
        message: A :class:`~sanctum.errors.RitualValidationError` message.

    Returns:
        The message speaking of ``entry``, ``next``, ``routes`` and ``join:`` instead
        of ``add_edge()``, ``set_entry_point()``, ``path_map`` and ``join='all'``.
    """
    for pattern, replacement in _WORDING:
        message = re.sub(pattern, replacement, message)
    return message
