"""Oracles — LLM adapters.

The HTTP adapters (``sanctum.oracle.ollama``, ``sanctum.oracle.openai_compat``) and the
in-process llama.cpp adapter (``sanctum.oracle.llamacpp``) import third-party packages
and are therefore not imported here; import them from their modules.
"""

from sanctum.errors import (
    OracleConnectionError,
    OracleError,
    OracleResponseError,
    OracleTimeoutError,
)
from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall

__all__ = [
    "Message",
    "Oracle",
    "OracleConnectionError",
    "OracleError",
    "OracleResponse",
    "OracleResponseError",
    "OracleTimeoutError",
    "SpellCall",
]
