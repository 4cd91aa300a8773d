"""Did-you-mean: the closest existing name to a misspelled one, when it is close.

Private to :mod:`sanctum.ritualfile`, re-exported by
:mod:`sanctum.ritualfile.diagnostics`; kept apart so the sigil kinds can use it without
importing the diagnostics (which read the registry of kinds).

A suggestion must look like a slip of the fingers: the same word in other case, a
word and its prefix (``retry`` → ``retries``), or one a few edits away (typed, dropped,
doubled or swapped letters). A distant look-alike (``redact`` → ``project``) is no
suggestion: nothing beats a wrong one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "edits", "is_close", "suggest"]


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to ``word``, or None when nothing is close enough.

    Candidates are ranked by difflib's similarity; the best one that
    :func:`is_close` accepts wins.

    Args:
        word: The misspelled name.
        candidates: The names that exist.

    Returns:
        The best match, or None.
    """
    pool = [c for c in candidates if c != word]
    lowered = {c.lower(): c for c in pool}
    if word.lower() in lowered:
        return lowered[word.lower()]
    for found in difflib.get_close_matches(word, pool, n=5, cutoff=0.6):
        if is_close(word, found):
            return found
    return None


def is_close(word: str, candidate: str) -> bool:
    """Whether ``candidate`` is a plausible correction of ``word``.

    True (case aside) when both begin with all but at most the last character of the
    shorter one, three characters at least (``retry`` and ``retries``), or when the
    edit distance (:func:`edits`) is at most two fifths of the shorter one's length (at
    least 1): one edit for a name of up to 4 characters, two up to 7, three up to 9.
    """
    a, b = word.lower(), candidate.lower()
    shorter = min(len(a), len(b))
    shared = next((i for i in range(shorter) if a[i] != b[i]), shorter)
    if shared >= max(3, shorter - 1):
        return True
    return edits(a, b) <= max(1, shorter * 2 // 5)


def edits(a: str, b: str) -> int:
    """The optimal-string-alignment distance of ``a`` and ``b``.

    Counts the insertions, deletions, substitutions and swaps of two neighbouring
    characters that turn ``a`` into ``b``.
    """
    before: list[int] | None = None
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, 1):
        current = [i]
        for j, right in enumerate(b, 1):
            cost = 0 if left == right else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and left == b[j - 2] and a[i - 2] == right:
                best = min(best, before[j - 2] + 1)
            current.append(best)
        before, previous = previous, current
    return previous[-1]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """A ``"; did you mean 'x'?"`` suffix, or ``""`` when nothing is close."""
    best = suggest(word, candidates)
    return f"; did you mean {best!r}?" if best else ""
