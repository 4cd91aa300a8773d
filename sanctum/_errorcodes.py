"""The codes of engine errors, and the structured problems a validation error carries.

Private: import :class:`ErrorCode` and :class:`GraphProblem` from :mod:`sanctum.errors`,
whose module docstring draws which error carries which code. They live here only to
keep that module short; like it, this module imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["ErrorCode", "GraphProblem"]


class ErrorCode(StrEnum):
    """What went wrong, as a stable name an upper layer maps to its own wording.

    A ``StrEnum``: each member equals its value (``ErrorCode.NO_ENTRY == "no-entry"``),
    the codes drawn in the tree of :mod:`sanctum.errors`. ``ENDLESS`` is found only on
    request (``sanctum.ritual.validation.graph_problems(..., endless=True)``): an
    endless cycle compiles, and the recursion limit bounds it.
    """

    NO_ENTRY = "no-entry"  # no edge leaves START
    UNKNOWN_SOURCE = "unknown-source"  # an edge starts at an unbound Sigil
    UNKNOWN_TARGET = "unknown-target"  # an edge (or entry point) ends at an unbound Sigil
    UNKNOWN_ROUTER = "unknown-router"  # a conditional edge starts at an unbound Sigil
    UNKNOWN_ROUTE_TARGET = "unknown-route-target"  # a path_map names an unbound Sigil
    SELF_FALLBACK = "self-fallback"  # a Sigil's on_error names itself
    UNKNOWN_FALLBACK = "unknown-fallback"  # an on_error names an unbound Sigil
    UNREACHABLE = "unreachable"  # no path from START leads to the Sigils
    DEAD_END = "dead-end"  # the Sigils have no outgoing edge
    ENDLESS = "endless"  # no path from the Sigil leads to END
    JOIN_UNWAITED = "join-unwaited"  # a join="all" Sigil has no static incoming edge
    JOIN_ROUTED = "join-routed"  # a join="all" Sigil is a path_map target
    JOIN_FALLBACK = "join-fallback"  # a join="all" Sigil is an on_error fallback
    INVALID_RITUAL = "invalid-ritual"  # any other refusal (a builder call, compile arguments)
    RECURSION_LIMIT = "recursion-limit"  # a call ran out of supersteps
    LEASE_LOST = "lease-lost"  # another queue worker took the Invocation over
    TURN_BUDGET = "turn-budget"  # an agent spent max_turns and may not answer
    CONTEXT_OVERFLOW = "context-overflow"  # the prompt outgrew the window after compaction
    ORACLE_CHAIN_EXHAUSTED = "oracle-chain-exhausted"  # every Oracle of a fallback chain failed


@dataclass(frozen=True, slots=True)
class GraphProblem:
    """One thing wrong with a Ritual's graph: a code, the names involved, a message.

    ``message`` is the engine's own wording, for people using the Python API; other
    layers word the problem from ``code`` and the names. ``sigil`` is the Sigil at fault
    (the owner of an on_error, a barrier, a Sigil that never ends), ``source`` and
    ``target`` the ends of the edge at fault (``target`` is also an on_error fallback),
    ``key`` a path_map key, and ``sigils`` every Sigil involved (for ``unreachable`` and
    ``dead-end`` the Sigils at fault, in bind order; for ``endless`` every Sigil the
    run could stay among, sorted).
    """

    code: ErrorCode
    message: str
    sigil: str | None = None
    source: str | None = None
    target: str | None = None
    key: object = None
    sigils: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message
