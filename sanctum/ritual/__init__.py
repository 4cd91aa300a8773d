"""The Ritual is drawn, sealed, and performed as a Rite.

Graph builder and executable plan. A :class:`Ritual` registers Sigils (nodes), static
edges — several per source, enabling fan-out — and conditional edges (routers);
``compile()`` validates the graph and returns a :class:`Rite`. Execution follows the
BSP superstep model implemented in :mod:`sanctum.ritual.scheduler`: all frontier
Sigils run concurrently, their deltas merge deterministically, and edges decide the
next frontier. Cycles are allowed, bounded by ``recursion_limit``. With a Codex, every
superstep leaves a Seal (resumption, ``interrupt()``, time-travel); ``astream`` yields
Omens live. Fan-in is "any" by default — ``add_sigil(..., join="all")`` turns a Sigil
into a barrier over its static predecessors. :func:`circle` mounts a Rite as one
Sigil; :func:`scatter` maps a function over a list. A Sigil that declares a parameter
named ``invocation`` receives an :class:`InvocationContext` (the run's id and the
superstep).
"""

from sanctum.errors import (
    AetherValidationError,
    DeltaTypeError,
    Interrupt,
    RecursionLimitError,
    RitualValidationError,
    RouteError,
    SealError,
    SigilExecutionError,
    SigilJoinError,
    SigilTimeoutError,
    StreamModeError,
    WardRejection,
)
from sanctum.ritual.builder import Ritual
from sanctum.ritual.circle import circle
from sanctum.ritual.constants import DEFAULT_RECURSION_LIMIT, END, START
from sanctum.ritual.interrupt import interrupt
from sanctum.ritual.invocation import InvocationContext
from sanctum.ritual.policy import BackoffFn, SigilPolicy, exponential_backoff
from sanctum.ritual.rite import Rite
from sanctum.ritual.scatter import scatter
from sanctum.ritual.writer import NULL_WRITER, NullWriter, SigilWriter

__all__ = [
    "DEFAULT_RECURSION_LIMIT",
    "END",
    "NULL_WRITER",
    "START",
    "AetherValidationError",
    "BackoffFn",
    "DeltaTypeError",
    "Interrupt",
    "InvocationContext",
    "NullWriter",
    "RecursionLimitError",
    "Rite",
    "Ritual",
    "RitualValidationError",
    "RouteError",
    "SealError",
    "SigilExecutionError",
    "SigilJoinError",
    "SigilPolicy",
    "SigilTimeoutError",
    "SigilWriter",
    "StreamModeError",
    "WardRejection",
    "circle",
    "exponential_backoff",
    "interrupt",
    "scatter",
]
