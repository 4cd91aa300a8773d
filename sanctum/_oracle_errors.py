"""The errors of consulting an Oracle: connection, timeout, refusal, unreadable output.

Private: import these classes from :mod:`sanctum.errors`, whose docstring draws them in
the tree. They live here only to keep that module within its length; this module
imports only the standard library and the roots of the tree (:mod:`sanctum._errorroots`),
never :mod:`sanctum.errors`, which imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sanctum._errorcodes import ErrorCode
from sanctum._errorroots import SanctumError

__all__ = [
    "ContextOverflowError",
    "OracleChainExhausted",
    "OracleConnectionError",
    "OracleError",
    "OracleOutputError",
    "OracleResponseError",
    "OracleTimeoutError",
]


class OracleError(SanctumError):
    """The Oracle — the LLM adapter — could not be consulted.

    Base class of all Oracle adapter failures. ``endpoint`` names the URL or model
    file involved where known.
    """

    def __init__(self, message: str, *, endpoint: str | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint


class OracleConnectionError(OracleError):
    """No one answered at the Oracle's address (connection refused, DNS failure)."""


class OracleTimeoutError(OracleError):
    """The Oracle stayed silent past the allotted time (``timeout`` seconds)."""

    def __init__(
        self, message: str, *, endpoint: str | None = None, timeout: float | None = None
    ) -> None:
        super().__init__(message, endpoint=endpoint)
        self.timeout = timeout


class OracleResponseError(OracleError):
    """The Oracle's voice arrived, but as a refusal.

    The server answered with an error status. ``status`` is the HTTP status (``None``
    for in-process models), ``body`` a snippet of what the server said.
    """

    def __init__(
        self,
        message: str,
        *,
        endpoint: str | None = None,
        status: int | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message, endpoint=endpoint)
        self.status = status
        self.body = body


class OracleOutputError(OracleResponseError):
    """The Oracle spoke, but its own server could not read what the model wrote.

    Raised for llama-server's 500 ``"Failed to parse input at pos N: <output>"``: a
    model-output failure (a malformed tool call), not a transport failure — worth
    repairing or retrying. ``output`` holds the model output the server quoted, in
    full. The adapters catch it and answer with an OracleResponse whose text is
    ``output`` (so the Grimoire's text parser and repair layer see it); it reaches the
    caller only when nothing was recoverable (``output == ""``).
    """

    def __init__(
        self,
        message: str,
        *,
        endpoint: str | None = None,
        status: int | None = None,
        body: str = "",
        output: str = "",
    ) -> None:
        super().__init__(message, endpoint=endpoint, status=status, body=body)
        self.output = output


class OracleChainExhausted(OracleError):
    """Every Oracle of a fallback chain failed for one consultation.

    Raised by :class:`~sanctum.oracle.fallback.FallbackOracle`. ``attempts`` lists each
    try as ``{"oracle", "reason", "status", "endpoint", "fix"}`` dicts, in the order they
    were made; the message names each one. ``code`` is always
    ``ErrorCode.ORACLE_CHAIN_EXHAUSTED``.
    """

    code = ErrorCode.ORACLE_CHAIN_EXHAUSTED

    def __init__(self, message: str, *, attempts: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message, endpoint=None)
        self.attempts: tuple[dict[str, Any], ...] = tuple(dict(a) for a in attempts)


class ContextOverflowError(OracleResponseError):
    """The prompt outgrew the Oracle's window, even after the transcript was compacted.

    Raised by the summon loop when the server still reports an overflow after one
    forced compaction. ``window`` is the context window in tokens (``None`` when the
    server did not say), ``estimate`` the estimated prompt size in tokens. ``code`` is
    always ``ErrorCode.CONTEXT_OVERFLOW``.
    """

    code = ErrorCode.CONTEXT_OVERFLOW

    def __init__(
        self,
        message: str,
        *,
        endpoint: str | None = None,
        status: int | None = None,
        body: str = "",
        window: int | None = None,
        estimate: int | None = None,
    ) -> None:
        super().__init__(message, endpoint=endpoint, status=status, body=body)
        self.window = window
        self.estimate = estimate
