"""The ways a ritual may be refused or go wrong while performed.

The Ritual layer's exceptions, importable from here as the original engine laid them
out (``from sanctum.ritual.errors import SigilExecutionError``). They are the classes
of :mod:`sanctum.errors` — one tree, re-exported, not copies — so ``except`` clauses
written against either path catch the same failures. Interrupt, a pause rather than a
failure, is here too (also available from :mod:`sanctum.ritual.interrupt`).
"""

from sanctum.errors import (
    DeltaTypeError,
    Interrupt,
    RecursionLimitError,
    RitualValidationError,
    RouteError,
    SigilExecutionError,
    SigilJoinError,
    SigilTimeoutError,
)

__all__ = [
    "DeltaTypeError",
    "Interrupt",
    "RecursionLimitError",
    "RitualValidationError",
    "RouteError",
    "SigilExecutionError",
    "SigilJoinError",
    "SigilTimeoutError",
]
