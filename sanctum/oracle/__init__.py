"""Oracles — LLM adapters.

The HTTP adapters (``sanctum.oracle.ollama``, ``sanctum.oracle.openai_compat``) and the
in-process adapters (``sanctum.oracle.llamacpp``, ``sanctum.oracle.transformers``)
import third-party packages and are therefore not imported here; import them from
their modules.
``is_tool_rejection`` and ``is_model_output_failure`` (which classify an
OracleResponseError) live in the stdlib-only ``sanctum.oracle._http``.
``PromptedSpellCalling`` (prompted tool calling, :mod:`sanctum.oracle.robust`) is also
available here, as in the original engine, and so are ``ConstrainedSpellCalling``
(output held to a JSON Schema, :mod:`sanctum.oracle.constrained`), ``FallbackOracle``
(a chain of Oracles, :mod:`sanctum.oracle.fallback`), ``classify_oracle_fault`` and
the ``OracleFault`` it returns (:mod:`sanctum.oracle.classify`); all are imported on
first use (PEP 562).
"""

from __future__ import annotations

import importlib
import typing

from sanctum.errors import (
    OracleConnectionError,
    OracleError,
    OracleOutputError,
    OracleResponseError,
    OracleTimeoutError,
)
from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall, StreamingOracle

if typing.TYPE_CHECKING:
    from sanctum.oracle.classify import OracleFault, classify_oracle_fault
    from sanctum.oracle.constrained import ConstrainedSpellCalling
    from sanctum.oracle.fallback import FallbackOracle
    from sanctum.oracle.robust import PromptedSpellCalling
from sanctum.oracle.scripted import ScriptedOracle

__all__ = [
    "ConstrainedSpellCalling",
    "FallbackOracle",
    "Message",
    "Oracle",
    "OracleConnectionError",
    "OracleError",
    "OracleFault",
    "OracleOutputError",
    "OracleResponse",
    "OracleResponseError",
    "OracleTimeoutError",
    "PromptedSpellCalling",
    "ScriptedOracle",
    "SpellCall",
    "StreamingOracle",
    "classify_oracle_fault",
]


_LAZY = {
    "ConstrainedSpellCalling": "sanctum.oracle.constrained",
    "FallbackOracle": "sanctum.oracle.fallback",
    "OracleFault": "sanctum.oracle.classify",
    "PromptedSpellCalling": "sanctum.oracle.robust",
    "classify_oracle_fault": "sanctum.oracle.classify",
}


def __getattr__(name: str) -> typing.Any:
    """Import the spell-calling wrappers on first use (PEP 562) and cache them."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sanctum.oracle' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
