"""The sealed graph: immutable, precomputed call plans for every Sigil.

``Ritual.compile()`` turns the builder's records into a :class:`Graph` once, so the
superstep loop never inspects signatures, resolves policies or looks up edges by name
while it runs. Each :class:`SigilPlan` knows how to call its function (sync or async,
with or without a writer), its effective policy, its successors and — for
``join="all"`` Sigils — the static predecessors it waits for.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from sanctum.aether.schema import AetherSchema
from sanctum.ritual.constants import END, START
from sanctum.ritual.invocation import INVOCATION_PARAMETER, invocation_call
from sanctum.ritual.policy import BackoffFn, SigilPolicy

__all__ = [
    "Graph",
    "Router",
    "SigilFn",
    "SigilPlan",
    "SigilSpec",
    "detect_async",
    "detect_writer",
]

SigilFn = Callable[..., Any]
"""A Sigil: ``fn(aether)`` or ``fn(aether, writer)``, sync or async, returning a delta;
any of them may also declare ``invocation`` (an InvocationContext)."""

Router = Callable[..., Any]
"""A conditional edge's router: ``router(aether) -> name`` (or a path_map key)."""

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def detect_writer(fn: Callable[..., Any]) -> bool:
    """Tell whether ``fn`` accepts a second positional parameter (the writer).

    A positional parameter counts when it has no default, or when it is named
    ``writer``: ``fn(aether, pen)`` and ``fn(aether, writer=None)`` get a writer, while
    the closure idiom ``lambda aether, i=i: ...`` does not. A parameter named
    ``invocation`` after the first never counts: it asks for an InvocationContext
    (see :mod:`sanctum.ritual.invocation`), so ``fn(aether, invocation)`` gets no writer.

    Args:
        fn: The Sigil function (a function, bound method, partial or callable object).

    Returns:
        True when two or more positional parameters count.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    counted = [
        p
        for index, p in enumerate(signature.parameters.values())
        if p.kind in _POSITIONAL
        and (p.default is inspect.Parameter.empty or p.name == "writer")
        and not (index and p.name == INVOCATION_PARAMETER)
    ]
    return len(counted) >= 2


def detect_async(fn: Callable[..., Any]) -> bool:
    """Tell whether calling ``fn`` returns a coroutine (async def, or an async ``__call__``)."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004
    return call is not None and not inspect.isroutine(fn) and inspect.iscoroutinefunction(call)


@dataclass(frozen=True, slots=True)
class SigilSpec:
    """What ``add_sigil`` recorded about one Sigil (Sigil — a graph node)."""

    name: str
    fn: SigilFn
    policy: SigilPolicy | None
    join: str
    takes_writer: bool
    is_async: bool


class SigilPlan:
    """The precomputed way to perform one Sigil inside a superstep.

    ``index`` is the Sigil's bind order (deltas merge in this order); ``fast`` is true
    for a synchronous Sigil without retries that is not ``adapted``, which the runner
    calls inline; ``quiet`` is ``fast`` without a writer (a Ward's superstep hook can
    stand in for its Omens). ``adapted`` means the Sigil asks for its InvocationContext (or a
    keyword-only writer) and ``fn`` is the adapted ``call(aether, writer, invocation)``
    (see :mod:`sanctum.ritual.invocation`). Successors
    are ``targets`` (static edges, END left out) or ``router``/``route_table``
    (conditional edge). ``preds`` lists the static predecessors a ``join="all"`` Sigil
    waits for.
    """

    __slots__ = (
        "adapted",
        "backoff",
        "fast",
        "fn",
        "index",
        "is_async",
        "join_all",
        "name",
        "on_error",
        "preds",
        "quiet",
        "retries",
        "retry_on",
        "route_table",
        "router",
        "router_async",
        "takes_writer",
        "targets",
        "timeout",
    )

    def __init__(self, spec: SigilSpec, index: int, policy: SigilPolicy | None) -> None:
        self.name = spec.name
        self.index = index
        self.fn: Callable[..., Any] = spec.fn
        self.is_async = spec.is_async
        self.takes_writer = spec.takes_writer
        call = invocation_call(spec.fn, spec.takes_writer)
        self.adapted = call is not None
        if call is not None:
            self.fn = call
        self.timeout: float | None = policy.timeout if policy else None
        self.retries: int = policy.retries if policy else 0
        self.backoff: BackoffFn | None = policy.backoff if policy else None
        self.retry_on: tuple[type[BaseException], ...] = policy.retry_on if policy else ()
        self.on_error: SigilPlan | None = None
        self.fast = not spec.is_async and self.retries == 0 and not self.adapted
        self.quiet = self.fast and not spec.takes_writer
        self.join_all = spec.join == "all"
        self.preds: frozenset[str] = frozenset()
        self.targets: tuple[SigilPlan, ...] = ()
        self.router: Router | None = None
        self.router_async = False
        self.route_table: dict[Hashable, SigilPlan | None] | None = None

    def __repr__(self) -> str:
        return f"SigilPlan({self.name!r})"


class Graph:
    """The immutable compiled graph a Rite performs.

    Args:
        specs: Sigils in bind order.
        edges: Static edges ``{source: [targets]}``, START included as a source.
        conditional: Conditional edges ``{source: (router, path_map or None)}``.
        schema: The AetherSchema, or None for overwrite merges.
        default_policy: Policy for Sigils bound without one.
    """

    __slots__ = (
        "_manifest",
        "async_routers",
        "by_name",
        "entry",
        "joins",
        "plans",
        "schema",
    )

    def __init__(
        self,
        specs: Mapping[str, SigilSpec],
        edges: Mapping[str, list[str]],
        conditional: Mapping[str, tuple[Router, Mapping[Hashable, str] | None]],
        schema: AetherSchema | None,
        default_policy: SigilPolicy | None,
    ) -> None:
        plans: list[SigilPlan] = []
        for index, spec in enumerate(specs.values()):
            policy = spec.policy if spec.policy is not None else default_policy
            plans.append(SigilPlan(spec, index, policy))
        by_name = {plan.name: plan for plan in plans}
        for plan in plans:
            spec = specs[plan.name]
            policy = spec.policy if spec.policy is not None else default_policy
            # A default policy never sends a fallback Sigil back to itself.
            if policy is not None and policy.on_error not in (None, plan.name):
                plan.on_error = by_name[str(policy.on_error)]
            plan.targets = tuple(by_name[t] for t in edges.get(plan.name, ()) if t != END)
            if plan.name in conditional:
                router, path_map = conditional[plan.name]
                plan.router = router
                plan.router_async = detect_async(router)
                if path_map is not None:
                    plan.route_table = {
                        key: (None if target == END else by_name[target])
                        for key, target in path_map.items()
                    }
        preds: dict[str, set[str]] = {}
        for source, targets in edges.items():
            for target in targets:
                if target != END and by_name[target].join_all:
                    preds.setdefault(target, set()).add(source)
        for name, sources in preds.items():
            by_name[name].preds = frozenset(sources)
        self.plans: tuple[SigilPlan, ...] = tuple(plans)
        self.by_name: dict[str, SigilPlan] = by_name
        self.entry: tuple[SigilPlan, ...] = tuple(
            by_name[t] for t in edges.get(START, ()) if t != END
        )
        self.joins: dict[str, frozenset[str]] = {p.name: p.preds for p in plans if p.join_all}
        self.schema = schema
        self.async_routers = any(p.router_async for p in plans)
        self._manifest: dict[str, Any] = {
            "sigils": [p.name for p in plans],
            "edges": {source: list(targets) for source, targets in edges.items()},
            "conditional_edges": {
                source: (list(dict.fromkeys(path_map.values())) if path_map is not None else ["*"])
                for source, (_router, path_map) in conditional.items()
            },
            "joins": [p.name for p in plans if p.join_all],
            "entry": list(edges.get(START, ())),
        }

    @property
    def manifest(self) -> dict[str, Any]:
        """A fresh copy of the graph's description (see ``Rite.manifest``)."""
        return copy.deepcopy(self._manifest)
