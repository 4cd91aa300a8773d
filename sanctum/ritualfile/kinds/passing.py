"""The sigil without a kind key: it writes nothing and only routes."""

from __future__ import annotations

from sanctum.ritualfile._common import SigilBase
from sanctum.ritualfile.kinds.base import SigilKind, register

__all__ = ["PassKind", "PassSigil"]


class PassSigil(SigilBase):
    """A sigil that only routes: it writes nothing and follows `next` or `routes`."""


class PassKind(SigilKind):
    """No kind key: the sigil function is a placeholder that writes nothing."""

    key = None
    model = PassSigil
    label = "route"


KIND = register(PassKind())
