"""The three roots other error modules build on: any failure, a Sigil's, a Seal's.

Private: import these classes from :mod:`sanctum.errors`, whose docstring draws the whole
tree. They live here so that the modules defining errors apart (for length) can import
their bases without importing :mod:`sanctum.errors`, which imports them (no cycle). Like
it, this module imports only the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SanctumError", "SealError", "SigilExecutionError"]


class SanctumError(Exception):
    """The root of every sanctum failure.

    Catch this to handle any error the engine, the YAML layer or the adapters raise.
    :class:`Interrupt` is not a subclass: a pause is not a failure.
    """


class SigilExecutionError(SanctumError):
    """A Sigil failed mid-ritual and the superstep was abandoned.

    The sibling Sigils of that superstep are cancelled and none of its deltas are
    applied. ``sigil`` is the failing Sigil, ``aether`` a snapshot of the Aether at the
    moment of failure, ``invocation_id`` the run; the original exception is chained as
    ``__cause__``.
    """

    def __init__(
        self,
        message: str = "",
        *,
        sigil: str = "",
        aether: Mapping[str, Any] | None = None,
        invocation_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.sigil = sigil
        self.aether: dict[str, Any] = dict(aether or {})
        self.invocation_id = invocation_id


class SealError(SanctumError):
    """A Seal — a checkpoint — could not be written, read or resumed from.

    Raised when resumption lacks a Codex or an invocation_id, no Seals exist, a
    seal_id is unknown, state cannot be serialised, a store is unreachable or corrupt,
    or another process advanced the Invocation first. ``invocation_id``, ``seal_id``
    and ``location`` (a file path or a server address, never a password) give context
    where known.
    """

    def __init__(
        self,
        message: str,
        *,
        invocation_id: str | None = None,
        seal_id: str | None = None,
        location: str | None = None,
    ) -> None:
        super().__init__(message)
        self.invocation_id = invocation_id
        self.seal_id = seal_id
        self.location = location


for _root in (SanctumError, SigilExecutionError, SealError):
    _root.__module__ = "sanctum.errors"  # where they are imported from; tracebacks say so
