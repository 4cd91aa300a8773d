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
