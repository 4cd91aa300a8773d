"""Quick constructors for the Omens the scheduler emits every superstep.

Each is equal to calling the Omen class with the same values as keywords (timestamp:
now), built without keyword matching — see :func:`sanctum.omens._quick.positional_maker`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sanctum.omens._quick import positional_maker
from sanctum.omens.events import SigilBegan, SigilCompleted, SuperstepBegan, SuperstepCompleted

__all__ = [
    "new_sigil_began",
    "new_sigil_completed",
    "new_superstep_began",
    "new_superstep_completed",
]

new_superstep_began: Callable[[str, int, tuple[str, ...]], SuperstepBegan] = positional_maker(
    SuperstepBegan, "invocation_id", "superstep", "frontier"
)
"""``new_superstep_began(invocation_id, superstep, frontier)``."""

new_sigil_began: Callable[[str, int, str], SigilBegan] = positional_maker(
    SigilBegan, "invocation_id", "superstep", "sigil"
)
"""``new_sigil_began(invocation_id, superstep, sigil)``."""

new_sigil_completed: Callable[[str, int, str, Mapping[str, Any], float], SigilCompleted] = (
    positional_maker(SigilCompleted, "invocation_id", "superstep", "sigil", "delta", "duration")
)
"""``new_sigil_completed(invocation_id, superstep, sigil, delta, duration)``."""

new_superstep_completed: Callable[[str, int, Mapping[str, Any]], SuperstepCompleted] = (
    positional_maker(SuperstepCompleted, "invocation_id", "superstep", "aether")
)
"""``new_superstep_completed(invocation_id, superstep, aether)``."""
