"""The signs a ritual gives off as it unfolds.

Omen — a stream event. Every Omen is a frozen, keyword-only dataclass stamped with an
epoch ``timestamp`` (seconds) at creation. The scheduler emits Omens at each lifecycle
point; ``Rite.astream`` filters them by mode (see :mod:`sanctum.omens.modes`).

Lifecycle Omens carry ``invocation_id`` and ``superstep`` (1-based; 0 before the first
superstep; ``""`` and 0 when an Omen is built by hand without them). Omens raised from
inside a Sigil (tokens, spell-call repairs, Circle echoes) go through the Sigil's
:class:`Writer`, which fills in ``invocation_id``, ``superstep`` and ``sigil`` when they
are left empty.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sanctum.omens._quick import quicken

__all__ = [
    "WRITTEN",
    "CircleEchoed",
    "DeltaRejected",
    "Omen",
    "RiteBegan",
    "RiteManifested",
    "SealWritten",
    "SigilBegan",
    "SigilCompleted",
    "SigilRetried",
    "SpellCallRejected",
    "SpellCallRepaired",
    "SuperstepBegan",
    "SuperstepCompleted",
    "TokenEmitted",
    "Writer",
    "Written",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class Omen:
    """A sign given off by the ritual, stamped with its moment.

    Base class of every streaming event; ``timestamp`` is epoch seconds at creation.
    """

    timestamp: float = field(default_factory=time.time)


@dataclass(frozen=True, kw_only=True, slots=True)
class RiteBegan(Omen):
    """The invocation has started (fresh, or resumed from ``resumed_from``, a seal_id)."""

    invocation_id: str = ""
    superstep: int = 0
    resumed_from: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SuperstepBegan(Omen):
    """A superstep is about to run its frontier.

    ``frontier`` lists the active Sigils in insertion order.
    """

    invocation_id: str = ""
    superstep: int = 0
    frontier: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class SigilBegan(Omen):
    """A Sigil has started executing within a superstep."""

    invocation_id: str = ""
    superstep: int = 0
    sigil: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SigilRetried(Omen):
    """A Sigil faltered and is being attempted again.

    Emitted before each retry granted by the Sigil's policy. ``attempt`` is the retry
    number (1-based); ``cause`` the repr of the failure that triggered it; ``delay`` the
    backoff in seconds before the retry.
    """

    invocation_id: str = ""
    superstep: int = 0
    sigil: str
    attempt: int
    cause: str
    delay: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class SigilCompleted(Omen):
    """A Sigil finished and returned its partial delta.

    Emitted when the Sigil returns — before the superstep's deltas are merged into the
    Aether — with the delta after every Ward transformed it. ``duration`` is the
    Sigil's wall time in seconds, retries included.
    """

    invocation_id: str = ""
    superstep: int = 0
    sigil: str
    delta: Mapping[str, Any]
    duration: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class SuperstepCompleted(Omen):
    """A superstep's deltas were merged; ``aether`` is the full state."""

    invocation_id: str = ""
    superstep: int = 0
    aether: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class SealWritten(Omen):
    """A Seal was inscribed in the Codex at the end of a superstep.

    ``interrupted`` is true for the Seal written when an interrupt() paused the run.
    """

    invocation_id: str = ""
    superstep: int = 0
    seal_id: str
    interrupted: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class TokenEmitted(Omen):
    """A Sigil pushed an intermediate payload through its writer.

    Streams while the Sigil is still running — this is how Oracle tokens reach the
    consumer without waiting for the superstep to finish. ``payload`` is what the
    Sigil wrote (also available as ``token``).
    """

    payload: Any
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""

    @property
    def token(self) -> Any:
        """The payload, under the original engine's name (an alias of ``payload``)."""
        return self.payload


@dataclass(frozen=True, kw_only=True, slots=True)
class RiteManifested(Omen):
    """The invocation concluded; ``aether`` is the final state."""

    invocation_id: str = ""
    superstep: int = 0
    aether: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class DeltaRejected(Omen):
    """A Ward vetoed a Sigil's delta before it reached the Aether.

    Emitted when ``Ward.after_sigil`` raises WardRejection: the delta is discarded, the
    superstep aborts, and the Sigil's on_error policy applies if present. ``ward`` is
    the vetoing Ward's class name, ``reason`` its stated reason.
    """

    invocation_id: str = ""
    superstep: int = 0
    sigil: str
    ward: str
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class SpellCallRepaired(Omen):
    """A garbled spell call was mended locally before casting.

    Emitted by the summon loop's repair layer when a malformed call (broken JSON,
    fenced blocks, prose around the payload) was recovered without consulting the
    Oracle again. ``detail`` describes the mend; ``raw`` preserves the original text.
    """

    spell: str
    detail: str
    call_id: str | None = None
    raw: str = ""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class SpellCallRejected(Omen):
    """A spell call could not be executed; the Oracle was asked to correct.

    Emitted by the summon loop's repair layer when a call is unparseable, names an
    unknown Spell, or carries invalid arguments. ``reason`` is the correction message
    injected into the transcript for the Oracle; ``raw`` the original call text.
    """

    spell: str
    reason: str
    call_id: str | None = None
    raw: str = ""
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class CircleEchoed(Omen):
    """An Omen that sounded inside a Circle, echoed to the outer stream.

    Emitted by a ``circle(...)`` Sigil for every Omen its inner Rite produces:
    ``circle`` is the mounted Circle's name, ``omen`` the inner event untouched
    (including inner TokenEmitted payloads).
    """

    circle: str
    omen: Omen
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


for _kind in (
    Omen,
    RiteBegan,
    SuperstepBegan,
    SigilBegan,
    SigilRetried,
    SigilCompleted,
    SuperstepCompleted,
    SealWritten,
    TokenEmitted,
    RiteManifested,
    DeltaRejected,
    SpellCallRepaired,
    SpellCallRejected,
    CircleEchoed,
):
    quicken(_kind)  # the same dataclasses, built about a third faster (see _quick)
del _kind


class Written:
    """What a writer call returns: already done, and awaitable all the same.

    ``writer(token)`` emits at once and needs no ``await``; ``await writer(token)``
    (the original engine's spelling, inside an async Sigil) also works, and hands the
    event loop one turn so a stream consumer can take the token while the Sigil still
    runs. Dropping it unawaited is fine: it is not a coroutine.
    """

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        yield  # one turn of the event loop, as asyncio.sleep(0) gives

    def __repr__(self) -> str:
        return "WRITTEN"


WRITTEN = Written()
"""The shared :class:`Written` every writer call returns."""


class Writer(Protocol):
    """The pen handed to a Sigil that takes a second parameter.

    ``writer(payload)`` emits a :class:`TokenEmitted` Omen carrying ``payload`` while
    the Sigil still runs; ``writer.emit(omen)`` emits any other Omen (the summon loop
    uses it for spell-call repairs, Circles for echoes). Both return immediately and
    never block the Sigil. ``writer(payload)`` returns :data:`WRITTEN`, so a Sigil may
    also ``await writer(payload)``.
    """

    def __call__(self, payload: Any) -> Written:
        """Emit a TokenEmitted Omen carrying ``payload``; the result may be awaited."""

    def emit(self, omen: Omen) -> None:
        """Emit ``omen``, filling in its invocation, superstep and Sigil if empty."""


def __getattr__(name: str) -> Any:
    """``STREAM_MODES`` and ``resolve_modes`` are documented beside the Omen classes.

    They live in :mod:`sanctum.omens.modes` (which imports this module); reading them
    from here is forwarded there.
    """
    if name in ("STREAM_MODES", "resolve_modes"):
        from sanctum.omens import modes

        return getattr(modes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
