"""The signs a ritual gives off as it unfolds.

Omen — a stream event. Every Omen is a frozen, keyword-only dataclass stamped with an
epoch ``timestamp`` (seconds) at creation. The scheduler emits Omens at each lifecycle
point; ``Rite.astream`` filters them by mode:

* ``"updates"``: SigilCompleted — one Omen per finished Sigil, with its delta.
* ``"values"``: SuperstepCompleted — the full Aether after each superstep.
* ``"tokens"``: TokenEmitted — what a Sigil pushes through its writer while it runs.
* ``"omens"``: the granular lifecycle — RiteBegan, SuperstepBegan, SigilBegan,
  SigilCompleted, SealWritten, RiteManifested, and the retries, repairs, rejections and
  Circle echoes around them.
* ``"agent"``: what an agent's loop decided for itself — OracleFellBack (a fallback
  Oracle answered), TranscriptCompacted, CompactionStalled. A mode of its own, so
  programs comparing ``STREAM_MODES["omens"]`` with an exact tuple keep working.

Each Omen class declares the mode that yields it in its ``mode`` class variable (and any
further modes in ``also_in``); :data:`STREAM_MODES` is built from those declarations, so
a new Omen class is listed in exactly one place, its own body.

Lifecycle Omens carry ``invocation_id`` and ``superstep`` (1-based; 0 before the first
superstep; ``""`` and 0 when an Omen is built by hand without them). Omens raised from
inside a Sigil (tokens, spell-call repairs, Circle echoes) go through the Sigil's
:class:`Writer`, which fills in ``invocation_id``, ``superstep`` and ``sigil`` when they
are left empty.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from sanctum.errors import StreamModeError

__all__ = [
    "OMEN_KINDS",
    "STREAM_MODES",
    "WRITTEN",
    "ApprovalRequested",
    "CircleEchoed",
    "CompactionStalled",
    "DeltaRejected",
    "LoopGuardTripped",
    "Omen",
    "OracleFellBack",
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
    "TranscriptCompacted",
    "TurnBudgetReached",
    "Writer",
    "Written",
    "resolve_modes",
]

_MODE_NAMES = ("updates", "values", "tokens", "omens", "agent")  # the order messages list them in


@dataclass(frozen=True, kw_only=True, slots=True)
class Omen:
    """A sign given off by the ritual, stamped with its moment.

    Base class of every streaming event; ``timestamp`` is epoch seconds at creation.
    ``mode`` names the stream mode that yields the class (``""``: none, as for an Omen
    subclass a program defines for itself) and ``also_in`` any further modes.
    """

    mode: ClassVar[str] = ""
    also_in: ClassVar[tuple[str, ...]] = ()

    timestamp: float = field(default_factory=time.time)


_Kind = TypeVar("_Kind", bound=type[Omen])
_KINDS: list[type[Omen]] = []


def _streamed(cls: _Kind) -> _Kind:
    """Register the Omen class ``cls`` under the stream modes it declares.

    Raises:
        TypeError: If ``cls`` names a stream mode that does not exist (a typo in sanctum).
    """
    for name in (cls.mode, *cls.also_in):
        if name not in _MODE_NAMES:
            raise TypeError(f"{cls.__name__} declares unknown stream mode {name!r}")
    _KINDS.append(cls)
    return cls


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class RiteBegan(Omen):
    """The invocation has started (fresh, or resumed from ``resumed_from``, a seal_id)."""

    mode: ClassVar[str] = "omens"

    invocation_id: str = ""
    superstep: int = 0
    resumed_from: str | None = None


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SuperstepBegan(Omen):
    """A superstep is about to run its frontier.

    ``frontier`` lists the active Sigils in insertion order.
    """

    mode: ClassVar[str] = "omens"

    invocation_id: str = ""
    superstep: int = 0
    frontier: tuple[str, ...]


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SigilBegan(Omen):
    """A Sigil has started executing within a superstep."""

    mode: ClassVar[str] = "omens"

    invocation_id: str = ""
    superstep: int = 0
    sigil: str


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SigilRetried(Omen):
    """A Sigil faltered and is being attempted again.

    Emitted before each retry granted by the Sigil's policy. ``attempt`` is the retry
    number (1-based); ``cause`` the repr of the failure that triggered it; ``delay`` the
    backoff in seconds before the retry.
    """

    mode: ClassVar[str] = "omens"

    invocation_id: str = ""
    superstep: int = 0
    sigil: str
    attempt: int
    cause: str
    delay: float = 0.0


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SigilCompleted(Omen):
    """A Sigil finished and returned its partial delta.

    Emitted when the Sigil returns — before the superstep's deltas are merged into the
    Aether — with the delta after every Ward transformed it. ``duration`` is the
    Sigil's wall time in seconds, retries included.
    """

    mode: ClassVar[str] = "updates"
    also_in: ClassVar[tuple[str, ...]] = ("omens",)  # a lifecycle step too

    invocation_id: str = ""
    superstep: int = 0
    sigil: str
    delta: Mapping[str, Any]
    duration: float = 0.0


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SuperstepCompleted(Omen):
    """A superstep's deltas were merged; ``aether`` is the full state."""

    mode: ClassVar[str] = "values"

    invocation_id: str = ""
    superstep: int = 0
    aether: Mapping[str, Any]


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SealWritten(Omen):
    """A Seal was inscribed in the Codex at the end of a superstep.

    ``interrupted`` is true for the Seal written when an interrupt() paused the run.
    """

    mode: ClassVar[str] = "omens"

    invocation_id: str = ""
    superstep: int = 0
    seal_id: str
    interrupted: bool = False


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class TokenEmitted(Omen):
    """A Sigil pushed an intermediate payload through its writer.

    Streams while the Sigil is still running — this is how Oracle tokens reach the
    consumer without waiting for the superstep to finish. ``payload`` is what the
    Sigil wrote (also available as ``token``).
    """

    mode: ClassVar[str] = "tokens"

    payload: Any
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""

    @property
    def token(self) -> Any:
        """The payload, under the original engine's name (an alias of ``payload``)."""
        return self.payload


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class RiteManifested(Omen):
    """The invocation concluded; ``aether`` is the final state."""

    mode: ClassVar[str] = "omens"

    invocation_id: str = ""
    superstep: int = 0
    aether: Mapping[str, Any]


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SpellCallRepaired(Omen):
    """A garbled spell call was mended locally before casting.

    Emitted by the summon loop's repair layer when a malformed call (broken JSON,
    fenced blocks, prose around the payload) was recovered without consulting the
    Oracle again. ``detail`` describes the mend; ``raw`` preserves the original text.
    """

    mode: ClassVar[str] = "omens"

    spell: str
    detail: str
    call_id: str | None = None
    raw: str = ""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class SpellCallRejected(Omen):
    """A spell call could not be executed; the Oracle was asked to correct.

    Emitted by the summon loop's repair layer when a call is unparseable, names an
    unknown Spell, or carries invalid arguments. ``reason`` is the correction message
    injected into the transcript for the Oracle; ``raw`` the original call text.
    """

    mode: ClassVar[str] = "omens"

    spell: str
    reason: str
    call_id: str | None = None
    raw: str = ""
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class DeltaRejected(Omen):
    """A Ward vetoed a Sigil's delta before it reached the Aether.

    Emitted when ``Ward.after_sigil`` raises WardRejection: the delta is discarded, the
    superstep aborts, and the Sigil's on_error policy applies if present. ``ward`` is
    the vetoing Ward's class name, ``reason`` its stated reason.
    """

    mode: ClassVar[str] = "omens"

    invocation_id: str = ""
    superstep: int = 0
    sigil: str
    ward: str
    reason: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class CircleEchoed(Omen):
    """An Omen that sounded inside a Circle, echoed to the outer stream.

    Emitted by a ``circle(...)`` Sigil for every Omen its inner Rite produces:
    ``circle`` is the mounted Circle's name, ``omen`` the inner event untouched
    (including inner TokenEmitted payloads).
    """

    mode: ClassVar[str] = "omens"

    circle: str
    omen: Omen
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class OracleFellBack(Omen):
    """An Oracle failed and the next one of its fallback chain answered instead.

    Emitted by the summon loop and by a plain ``oracle:`` Sigil, once per failed Oracle
    of a consultation:
    ``from_oracle`` failed for ``reason`` (a ``classify_oracle_fault`` reason such as
    ``"connection"``; ``status`` its HTTP status when there was one) and ``to_oracle``
    answered the same request. An Oracle still benched from an earlier failure and
    passed over without being asked gets one too, with ``reason="benched"``.
    """

    mode: ClassVar[str] = "agent"

    from_oracle: str
    to_oracle: str
    reason: str
    status: int | None = None
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class TranscriptCompacted(Omen):
    """Older turns were replaced by a summary in the view sent to the Oracle.

    The stored transcript is untouched. ``covered`` is how many stored messages the
    summary now stands for (from the first after the head), ``saved_tokens`` the
    estimated prompt tokens saved, ``summarizer`` the Oracle's arcana or
    ``"mechanical"``, ``forced`` whether a server-reported overflow caused it.
    """

    mode: ClassVar[str] = "agent"

    covered: int
    saved_tokens: int
    summarizer: str
    forced: bool = False
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class CompactionStalled(Omen):
    """Compaction stalled: it saved too little, or its summariser failed.

    ``reason`` says which. Saving too little stops compaction for the run: the
    transcript is sent whole from then on (an overflow still forces one compaction).
    A failed summariser is named with its failure; that round is summarised
    mechanically, and the summariser rests for some consultations.
    """

    mode: ClassVar[str] = "agent"

    reason: str
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class TurnBudgetReached(Omen):
    """The summon loop spent ``max_turns``; the ``final`` Sigil asks for a plain answer."""

    mode: ClassVar[str] = "agent"

    turns: int
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class LoopGuardTripped(Omen):
    """The loop guard blocked a repeated call or halted the loop.

    ``code`` names the counter (``repeat_failure``, ``tool_failure``, ``same_result``),
    ``action`` is ``"block"`` (the call was not cast) or ``"halt"``.
    """

    mode: ClassVar[str] = "agent"

    spell: str
    code: str
    action: str
    call_id: str | None = None
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


@_streamed
@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequested(Omen):
    """A call of a Spell behind approval waits for a person's decision (the run pauses)."""

    mode: ClassVar[str] = "agent"

    spell: str
    call_id: str | None = None
    invocation_id: str = ""
    superstep: int = 0
    sigil: str = ""


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


OMEN_KINDS: tuple[type[Omen], ...] = tuple(_KINDS)
"""Every Omen class sanctum emits, in the order they are defined above."""

STREAM_MODES: dict[str, tuple[type[Omen], ...]] = {
    name: tuple(kind for kind in OMEN_KINDS if name in (kind.mode, *kind.also_in))
    for name in _MODE_NAMES
}
"""The Omen classes each ``astream`` mode yields, built from each class's ``mode``."""


def resolve_modes(mode: str | Iterable[str]) -> frozenset[type[Omen]]:
    """Translate astream's ``mode`` into the Omen classes to yield.

    Accepts a single mode name or an iterable of names; combined modes yield the union
    of their Omen classes.

    Args:
        mode: ``"updates"``, ``"values"``, ``"omens"`` or ``"tokens"``, or an iterable
            (list, tuple, set) of those names.

    Returns:
        The Omen classes the modes yield (see :data:`STREAM_MODES`).

    Raises:
        StreamModeError: (a ``ValueError``) If a mode name is unknown, no mode is given,
            or ``mode`` is neither a name nor an iterable of names (``None``, ``5``,
            ``b"updates"``, ``[5]``).
    """
    choose = f"choose from {', '.join(repr(name) for name in STREAM_MODES)}"
    if isinstance(mode, str):
        names: list[object] = [mode]
    else:
        try:
            if isinstance(mode, bytes | bytearray | memoryview):
                raise TypeError  # iterable, but of ints: not what was meant
            items = iter(mode)
        except TypeError:
            raise StreamModeError(
                f"stream mode must be a mode name or an iterable of mode names, not "
                f"{type(mode).__name__} {_shown(mode)}; {choose}"
            ) from None
        names = list(items)
    if not names:
        raise StreamModeError(f"no stream mode given; {choose}")
    classes: set[type[Omen]] = set()
    for name in names:
        if not isinstance(name, str):
            raise StreamModeError(
                f"a stream mode must be a mode name (str), not {type(name).__name__} "
                f"{_shown(name)}; {choose}"
            )
        if name not in STREAM_MODES:
            raise StreamModeError(f"unknown stream mode {name!r}; {choose}")
        classes.update(STREAM_MODES[name])
    return frozenset(classes)


def _shown(value: object) -> str:
    """``repr(value)``, cut to 60 characters (a mode's value may be anything)."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real mistake
        return "(unprintable)"
    return text if len(text) <= 60 else text[:59] + "…"
