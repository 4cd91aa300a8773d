"""Omens — stream events — and the stream modes that select them."""

from sanctum.errors import StreamModeError
from sanctum.omens.events import (
    CircleEchoed,
    DeltaRejected,
    Omen,
    RiteBegan,
    RiteManifested,
    SealWritten,
    SigilBegan,
    SigilCompleted,
    SigilRetried,
    SpellCallRejected,
    SpellCallRepaired,
    SuperstepBegan,
    SuperstepCompleted,
    TokenEmitted,
    Writer,
)
from sanctum.omens.modes import STREAM_MODES, resolve_modes

__all__ = [
    "STREAM_MODES",
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
    "StreamModeError",
    "SuperstepBegan",
    "SuperstepCompleted",
    "TokenEmitted",
    "Writer",
    "resolve_modes",
]
