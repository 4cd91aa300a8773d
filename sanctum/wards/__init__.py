"""Wards — middleware — and the Wards sanctum ships.

:class:`Ward` is the contract; :class:`AuditWard` writes a JSON Lines trail of every
delta, :class:`UsageWard` tallies Oracle usage counters, :class:`RedactWard` masks
secrets before anything is persisted or streamed, :class:`Secrets` is the masking policy a
Rite applies to every delta, Seal, Omen and error message. (TraceRecorder, also a Ward, lives in
:mod:`sanctum.tracing`.)
"""

from sanctum.errors import WardRejection
from sanctum.wards.audit import AuditWard
from sanctum.wards.base import Ward
from sanctum.wards.redact import RedactWard
from sanctum.wards.secrets import Secrets
from sanctum.wards.usage import UsageWard

__all__ = ["AuditWard", "RedactWard", "Secrets", "UsageWard", "Ward", "WardRejection"]
