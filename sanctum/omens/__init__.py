"""Omens — stream events — and the stream modes that select them.

Each Omen class declares the stream mode that yields it (``mode``, a class variable);
:data:`STREAM_MODES` and :func:`resolve_modes` are built from those declarations.

``TraceRecorder`` and ``render_trace`` (sanctum's tracing, :mod:`sanctum.tracing`) are
also available here and at :mod:`sanctum.omens.tracing`, where the original engine kept
them; they are imported on first use (PEP 562), since tracing is built on this package.
"""

from __future__ import annotations

import importlib
import typing

from sanctum.errors import StreamModeError
from sanctum.omens.events import (
    ApprovalRequested,
    CircleEchoed,
    CompactionStalled,
    DeltaRejected,
    LoopGuardTripped,
    Omen,
    OracleFellBack,
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
    TranscriptCompacted,
    TurnBudgetReached,
    Writer,
)
from sanctum.omens.modes import STREAM_MODES, resolve_modes

if typing.TYPE_CHECKING:
    from sanctum.omens.tracing import TraceRecorder, render_trace

__all__ = [
    "STREAM_MODES",
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
    "StreamModeError",
    "SuperstepBegan",
    "SuperstepCompleted",
    "TokenEmitted",
    "TraceRecorder",
    "TranscriptCompacted",
    "TurnBudgetReached",
    "Writer",
    "render_trace",
    "resolve_modes",
]

_LAZY = {"TraceRecorder": "sanctum.omens.tracing", "render_trace": "sanctum.omens.tracing"}


def __getattr__(name: str) -> typing.Any:
    """Import the tracing names on first use (PEP 562) and cache them in the package."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sanctum.omens' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
