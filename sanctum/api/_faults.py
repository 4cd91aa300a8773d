"""One line of advice for a failure a model server caused, worded from its class.

The command line prints it under the error of a run or a command that failed because
an Oracle could not answer: a dead server, a context overflow, a missing model, a
server out of memory each get their own fix, read by
:func:`sanctum.oracle.classify.classify_oracle_fault` from the exception itself
(its class, HTTP status and body), never from the printed message.
"""

from __future__ import annotations

from sanctum.errors import ContextOverflowError, OracleChainExhausted, OracleError
from sanctum.oracle.classify import OracleFault, classify_oracle_fault

__all__ = ["OracleFault", "classify_oracle_fault", "oracle_hint"]

_DEPTH = 16
"""How many causes deep an OracleError is looked for."""


def _oracle_error(exc: BaseException) -> OracleError | None:
    """The first OracleError in ``exc``'s chain of causes (explicit, then implicit)."""
    seen: BaseException | None = exc
    for _ in range(_DEPTH):
        if seen is None:
            return None
        if isinstance(seen, OracleError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def oracle_hint(exc: BaseException) -> str | None:
    """The likely fix for a failure an Oracle caused, as one line: ``hint: ...``.

    Looks for an :class:`~sanctum.errors.OracleError` in ``exc`` and its causes (a
    Sigil's failure wraps the Oracle's), classifies it and words the reason, the HTTP
    status and the fix, e.g. ``hint: connection: start the model server, or check
    base_url``. Errors whose message names their fix already
    (:class:`~sanctum.errors.ContextOverflowError` after compaction, and
    :class:`~sanctum.errors.OracleChainExhausted`, which lists every attempt) get none.

    Args:
        exc: Any exception, as a run or a command raised it.

    Returns:
        The hint, or None when no Oracle was involved or the message says it already.
    """
    oracle_exc = _oracle_error(exc)
    if oracle_exc is None or isinstance(oracle_exc, ContextOverflowError | OracleChainExhausted):
        return None
    fault = classify_oracle_fault(oracle_exc)
    if fault.reason == "unknown" or not fault.fix:
        return None
    return f"hint: {fault.describe()}"
