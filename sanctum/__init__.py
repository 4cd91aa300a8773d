"""sanctum — a local-first engine for cyclic state graphs of AI agents.

Draw a :class:`Ritual` (graph builder), bind Sigils (nodes) and edges, ``compile()``
it into a :class:`Rite` (compiled graph) and perform it: BSP supersteps, reducers on
the Aether (state dict), Seals (checkpoints) in a Codex (checkpoint store), interrupts,
streaming Omens (events) and Wards (middleware). Everything re-exported here imports
only the standard library.
"""

from sanctum.__about__ import __version__
from sanctum.aether import Aether, AetherSchema, Conduit
from sanctum.codex.base import Codex, Seal
from sanctum.errors import (
    AetherValidationError,
    DeltaTypeError,
    Interrupt,
    OracleConnectionError,
    OracleError,
    OracleOutputError,
    OracleResponseError,
    OracleTimeoutError,
    RecursionLimitError,
    RitualFileError,
    RitualValidationError,
    RouteError,
    SanctumError,
    SealError,
    SigilExecutionError,
    SigilJoinError,
    SigilTimeoutError,
    SpellCallParseError,
    SpellError,
    SpellExecutionError,
    SpellManifestError,
    StreamModeError,
    WardRejection,
)
from sanctum.ritual import (
    DEFAULT_RECURSION_LIMIT,
    END,
    START,
    BackoffFn,
    Rite,
    Ritual,
    SigilPolicy,
    circle,
    exponential_backoff,
    interrupt,
    scatter,
)
from sanctum.wards.base import Ward

__all__ = [
    "DEFAULT_RECURSION_LIMIT",
    "END",
    "START",
    "Aether",
    "AetherSchema",
    "AetherValidationError",
    "BackoffFn",
    "Codex",
    "Conduit",
    "DeltaTypeError",
    "Interrupt",
    "OracleConnectionError",
    "OracleError",
    "OracleOutputError",
    "OracleResponseError",
    "OracleTimeoutError",
    "RecursionLimitError",
    "Rite",
    "Ritual",
    "RitualFileError",
    "RitualValidationError",
    "RouteError",
    "SanctumError",
    "Seal",
    "SealError",
    "SigilExecutionError",
    "SigilJoinError",
    "SigilPolicy",
    "SigilTimeoutError",
    "SpellCallParseError",
    "SpellError",
    "SpellExecutionError",
    "SpellManifestError",
    "StreamModeError",
    "Ward",
    "WardRejection",
    "__version__",
    "circle",
    "exponential_backoff",
    "interrupt",
    "scatter",
]
