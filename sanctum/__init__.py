"""sanctum — a local-first engine for cyclic state graphs of AI agents.

Draw a :class:`Ritual` (graph builder), bind Sigils (nodes) and edges, ``compile()``
it into a :class:`Rite` (compiled graph) and perform it: BSP supersteps, reducers on
the Aether (state dict), Seals (checkpoints) in a Codex (checkpoint store), interrupts,
streaming Omens (events) and Wards (middleware). Everything re-exported here imports
only the standard library, and only when first used (PEP 562): ``import sanctum``
itself stays cheap for the command line.

Programs written for the original engine (0.4) import what they used from here
unchanged: besides the engine, ``Oracle`` (the LLM adapter contract), ``Spell``,
``Tome``, ``spell`` and ``summon`` (the Grimoire: tools, their registry, agents) and
``InvocationContext`` are re-exported (see ``docs/migrating.md``).
"""

from __future__ import annotations

import importlib
import typing

from sanctum.__about__ import __version__

if typing.TYPE_CHECKING:
    from sanctum.aether import (
        Aether,
        AetherSchema,
        Conduit,
    )
    from sanctum.codex.base import (
        Codex,
        Seal,
    )
    from sanctum.errors import (
        AetherValidationError,
        CassetteError,
        CassetteMismatch,
        CodexUnavailableError,
        ContextOverflowError,
        DeltaTypeError,
        ExpressionError,
        FileProblem,
        Interrupt,
        LeaseLost,
        OracleChainExhausted,
        OracleConnectionError,
        OracleError,
        OracleOutputError,
        OracleResponseError,
        OracleTimeoutError,
        RecursionLimitError,
        RitualFileError,
        RitualInputError,
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
        TraceFileError,
        TurnBudgetExceeded,
        WardRejection,
    )
    from sanctum.grimoire import (
        Spell,
        Tome,
        spell,
        summon,
    )
    from sanctum.oracle.base import (
        Oracle,
    )
    from sanctum.ritual import (
        DEFAULT_RECURSION_LIMIT,
        END,
        START,
        BackoffFn,
        InvocationContext,
        Rite,
        Ritual,
        SigilPolicy,
        circle,
        exponential_backoff,
        interrupt,
        scatter,
    )
    from sanctum.wards.base import (
        Ward,
    )

__all__ = [
    "DEFAULT_RECURSION_LIMIT",
    "END",
    "START",
    "Aether",
    "AetherSchema",
    "AetherValidationError",
    "BackoffFn",
    "CassetteError",
    "CassetteMismatch",
    "Codex",
    "CodexUnavailableError",
    "Conduit",
    "ContextOverflowError",
    "DeltaTypeError",
    "ExpressionError",
    "FileProblem",
    "Interrupt",
    "InvocationContext",
    "LeaseLost",
    "Oracle",
    "OracleChainExhausted",
    "OracleConnectionError",
    "OracleError",
    "OracleOutputError",
    "OracleResponseError",
    "OracleTimeoutError",
    "RecursionLimitError",
    "Rite",
    "Ritual",
    "RitualFileError",
    "RitualInputError",
    "RitualValidationError",
    "RouteError",
    "SanctumError",
    "Seal",
    "SealError",
    "SigilExecutionError",
    "SigilJoinError",
    "SigilPolicy",
    "SigilTimeoutError",
    "Spell",
    "SpellCallParseError",
    "SpellError",
    "SpellExecutionError",
    "SpellManifestError",
    "StreamModeError",
    "Tome",
    "TraceFileError",
    "TurnBudgetExceeded",
    "Ward",
    "WardRejection",
    "__version__",
    "circle",
    "exponential_backoff",
    "interrupt",
    "scatter",
    "spell",
    "summon",
]

_EXPORTS: dict[str, str] = {
    "Aether": "sanctum.aether",
    "AetherSchema": "sanctum.aether",
    "AetherValidationError": "sanctum.errors",
    "BackoffFn": "sanctum.ritual",
    "Codex": "sanctum.codex.base",
    "Conduit": "sanctum.aether",
    "ContextOverflowError": "sanctum.errors",
    "DEFAULT_RECURSION_LIMIT": "sanctum.ritual",
    "DeltaTypeError": "sanctum.errors",
    "END": "sanctum.ritual",
    "ExpressionError": "sanctum.errors",
    "FileProblem": "sanctum.errors",
    "Interrupt": "sanctum.errors",
    "InvocationContext": "sanctum.ritual",
    "LeaseLost": "sanctum.errors",
    "Oracle": "sanctum.oracle.base",
    "OracleChainExhausted": "sanctum.errors",
    "OracleConnectionError": "sanctum.errors",
    "OracleError": "sanctum.errors",
    "OracleOutputError": "sanctum.errors",
    "OracleResponseError": "sanctum.errors",
    "OracleTimeoutError": "sanctum.errors",
    "RecursionLimitError": "sanctum.errors",
    "Rite": "sanctum.ritual",
    "Ritual": "sanctum.ritual",
    "RitualFileError": "sanctum.errors",
    "RitualInputError": "sanctum.errors",
    "RitualValidationError": "sanctum.errors",
    "RouteError": "sanctum.errors",
    "START": "sanctum.ritual",
    "SanctumError": "sanctum.errors",
    "Seal": "sanctum.codex.base",
    "CodexUnavailableError": "sanctum.errors",
    "CassetteError": "sanctum.errors",
    "CassetteMismatch": "sanctum.errors",
    "SealError": "sanctum.errors",
    "SigilExecutionError": "sanctum.errors",
    "SigilJoinError": "sanctum.errors",
    "SigilPolicy": "sanctum.ritual",
    "SigilTimeoutError": "sanctum.errors",
    "Spell": "sanctum.grimoire",
    "SpellCallParseError": "sanctum.errors",
    "SpellError": "sanctum.errors",
    "SpellExecutionError": "sanctum.errors",
    "SpellManifestError": "sanctum.errors",
    "StreamModeError": "sanctum.errors",
    "Tome": "sanctum.grimoire",
    "TraceFileError": "sanctum.errors",
    "TurnBudgetExceeded": "sanctum.errors",
    "Ward": "sanctum.wards.base",
    "WardRejection": "sanctum.errors",
    "circle": "sanctum.ritual",
    "exponential_backoff": "sanctum.ritual",
    "interrupt": "sanctum.ritual",
    "scatter": "sanctum.ritual",
    "spell": "sanctum.grimoire",
    "summon": "sanctum.grimoire",
}


def __getattr__(name: str) -> typing.Any:
    """Import a public name on first use (PEP 562) and cache it in the module."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sanctum' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
