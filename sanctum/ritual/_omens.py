"""Quick constructors for the four Omens the loop and the runner emit every superstep.

Each is equal to calling the Omen class with the same values as keywords (timestamp:
now), without keyword matching and without the frozen dataclass's ``__init__``: the
instance is made with ``object.__new__`` and filled through the slot descriptors,
bound once here. Written out by hand, one line per field; a test compares every one
with the keyword call, so an Omen that gains a field fails it until it is added here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from sanctum.omens.events import SigilBegan, SigilCompleted, SuperstepBegan, SuperstepCompleted

__all__ = [
    "new_sigil_began",
    "new_sigil_completed",
    "new_superstep_began",
    "new_superstep_completed",
]

_new = object.__new__
_now = time.time


def _slot(cls: type[Any], name: str) -> Callable[[Any, Any], None]:
    """The bound ``__set__`` of field ``name``'s slot descriptor on ``cls``."""
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter


_sb_timestamp = _slot(SuperstepBegan, "timestamp")
_sb_invocation = _slot(SuperstepBegan, "invocation_id")
_sb_superstep = _slot(SuperstepBegan, "superstep")
_sb_frontier = _slot(SuperstepBegan, "frontier")


def new_superstep_began(
    invocation_id: str, superstep: int, frontier: tuple[str, ...]
) -> SuperstepBegan:
    """``SuperstepBegan(invocation_id=..., superstep=..., frontier=...)``, quicker."""
    omen = _new(SuperstepBegan)
    _sb_timestamp(omen, _now())
    _sb_invocation(omen, invocation_id)
    _sb_superstep(omen, superstep)
    _sb_frontier(omen, frontier)
    return omen


_gb_timestamp = _slot(SigilBegan, "timestamp")
_gb_invocation = _slot(SigilBegan, "invocation_id")
_gb_superstep = _slot(SigilBegan, "superstep")
_gb_sigil = _slot(SigilBegan, "sigil")


def new_sigil_began(invocation_id: str, superstep: int, sigil: str) -> SigilBegan:
    """``SigilBegan(invocation_id=..., superstep=..., sigil=...)``, quicker."""
    omen = _new(SigilBegan)
    _gb_timestamp(omen, _now())
    _gb_invocation(omen, invocation_id)
    _gb_superstep(omen, superstep)
    _gb_sigil(omen, sigil)
    return omen


_gc_timestamp = _slot(SigilCompleted, "timestamp")
_gc_invocation = _slot(SigilCompleted, "invocation_id")
_gc_superstep = _slot(SigilCompleted, "superstep")
_gc_sigil = _slot(SigilCompleted, "sigil")
_gc_delta = _slot(SigilCompleted, "delta")
_gc_duration = _slot(SigilCompleted, "duration")


def new_sigil_completed(
    invocation_id: str, superstep: int, sigil: str, delta: Mapping[str, Any], duration: float
) -> SigilCompleted:
    """``SigilCompleted(invocation_id=..., superstep=..., sigil=..., delta=..., duration=...)``."""
    omen = _new(SigilCompleted)
    _gc_timestamp(omen, _now())
    _gc_invocation(omen, invocation_id)
    _gc_superstep(omen, superstep)
    _gc_sigil(omen, sigil)
    _gc_delta(omen, delta)
    _gc_duration(omen, duration)
    return omen


_sc_timestamp = _slot(SuperstepCompleted, "timestamp")
_sc_invocation = _slot(SuperstepCompleted, "invocation_id")
_sc_superstep = _slot(SuperstepCompleted, "superstep")
_sc_aether = _slot(SuperstepCompleted, "aether")


def new_superstep_completed(
    invocation_id: str, superstep: int, aether: Mapping[str, Any]
) -> SuperstepCompleted:
    """``SuperstepCompleted(invocation_id=..., superstep=..., aether=...)``, quicker."""
    omen = _new(SuperstepCompleted)
    _sc_timestamp(omen, _now())
    _sc_invocation(omen, invocation_id)
    _sc_superstep(omen, superstep)
    _sc_aether(omen, aether)
    return omen
