"""The pen handed to a Sigil: push Omens while it still runs.

A Sigil that takes a second parameter receives a :class:`SigilWriter`.
``writer(payload)`` emits a TokenEmitted Omen; ``writer.emit(omen)`` emits any Omen,
with ``invocation_id``, ``superstep`` and ``sigil`` filled in when left empty. Both
return immediately; ``writer(payload)`` returns an awaitable that is already done, so
an async Sigil may write ``await writer(token)`` as well (awaiting it gives the event
loop one turn, so a stream consumer sees the token while the Sigil still runs). When
nobody listens (no Ward observing Omens, no stream consumer) the Sigil gets
:data:`NULL_WRITER`, which builds nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sanctum.omens.events import WRITTEN, Omen, TokenEmitted, Written
from sanctum.ritual.emitter import Emitter

__all__ = ["NULL_WRITER", "NullWriter", "SigilWriter"]


class SigilWriter:
    """A live writer bound to one Sigil of one superstep.

    Args:
        emitter: The Invocation's Omen bus.
        invocation_id: The run the Omens belong to.
        superstep: 1-based superstep number.
        sigil: Name of the writing Sigil.
    """

    __slots__ = ("_emitter", "invocation_id", "sigil", "superstep")

    active = True
    """True: Omens written here reach a listener."""

    def __init__(self, emitter: Emitter, invocation_id: str, superstep: int, sigil: str) -> None:
        self._emitter = emitter
        self.invocation_id = invocation_id
        self.superstep = superstep
        self.sigil = sigil

    def __call__(self, payload: Any) -> Written:
        """Emit a TokenEmitted Omen carrying ``payload``.

        Returns:
            :data:`~sanctum.omens.events.WRITTEN`: ignore it, or ``await`` it.
        """
        self._emitter.emit_nowait(
            TokenEmitted(
                payload=payload,
                invocation_id=self.invocation_id,
                superstep=self.superstep,
                sigil=self.sigil,
            )
        )
        return WRITTEN

    @property
    def secrets(self) -> Any:
        """The Rite's masking policy (a ``Secrets``), or None when it masks nothing.

        Every Omen written here is masked on its own; a Sigil that streams text in
        pieces masks the pieces as one text with ``writer.secrets.stream()``, so a
        secret split over two pieces never shows (``oracle_sigil`` does).
        """
        return self._emitter.secrets

    def emit(self, omen: Omen) -> None:
        """Emit ``omen``, filling in its invocation, superstep and Sigil if empty.

        Raises:
            TypeError: If ``omen`` is not an Omen.
        """
        if not isinstance(omen, Omen):
            raise TypeError(f"writer.emit needs an Omen, got {type(omen).__name__}")
        fill: dict[str, Any] = {}
        fields = {f.name for f in dataclasses.fields(omen)}
        if "invocation_id" in fields and not getattr(omen, "invocation_id"):  # noqa: B009
            fill["invocation_id"] = self.invocation_id
        if "superstep" in fields and not getattr(omen, "superstep"):  # noqa: B009
            fill["superstep"] = self.superstep
        if "sigil" in fields and not getattr(omen, "sigil"):  # noqa: B009
            fill["sigil"] = self.sigil
        self._emitter.emit_nowait(dataclasses.replace(omen, **fill) if fill else omen)


class NullWriter:
    """A writer whose words reach no one: every call is a no-op."""

    __slots__ = ()

    active = False
    """False: nothing listens, so callers may skip building Omens."""

    secrets = None
    """Nothing is written, so nothing is masked."""

    def __call__(self, payload: Any) -> Written:
        """Drop ``payload``; returns :data:`~sanctum.omens.events.WRITTEN` (awaitable)."""
        return WRITTEN

    def emit(self, omen: Omen) -> None:
        """Drop ``omen``."""


NULL_WRITER = NullWriter()
"""The shared no-op writer."""
