"""sanctum — a local-first engine for cyclic state graphs of AI agents.

The engine core re-exported here imports only the standard library.
(The engine helper completes this list as the modules land.)
"""

from sanctum.__about__ import __version__
from sanctum.aether import AetherSchema, Conduit
from sanctum.errors import (
    AetherValidationError,
    Interrupt,
    RecursionLimitError,
    RitualValidationError,
    SanctumError,
    SealError,
    SigilExecutionError,
    SigilJoinError,
    SigilTimeoutError,
)

__all__ = [
    "AetherSchema",
    "AetherValidationError",
    "Conduit",
    "Interrupt",
    "RecursionLimitError",
    "RitualValidationError",
    "SanctumError",
    "SealError",
    "SigilExecutionError",
    "SigilJoinError",
    "SigilTimeoutError",
    "__version__",
]
