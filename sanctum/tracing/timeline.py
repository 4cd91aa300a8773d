"""The superstep timeline of a trace: one row per Sigil execution, kept in columns.

A row is ``(superstep, sigil, began, ended, delta, status, attempts)``: ``began`` and
``ended`` are integer epoch nanoseconds (``ended`` is None while the Sigil runs),
``delta`` what the Sigil returned (None unless it completed), ``status`` one of the
trace's Sigil statuses and ``attempts`` a count.

Rows are stored column by column, because a TraceRecorder adds a row for every Sigil
of every superstep and writes them all when the Rite manifests: appending to a few
lists (no object per row for the garbage collector to visit), then packing each integer
column into one hexadecimal string, costs a fraction of building and printing a JSON
list per row. The written form
(:meth:`Timeline.encode`, read back by :func:`decode_rows`) is a JSON object::

    {"rows": n, "names": [sigil names],
     "superstep": hex, "sigil": hex, "began": hex, "ended": hex,
     "delta": [delta | null, ...],
     "status": {"row index": status}, "attempts": {"row index": n},
     "frontiers": {"row index": [sigil names]}}

where each ``hex`` is the lowercase hexadecimal text of ``n`` little-endian signed
64-bit integers (16 digits each), ``sigil`` holds indexes into ``names``, ``ended`` holds
-9223372036854775808 for "not ended", and ``status`` / ``attempts`` list only the rows
that are not ``"completed"`` after one attempt; ``frontiers`` gives, for the first row
of a superstep of several Sigils, its whole frontier (rows only show the Sigils that
began).
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "NOT_ENDED",
    "PACKED_COLUMNS",
    "Timeline",
    "TimelineRow",
    "decode_frontiers",
    "decode_rows",
    "encode_rows",
]

NOT_ENDED = -(2**63)
"""The ``ended`` value written for a Sigil that had not ended."""

TimelineRow = tuple[int, str, int, int | None, Any, str, int]
"""``(superstep, sigil, began, ended, delta, status, attempts)``."""

PACKED_COLUMNS = ("superstep", "sigil", "began", "ended")
"""The keys of the written timeline whose values are hexadecimal text (no JSON escaping)."""

_COLUMNS = PACKED_COLUMNS
_LITTLE = sys.byteorder == "little"


class Timeline:
    """The rows of one run's timeline, appended as Sigils begin and end.

    Row numbers (0, 1, …) identify rows for later changes (a Sigil completing, a status
    settled). The append methods are bound once (``add``, ``open``) because the engine's
    superstep tap calls them for every Sigil.
    """

    __slots__ = (
        "_began",
        "_codes",
        "_deltas",
        "_ended",
        "_names",
        "_sigils",
        "_supersteps",
        "attempts",
        "frontiers",
        "status",
    )

    def __init__(self) -> None:
        self._supersteps: list[int] = []
        self._sigils: list[int] = []
        self._began: list[int] = []
        self._ended: list[int] = []
        self._deltas: list[Any] = []
        self._names: list[str] = []
        self._codes: dict[str, int] = {}
        self.status: dict[int, str] = {}
        """Row number -> status, for rows that are not (yet) ``completed``."""
        self.attempts: dict[int, int] = {}
        """Row number -> attempts, for rows with more than one."""
        self.frontiers: dict[int, list[str]] = {}
        """Row number -> the whole frontier of the superstep that row begins, kept for
        supersteps of several Sigils (some of which may never have begun)."""

    def __len__(self) -> int:
        return len(self._deltas)

    def code(self, sigil: str) -> int:
        """The index of ``sigil`` in the name table (added when new)."""
        code = self._codes.get(sigil)
        if code is None:
            code = self._codes[sigil] = len(self._names)
            self._names.append(sigil)
        return code

    def appenders(self) -> tuple[Any, Any, Any, Any, Any, dict[str, int]]:
        """The bound ``append`` of each column, then the name-to-index table.

        For the hot path (the engine's superstep tap), which appends a completed row
        without a method call: ``superstep``, ``code(sigil)``, ``began``, ``ended``,
        ``delta`` — in that order, all five, or the columns fall out of step.
        """
        return (
            self._supersteps.append,
            self._sigils.append,
            self._began.append,
            self._ended.append,
            self._deltas.append,
            self._codes,
        )

    def add(self, superstep: int, sigil: str, began: int, ended: int, delta: Any) -> None:
        """Append a completed row (one attempt). ``delta`` must already be a copy."""
        code = self._codes.get(sigil)
        if code is None:
            code = self.code(sigil)
        self._supersteps.append(superstep)
        self._sigils.append(code)
        self._began.append(began)
        self._ended.append(ended)
        self._deltas.append(delta)

    def open(self, superstep: int, sigil: str, began: int) -> int:
        """Append a row for a Sigil that began and is running; returns its number."""
        number = len(self._deltas)
        self._supersteps.append(superstep)
        self._sigils.append(self.code(sigil))
        self._began.append(began)
        self._ended.append(NOT_ENDED)
        self._deltas.append(None)
        self.status[number] = "running"
        return number

    def end(self, number: int, ended: int, delta: Any = None) -> None:
        """Set when row ``number`` ended and (if it completed) its delta."""
        self._ended[number] = ended
        self._deltas[number] = delta

    def superstep(self, number: int) -> int:
        """The superstep of row ``number``."""
        return self._supersteps[number]

    def sigil(self, number: int) -> str:
        """The Sigil of row ``number``."""
        return self._names[self._sigils[number]]

    def ended(self, number: int) -> int | None:
        """When row ``number`` ended, or None."""
        value = self._ended[number]
        return None if value == NOT_ENDED else value

    def state(self, number: int) -> str:
        """The status of row ``number``."""
        return self.status.get(number, "completed")

    def last_step(self) -> range:
        """Row numbers of the latest superstep (the trailing rows sharing its number)."""
        end = len(self._deltas)
        if not end:
            return range(0)
        number = self._supersteps[end - 1]
        start = end - 1
        while start > 0 and self._supersteps[start - 1] == number:
            start -= 1
        return range(start, end)

    def encode(self) -> dict[str, Any]:
        """The written form (see the module docstring); shares the delta list."""
        return {
            "rows": len(self._deltas),
            "names": list(self._names),
            "superstep": _pack(self._supersteps),
            "sigil": _pack(self._sigils),
            "began": _pack(self._began),
            "ended": _pack(self._ended),
            "delta": self._deltas,
            "status": {str(k): v for k, v in self.status.items() if v != "completed"},
            "attempts": {str(k): v for k, v in self.attempts.items() if v != 1},
            "frontiers": {str(k): v for k, v in self.frontiers.items()},
        }


def _pack(values: Sequence[int]) -> str:
    # struct converts a list of ints about twice as fast as array("q", values)
    return struct.pack(f"<{len(values)}q", *values).hex()


def _unpack(text: Any, count: int) -> array[int] | None:
    if not isinstance(text, str):
        return None
    if len(text) != count * 16:
        return None
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    if len(raw) != count * 8:
        return None
    column = array("q")
    column.frombytes(raw)
    if not _LITTLE:  # pragma: no cover - big-endian hosts
        column.byteswap()
    return column


def decode_rows(encoded: Any) -> list[TimelineRow]:
    """The rows of a written timeline, oldest first.

    Anything malformed — a hand-edited or truncated file — yields no rows rather than
    an exception: the columns must all be present, of the stated length, and name
    indexes must point into ``names``.

    Args:
        encoded: The ``timeline`` value of a trace document.

    Returns:
        ``(superstep, sigil, began, ended, delta, status, attempts)`` tuples.
    """
    if not isinstance(encoded, Mapping):
        return []
    count = encoded.get("rows")
    names = encoded.get("names")
    deltas = encoded.get("delta")
    if (
        not isinstance(count, int)
        or isinstance(count, bool)
        or count < 0
        or not isinstance(names, list)
        or not all(isinstance(name, str) for name in names)
        or not isinstance(deltas, list)
        or len(deltas) != count
    ):
        return []
    columns = [_unpack(encoded.get(key), count) for key in _COLUMNS]
    supersteps, sigils, began, ended = columns
    if supersteps is None or sigils is None or began is None or ended is None:
        return []
    if any(code < 0 or code >= len(names) for code in sigils):
        return []
    status = _sparse(encoded.get("status"), str)
    attempts = _sparse(encoded.get("attempts"), int)
    rows: list[TimelineRow] = []
    for number in range(count):
        stop = ended[number]
        rows.append(
            (
                supersteps[number],
                names[sigils[number]],
                began[number],
                None if stop == NOT_ENDED else stop,
                deltas[number],
                str(status.get(number, "completed")),
                int(attempts.get(number, 1)),
            )
        )
    return rows


def decode_frontiers(encoded: Any) -> dict[int, list[str]]:
    """Row number -> frontier names of a written timeline (malformed entries skipped)."""
    if not isinstance(encoded, Mapping):
        return {}
    found = _sparse(encoded.get("frontiers"), list)
    return {row: names for row, names in found.items() if all(isinstance(n, str) for n in names)}


def _sparse(value: Any, kind: type) -> dict[int, Any]:
    found: dict[int, Any] = {}
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and key.isascii() and key.isdigit() and isinstance(item, kind):
                if kind is int and isinstance(item, bool):
                    continue
                found[int(key)] = item
    return found


def encode_rows(
    rows: list[TimelineRow], frontiers: Mapping[int, list[str]] | None = None
) -> dict[str, Any]:
    """The written form of rows (used when joining two timelines).

    Args:
        rows: ``(superstep, sigil, began, ended, delta, status, attempts)`` tuples.
        frontiers: Row number -> the frontier of the superstep that row begins.
    """
    timeline = Timeline()
    timeline.frontiers.update(frontiers or {})
    for superstep, sigil, began, ended, delta, status, attempts in rows:
        if ended is None:
            number = timeline.open(superstep, sigil, began)
        else:
            number = len(timeline)
            timeline.add(superstep, sigil, began, ended, delta)
        if status != "completed":
            timeline.status[number] = status
        elif number in timeline.status:
            del timeline.status[number]
        if attempts != 1:
            timeline.attempts[number] = attempts
    return timeline.encode()
