"""Which Omens each stream mode of ``Rite.astream`` yields."""

from __future__ import annotations

from collections.abc import Iterable

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
)

__all__ = ["STREAM_MODES", "resolve_modes"]

STREAM_MODES: dict[str, tuple[type[Omen], ...]] = {
    "updates": (SigilCompleted,),
    "values": (SuperstepCompleted,),
    "tokens": (TokenEmitted,),
    "omens": (
        RiteBegan,
        SuperstepBegan,
        SigilBegan,
        SigilRetried,
        SigilCompleted,
        SealWritten,
        RiteManifested,
        SpellCallRepaired,
        SpellCallRejected,
        DeltaRejected,
        CircleEchoed,
    ),
}
"""The Omen classes each ``astream`` mode yields."""


def resolve_modes(mode: str | Iterable[str]) -> frozenset[type[Omen]]:
    """Translate astream's ``mode`` into the Omen classes to yield.

    Accepts a single mode name or an iterable of names; combined modes yield the union
    of their Omen classes.

    Raises:
        StreamModeError: (a ``ValueError``) If a mode name is unknown or no mode is given.
    """
    names = [mode] if isinstance(mode, str) else list(mode)
    if not names:
        raise StreamModeError(f"no stream mode given; choose from {', '.join(STREAM_MODES)}")
    classes: set[type[Omen]] = set()
    for name in names:
        try:
            classes.update(STREAM_MODES[name])
        except (KeyError, TypeError):
            raise StreamModeError(
                f"unknown stream mode {name!r}; choose from {', '.join(STREAM_MODES)}"
            ) from None
    return frozenset(classes)
