"""The error a worker meets when another worker took its Invocation over.

Private: import :class:`LeaseLost` from :mod:`sanctum.errors`. It lives here only to keep
that module within its length; it imports only the standard library and the roots of
the tree (:mod:`sanctum._errorroots`), never :mod:`sanctum.errors`, which imports it.
"""

from __future__ import annotations

from sanctum._errorcodes import ErrorCode
from sanctum._errorroots import SealError

__all__ = ["LeaseLost"]


class LeaseLost(SealError):
    """Another worker took the Invocation over; this one must stop, writing nothing.

    Raised by a fenced Seal write (see ``PostgresCodex.lease``) when the Invocation's
    lease epoch in the Codex is no longer the one this worker claimed: a queue worker
    that was frozen (SIGSTOP, a long GC pause, a network partition) past the stall
    timeout while another worker resumed the Invocation. The write's transaction is
    rolled back, so the Seal history is exactly as the new owner left it.
    ``invocation_id`` names the Invocation, ``epoch`` the epoch this worker held and
    ``current`` the epoch the Codex holds now (None when the lease row is gone);
    ``code`` is always ``ErrorCode.LEASE_LOST``.
    """

    def __init__(
        self,
        message: str = "",
        *,
        invocation_id: str | None = None,
        epoch: int | None = None,
        current: int | None = None,
        location: str | None = None,
    ) -> None:
        super().__init__(
            message
            or (
                f"invocation {invocation_id!r} was taken over by another worker (lease "
                f"epoch {current} in the codex, this worker held {epoch}); this worker "
                "stopped and wrote nothing"
            ),
            invocation_id=invocation_id,
            location=location,
        )
        self.code = ErrorCode.LEASE_LOST
        self.epoch = epoch
        self.current = current


LeaseLost.__module__ = "sanctum.errors"  # where it is imported from; tracebacks say so
