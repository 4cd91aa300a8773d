"""Seal rows and value rows, read and written the same way by every Codex (private).

A Seal row holds its frontier and metadata as JSON text and its Aether as a JSON
object ``{conduit: ref}`` in Conduit order, where a ref is a value row id, or
``[value]`` for a small value kept inline (see :mod:`sanctum.codex._layout` for the
value rows). :func:`aether_column` writes that column from the planned Steps;
:class:`Values` rebuilds values from value rows, each in time proportional to its
size; :func:`thaw_seal` turns a Seal row into a :class:`~sanctum.codex.base.Seal`,
raising a :class:`~sanctum.errors.SealError` naming the Invocation, the Seal and the
store when anything was damaged (a hand-edited row, a missing value), and tells a
writer what the loaded Seal holds, so that the next Seal written after a resume
chains to the stored rows instead of copying them.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterable, Iterator, Mapping
from json.encoder import encode_basestring_ascii
from typing import Any

from sanctum.codex._layout import (
    KEEP_TEXT,
    MAP_MARK,
    PACK_MARK,
    TEXT_MARK,
    Held,
    Step,
    ref_text,
)
from sanctum.codex.base import Seal
from sanctum.errors import SealError

__all__ = [
    "RowWalk",
    "Values",
    "aether_column",
    "child_ids",
    "damaged",
    "damaged_stand_in",
    "decode_refs",
    "referenced_rows",
    "row_refs",
    "thaw_each",
    "thaw_seal",
    "value_ids",
]

Ref = int | list[Any]
_MARKS = frozenset((TEXT_MARK, MAP_MARK, PACK_MARK))


def aether_column(values: Mapping[str, Step]) -> str:
    """The Seal row's Aether column: refs in Conduit order (after the steps were written)."""
    parts = [
        f"{encode_basestring_ascii(name)}:{ref_text(step.held)}" for name, step in values.items()
    ]
    return "{" + ",".join(parts) + "}"


def referenced_rows(invocation_id: str, location: str, rows: Iterable[tuple[Any, ...]]) -> set[int]:
    """The value rows Seal rows point at (a row whose refs are damaged is left out:
    thawing it reports the damage)."""
    ids: set[int] = set()
    for row in rows:
        try:
            ids.update(value_ids(decode_refs(invocation_id, str(row[0]), location, row[5])))
        except SealError:
            continue
    return ids


def row_refs(refs: Mapping[str, Ref]) -> list[int]:
    """The value row ids a Seal row points at, once per Conduit (repeats kept)."""
    return [ref for ref in refs.values() if isinstance(ref, int) and not isinstance(ref, bool)]


def value_ids(refs: Mapping[str, Ref]) -> set[int]:
    """The value row ids a Seal row (or a map row) points at."""
    return {ref for ref in refs.values() if isinstance(ref, int) and not isinstance(ref, bool)}


def damaged(invocation_id: str, seal_id: str, location: str, problem: str) -> SealError:
    """Build the SealError for a Seal whose stored form no longer makes sense."""
    return SealError(
        f"seal {seal_id!r} of invocation {invocation_id!r} in {location} is damaged: "
        f"{problem}. Nothing was changed. Resume from an earlier, intact seal with "
        "`sanctum resume --invocation ID --seal SEAL_ID` (from Python: seal_id=...), or "
        "restore the store from a backup.",
        invocation_id=invocation_id,
        seal_id=seal_id,
        location=location,
    )


def _is_ref(value: object) -> bool:
    if isinstance(value, list):
        return len(value) == 1
    return isinstance(value, int) and not isinstance(value, bool)


def decode_refs(invocation_id: str, seal_id: str, location: str, text: object) -> dict[str, Ref]:
    """Parse a Seal row's Aether column into ``{conduit: value id or [inline value]}``.

    Raises:
        SealError: If the column is not a JSON object of such refs.
    """
    try:
        refs = json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        refs = None
    if not isinstance(refs, dict) or not all(_is_ref(v) for v in refs.values()):
        raise damaged(
            invocation_id, seal_id, location, "its aether column is not a map of value refs"
        )
    return refs


def _child_refs(body: object) -> list[int]:
    """The rows a map row points at, once per key (repeats kept; empty otherwise)."""
    if not isinstance(body, str) or not body.startswith(MAP_MARK):
        return []
    try:
        refs = json.loads(body[1:])
    except ValueError:
        return []
    return row_refs(refs) if isinstance(refs, dict) else []


def child_ids(body: object) -> set[int]:
    """The rows a map row points at (empty for any other row or a damaged body)."""
    if not isinstance(body, str) or not body.startswith(MAP_MARK):
        return set()
    try:
        refs = json.loads(body[1:])
    except ValueError:
        return set()
    return value_ids(refs) if isinstance(refs, dict) else set()


class RowWalk:
    """The value rows behind some ids: their chains, and a map row's children's.

    Both stores fetch in rounds (one recursive query per round, sync or async), so the
    walk is a small state machine rather than a loop::

        walk = RowWalk(ids)
        while (wanted := walk.wanted()) is not None:
            walk.took(fetch(wanted))  # rows (id, prev, body), a pack still deflated
        rows = walk.rows
    """

    __slots__ = ("_pending", "_seen", "rows")

    def __init__(self, ids: Iterable[int]) -> None:
        self._pending = set(ids)
        self._seen: set[int] = set()
        self.rows: list[tuple[Any, Any, Any]] = []

    def wanted(self) -> list[int] | None:
        """The ids to fetch next (sorted), or None once every row is in."""
        if not self._pending:
            return None
        self._seen.update(self._pending)
        return sorted(self._pending)

    def took(self, fetched: Iterable[tuple[Any, Any, Any]]) -> None:
        """Keep the rows of one round and queue the children they name."""
        pending: set[int] = set()
        for row in fetched:
            self._seen.add(row[0])
            self.rows.append(row)
            pending.update(child_ids(row[2]))
        self._pending = pending - self._seen


def _inflate(body: bytes, start: int) -> str:
    try:
        text = zlib.decompress(body).decode("ascii")
    except (zlib.error, UnicodeDecodeError):
        raise _Broken(f"value {start} is unreadable: a pack does not inflate") from None
    if not text.startswith(PACK_MARK):
        raise _Broken(f"value {start} is unreadable: a deflated row is not a pack")
    return text[1:]


def _inflated(parts: list[str | bytes], ids: list[int]) -> Iterator[tuple[int, str]]:
    """``(row id, text)`` of each part in the order given (a pack a store keeps
    deflated, inflated), letting go of each one as it is handed over."""
    parts.reverse()
    ids = ids[::-1]
    while parts:
        part, row_id = parts.pop(), ids.pop()
        yield row_id, _inflate(part, row_id) if type(part) is bytes else part  # type: ignore[misc]


class _Broken(Exception):
    """A value row is missing, loops, or does not fit its chain (the problem as text)."""


def _parse(text: str, row_id: int) -> Any:
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_refuse_constant)
    except ValueError as exc:
        detail = str(exc) if "out of range" in str(exc) or "not JSON" in str(exc) else ""
        raise _Broken(
            f"value {row_id} is not valid JSON{': ' + detail if detail else ''}"
        ) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class Values:
    """Value rows fetched for some Seals, rebuilt on demand.

    Each :meth:`load` parses afresh (two Seals never share a mutable value) and part by
    part — one JSON parse per root, pack and link, never a joined text of the whole
    value — so loading a transcript needs about its size in rows plus its size in
    objects. ``rows`` are ``(id, prev, body)``: the wanted rows, their ancestors and a
    map row's children (see :mod:`sanctum.codex._layout`).
    """

    __slots__ = ("once", "table")

    def __init__(
        self, rows: Iterable[tuple[int, Any, Any]], once: Iterable[int] | None = None
    ) -> None:
        """Index ``rows``; with ``once`` (the refs that will be loaded, one entry per
        load), a row that only one of their chains passes through is dropped as soon
        as it is parsed, so the rows and the values they become are not both held
        whole."""
        self.table = {row_id: (prev, body) for row_id, prev, body in rows}
        self.once: set[int] = set()
        if once is not None:
            uses: dict[int, int] = {}
            starts = list(once)
            while starts:
                node: Any = starts.pop()
                seen: set[int] = set()
                while node in self.table and node not in seen:
                    seen.add(node)
                    uses[node] = uses.get(node, 0) + 1
                    prev, body = self.table[node]
                    starts.extend(_child_refs(body))
                    node = prev
            self.once = {node for node, count in uses.items() if count == 1}

    def load(self, ref: Ref) -> Held:
        """The value behind ``ref`` and what a writer holds of it.

        Raises:
            ValueError: Naming the problem, when a row is missing, loops, does not fit
                its chain, or is not valid JSON.
        """
        if isinstance(ref, list):
            value = ref[0]
            size = len(value) if isinstance(value, (list, tuple, dict, str)) else -1
            text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
            return Held(value, size, None, text)
        try:
            return self._load(ref, set())
        except _Broken as exc:
            raise ValueError(str(exc)) from None

    def _chain(self, start: int) -> tuple[Any, str, list[str], list[str | bytes], list[int]]:
        """Walk from ``start`` to its root: ``(root id, root body, marks, parts, ids)``,
        parts newest first with their row ids (a pack a store keeps deflated stays
        bytes here)."""
        table = self.table
        ids: list[int] = []
        parts: list[str | bytes] = []
        marks: list[str] = []
        seen: set[int] = set()
        node: Any = start
        while True:
            if node in seen:
                raise _Broken(f"value {start} loops back on itself")
            if node not in table:
                raise _Broken(f"value {node} is missing")
            seen.add(node)
            prev, body = table.pop(node) if node in self.once else table[node]
            if type(body) is bytes and body and prev is not None:
                marks.append(PACK_MARK)
                parts.append(body)
                ids.append(node)
                node = prev
                continue
            if not isinstance(body, str) or not body:
                raise _Broken(f"value {node} is unreadable")
            if prev is None:
                return node, body, marks, parts, ids
            mark = body[0] if body[0] in _MARKS else ""
            marks.append(mark)
            parts.append(body[1:] if mark else body)
            ids.append(node)
            node = prev

    def _load(self, start: int, active: set[int]) -> Held:
        root_id, body, marks, parts, ids = self._chain(start)
        if body.startswith(MAP_MARK):
            if parts:
                raise _Broken(f"value {start} continues a map")
            return self._load_map(start, body, active)
        base: int | None = None
        tail: tuple[str, ...] = ()
        if parts and marks[0] != PACK_MARK:
            run = marks.index(PACK_MARK) if PACK_MARK in marks else len(marks)
            tail = tuple(str(part) for part in reversed(parts[:run]))  # links: text
            base = ids[run] if run < len(marks) else root_id
        parts.reverse()
        marks.reverse()
        ids.reverse()
        if not parts:
            value = _parse(body, start)
            size = len(value) if isinstance(value, (list, dict, str)) else -1
            return Held(value, size, start, body if len(body) <= KEEP_TEXT else None)
        if body.startswith('"') and len(body) >= 2 and body.endswith('"'):
            if any(mark not in (TEXT_MARK, PACK_MARK) for mark in marks):
                raise _Broken(f"value {start} mixes text and list links")
            text = "".join([body[:-1], *(part for _id, part in _inflated(parts, ids)), '"'])
            value = _parse(text, start)
            short = text if len(text) <= KEEP_TEXT else None
            return Held(value, len(value), start, short, None, base, tail)
        if not (body.startswith("[") and body.endswith("]")):
            raise _Broken(f"value {start} continues a value that is not a list or text")
        if any(mark not in ("", PACK_MARK) for mark in marks):
            raise _Broken(f"value {start} mixes list and text links")
        items = _parse(body, root_id)
        kept: list[str] | None = [] if len(body) <= KEEP_TEXT else None
        size = len(body)
        texts = _inflated(parts, ids)
        del parts  # each part is let go of once parsed
        for row_id, part in texts:
            if not part:
                raise _Broken(f"value {row_id} continues its list with nothing")
            items.extend(_parse(f"[{part}]", row_id))
            if kept is not None:
                size += len(part) + 1
                kept = [*kept, part] if size <= KEEP_TEXT else None
        keep: str | None = None
        if kept is not None:
            joined = ",".join(kept)
            keep = f"[{joined}]" if body == "[]" else f"{body[:-1]},{joined}]"
        return Held(items, len(items), start, keep, None, base, tail)

    def _load_map(self, start: int, body: str, active: set[int]) -> Held:
        if start in active:
            raise _Broken(f"value {start} contains itself")
        refs = _parse(body[1:], start)
        if not isinstance(refs, dict):
            raise _Broken(f"value {start} is not a map of value refs")
        active.add(start)
        value: dict[str, Any] = {}
        children: dict[str, Held] = {}
        for key, ref in refs.items():
            if isinstance(ref, list) and len(ref) == 1:
                child = self.load(ref)
            elif isinstance(ref, int) and not isinstance(ref, bool):
                child = self._load(ref, active)
            else:
                raise _Broken(f"value {start} is not a map of value refs")
            value[key] = child.obj
            children[key] = child
        active.discard(start)
        return Held(value, len(value), start, None, children)


def _names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _metadata_problem(metadata: dict[str, Any]) -> str | None:
    """What is wrong with the keys the scheduler writes, or None (the keys a caller
    passed through ``ainvoke(metadata=...)`` are the caller's)."""
    parent = metadata.get("parent")
    if parent is not None and not isinstance(parent, str):
        return f"its metadata 'parent' is {parent!r:.60}, not a seal id"
    for key in ("joins", "writers"):
        value = metadata.get(key)
        if value is not None and not (
            isinstance(value, dict) and all(_names(v) for v in value.values())
        ):
            return f"its metadata {key!r} is {value!r:.60}, not a map of sigil names"
    for key in ("interrupt", "updates", "failure"):
        value = metadata.get(key)
        if value is not None and not isinstance(value, dict):
            return f"its metadata {key!r} is {value!r:.60}, not a JSON object"
    return None


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text} is out of range")
    return number


def thaw_each(
    invocation_id: str,
    location: str,
    rows: Iterable[tuple[Any, ...]],
    values: Values,
    on_damage: str = "raise",
) -> Iterator[Seal]:
    """:func:`thaw_seal` for each row in turn; with ``on_damage="mark"`` a damaged row
    gives its :func:`damaged_stand_in` instead of raising (see ``Codex.history``)."""
    for row in rows:
        try:
            seal = thaw_seal(invocation_id, location, row, values)
        except SealError as exc:
            if on_damage != "mark":
                raise
            seal = damaged_stand_in(row, exc)
        yield seal


def damaged_stand_in(row: tuple[Any, ...], error: SealError) -> Seal:
    """What a listing shows for a Seal row that cannot be read: its id, its superstep
    when that is a count, and ``metadata["damaged"]`` holding the problem."""
    superstep = row[1] if isinstance(row[1], int) and not isinstance(row[1], bool) else 0
    return Seal(
        seal_id=str(row[0]),
        aether={},
        frontier=(),
        superstep=max(superstep, 0),
        timestamp=0.0,
        metadata={"damaged": str(error)},
    )


def thaw_seal(
    invocation_id: str,
    location: str,
    row: tuple[Any, ...],
    values: Values,
    held: dict[str, Held] | None = None,
) -> Seal:
    """Turn a stored Seal row into a Seal, checking every field.

    Args:
        invocation_id: The Invocation (for messages).
        location: The store's path or address (for messages; never a password).
        row: ``(seal_id, superstep, timestamp, frontier_json, metadata_json, refs_json)``.
        values: The value rows the Seal points at (see :class:`Values`).
        held: When given, filled with what a writer holds of each loaded value (so
            that the next Seal chains to these rows).

    Raises:
        SealError: If any field was damaged (naming the Invocation and the Seal).
    """
    seal_id, superstep, timestamp, frontier_text, metadata_text, refs_text = row
    seal_id = str(seal_id)
    refs = decode_refs(invocation_id, seal_id, location, refs_text)
    if not isinstance(superstep, int) or isinstance(superstep, bool) or superstep < 0:
        raise damaged(invocation_id, seal_id, location, f"superstep {superstep!r} is not a count")
    if not isinstance(timestamp, (int, float)) or isinstance(timestamp, bool):
        raise damaged(invocation_id, seal_id, location, f"timestamp {timestamp!r} is not a number")
    try:
        frontier = json.loads(frontier_text)
    except (TypeError, ValueError):
        frontier = None
    if not isinstance(frontier, list) or not all(isinstance(s, str) for s in frontier):
        raise damaged(
            invocation_id, seal_id, location, "its frontier is not a JSON list of sigil names"
        )
    try:
        metadata = json.loads(metadata_text, parse_float=_finite, parse_constant=_refuse_constant)
    except (TypeError, ValueError):
        metadata = None
    if not isinstance(metadata, dict):
        raise damaged(invocation_id, seal_id, location, "its metadata is not a JSON object")
    problem = _metadata_problem(metadata)
    if problem is not None:
        raise damaged(invocation_id, seal_id, location, problem)
    if not math.isfinite(float(timestamp)):
        raise damaged(invocation_id, seal_id, location, f"timestamp {timestamp!r} is not finite")
    aether: dict[str, Any] = {}
    for conduit, ref in refs.items():
        try:
            loaded = values.load(ref)
        except ValueError as exc:
            raise damaged(
                invocation_id,
                seal_id,
                location,
                f"the value of conduit {conduit!r} (value {ref}) cannot be read: {exc}",
            ) from None
        aether[conduit] = loaded.obj
        if held is not None:
            held[conduit] = loaded
    return Seal(
        seal_id=seal_id,
        aether=aether,
        frontier=tuple(frontier),
        superstep=superstep,
        timestamp=float(timestamp),
        metadata=metadata,
    )
