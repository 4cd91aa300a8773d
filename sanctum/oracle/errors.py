"""The ways the Oracle's voice — an LLM adapter's answer — can fail to arrive.

The Oracle exceptions, importable from here as the original engine laid them out;
they are the classes of :mod:`sanctum.errors` (re-exported, not copies). OracleError
is the base; OracleConnectionError (nobody listens), OracleTimeoutError (no answer in
time), OracleResponseError (an error status) and its subclass OracleOutputError (the
server could not parse the model's own output).
"""

from sanctum.errors import (
    OracleConnectionError,
    OracleError,
    OracleOutputError,
    OracleResponseError,
    OracleTimeoutError,
)

__all__ = [
    "OracleConnectionError",
    "OracleError",
    "OracleOutputError",
    "OracleResponseError",
    "OracleTimeoutError",
]
