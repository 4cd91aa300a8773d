"""Did-you-mean: the closest existing name to a misspelled one.

Private to :mod:`sanctum.ritualfile`, re-exported by
:mod:`sanctum.ritualfile.diagnostics`; kept apart so the sigil kinds can use it without
importing the diagnostics (which read the registry of kinds).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "suggest"]


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to ``word`` (difflib), or None when nothing is close.

    Args:
        word: The misspelled name.
        candidates: The names that exist.

    Returns:
        The best match, or None.
    """
    pool = [c for c in candidates if c != word]
    found = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    if found:
        return found[0]
    lowered = {c.lower(): c for c in pool}
    return lowered.get(word.lower())


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """A ``"; did you mean 'x'?"`` suffix, or ``""`` when nothing is close."""
    best = suggest(word, candidates)
    return f"; did you mean {best!r}?" if best else ""
