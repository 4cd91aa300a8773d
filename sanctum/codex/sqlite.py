"""A Codex bound in a single local volume: one SQLite file.

SqliteCodex — a durable checkpoint store on the Python stdlib sqlite3 module — no
external dependencies, local-first. The Aether, frontier, and metadata are stored as
JSON columns.

Limitation: every value in the Aether and metadata must be JSON-serializable (str,
int, float, bool, None, and lists/dicts thereof). Non-serializable state raises
SealError at put time; convert rich objects to plain data in your Sigils.

The interface is async to honor the Codex contract, but operations execute
synchronously inline: local SQLite calls are short-lived and this keeps the core
dependency-free.

Storage: each Conduit value is stored once, content-addressed, and a Seal row points
at the values it holds; a list that extends the list the same Conduit held in the
parent Seal stores only its new items, chained to the stored prefix. A conversation of
*n* messages therefore costs about *n* messages on disk, not *n²/2*, and a Seal whose
Aether stays the same size costs the same bytes at superstep 1,000 as at superstep 10.

Durability: the file is in WAL mode with ``synchronous=FULL`` by default; ``put``
returns only after its transaction committed. Each Invocation has a number and a Seal
row's rowid is ``number << 32 | seq`` (see ``m002_keyed_seals``): the successor of Seal
*k* can only be written at key *k + 1*, so the primary key itself makes ``put_next``'s
check atomic across processes — two writers that expected the same Seal cannot both
append after it. The common Seal (no new value row, Invocation known) is one autocommit
INSERT that touches one table page; anything more is one ``BEGIN IMMEDIATE``
transaction.
"""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sanctum.codex._layout import PACK_MARK, Held, HeldCache, row_digest, write_step
from sanctum.codex._serial import EncodedSeal, encode_seal
from sanctum.codex._sqlite_schema import (
    CHAIN_SQL,
    INSERT_SEAL_SQL,
    NUMBER_SQL,
    RANGE_SQL,
    SEAL_COLUMNS,
    SEQ_BITS,
    SEQ_MASK,
    TIP_SQL,
    SqliteFile,
    delete_rows,
    key_span,
)
from sanctum.codex._stored import (
    RowWalk,
    Values,
    aether_column,
    decode_refs,
    referenced_rows,
    row_refs,
    thaw_each,
    thaw_seal,
    value_ids,
)
from sanctum.codex.base import InvocationSummary, LedgerCodex, Seal, concurrent_write
from sanctum.codex.claims import LEDGER_PREFIX, ledger_id
from sanctum.errors import SealError

__all__ = ["SqliteCodex"]

_CACHED_INVOCATIONS = 32
_T = TypeVar("_T")


@dataclass(slots=True)
class _Tip:
    """The last Seal this object wrote for an Invocation (a cache; keys never change).

    Replaced, never mutated (not frozen: a frozen dataclass is slower to build).
    """

    number: int
    seal_id: str
    seq: int


Helds = dict[str, Held]
"""What a writer holds of one Seal's values, per Conduit."""


class _Duplicate(Exception):
    """The history already holds the Seal's seal_id."""


class _Lost(Exception):
    """The optimistic check failed: the latest Seal is ``found``, not the expected one."""

    def __init__(self, found: str | None) -> None:
        super().__init__(found)
        self.found = found


class _NoCheck:
    """Marker: append without the optimistic check (plain ``put``)."""


_NO_CHECK = _NoCheck()


class SqliteCodex(SqliteFile, LedgerCodex):
    """Durable single-file ledger of Seals.

    SqliteCodex — a checkpoint store in one SQLite file. Persists Seals to a SQLite
    database at ``path``, creating the file and schema on first use. Recreating the
    object over the same path (in this process or another) sees the same history.
    Requires JSON-serializable Aether and metadata (see the module docstring).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        busy_timeout: float = 10.0,
    ) -> None:
        """Bind the ledger to a file; nothing is opened until first use.

        Args:
            path: The SQLite database file (created on first use; its folder must exist).
            synchronous: ``"FULL"`` (default: a committed Seal survives power loss) or
                ``"NORMAL"`` (survives a crashed process, not a crashed machine; faster).
            busy_timeout: Seconds to wait for another process's write lock.

        Raises:
            ValueError: If ``synchronous`` is not ``"FULL"`` or ``"NORMAL"``.
        """
        if synchronous.upper() not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be 'FULL' or 'NORMAL', got {synchronous!r}")
        self.path = Path(path)
        self._synchronous = synchronous.upper()
        self._busy_timeout = busy_timeout
        self._db: sqlite3.Connection | None = None
        self._ro: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._latest: OrderedDict[str, _Tip] = OrderedDict()
        self._helds = HeldCache()

    def __repr__(self) -> str:
        return f"SqliteCodex({str(self.path)!r})"

    # ------------------------------------------------------------------ reading

    def _rows(self, db: sqlite3.Connection, ids: Iterable[int]) -> list[tuple[Any, Any, Any]]:
        """The value rows behind ``ids`` (see :class:`RowWalk`)."""
        walk = RowWalk(ids)
        while (wanted := walk.wanted()) is not None:
            walk.took(db.execute(CHAIN_SQL, (json.dumps(wanted),)).fetchall())
        return walk.rows

    def _thaw_rows(
        self,
        db: sqlite3.Connection,
        invocation_id: str,
        rows: list[tuple[Any, ...]],
        remember: bool = False,
    ) -> builtins.list[Seal]:
        """Seals from Seal rows; ``remember``: hold their values to chain the next Seal."""
        refs = [decode_refs(invocation_id, str(row[0]), self._location, row[5]) for row in rows]
        ids: set[int] = set()
        for ref in refs:
            ids.update(value_ids(ref))
        once = row_refs(refs[0]) if len(refs) == 1 else None  # one Seal: rows used once
        values = Values(self._rows(db, ids), once)
        seals = []
        for row in rows:
            held: Helds | None = {} if remember else None
            seal = thaw_seal(invocation_id, self._location, row, values, held)
            if held is not None:
                self._helds.put(invocation_id, seal.seal_id, held)
            seals.append(seal)
        return seals

    def _in_snapshot(
        self,
        invocation_id: str,
        where: str,
        params: tuple[Any, ...],
        then: Callable[[sqlite3.Connection, builtins.list[tuple[Any, ...]]], _T],
    ) -> _T:
        """``then(db, seal rows)`` for the Invocation's Seal rows matching ``where``
        (after the key range), inside one read snapshot."""
        with self._lock:
            try:
                db = self._reader()
                db.execute("BEGIN")
                try:
                    row = db.execute(NUMBER_SQL, (invocation_id,)).fetchone()
                    rows = []
                    if row is not None:
                        rows = db.execute(
                            f"SELECT {SEAL_COLUMNS} FROM sanctum_seals WHERE {RANGE_SQL} {where}",
                            (*key_span(int(row[0])), *params),
                        ).fetchall()
                    return then(db, rows)
                finally:
                    db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._failed(exc, "read seals", invocation_id) from None

    def _read(
        self, invocation_id: str, where: str, params: tuple[Any, ...], remember: bool = False
    ) -> list[Seal]:
        """Seals of the Invocation matching ``where`` (after the key range), one snapshot."""

        def thaw(db: sqlite3.Connection, rows: builtins.list[tuple[Any, ...]]) -> list[Seal]:
            return self._thaw_rows(db, invocation_id, rows, remember) if rows else []

        return self._in_snapshot(invocation_id, where, params, thaw)

    async def get(self, invocation_id: str) -> Seal | None:
        """Return the Invocation's most recently written Seal, or None.

        Raises:
            SealError: If the file cannot be opened or the Seal row was damaged.
        """
        seals = self._read(invocation_id, "ORDER BY key DESC LIMIT 1", (), remember=True)
        return seals[0] if seals else None

    async def list(self, invocation_id: str) -> builtins.list[Seal]:
        """Return the Invocation's full Seal history, oldest first.

        Raises:
            SealError: If the file cannot be opened or a Seal row was damaged.
        """
        return [seal async for seal in self.history(invocation_id)]

    def _snapshot(
        self, invocation_id: str, values: bool
    ) -> tuple[builtins.list[tuple[Any, ...]], Values]:
        """The Invocation's Seal rows, oldest first, and (``values``) the value rows
        they point at — one read snapshot (a row whose refs are damaged is left for
        :func:`thaw_each` to report)."""

        def collect(
            db: sqlite3.Connection, rows: builtins.list[tuple[Any, ...]]
        ) -> tuple[builtins.list[tuple[Any, ...]], Values]:
            if not values:
                return [(*r[:5], "{}") for r in rows], Values(())
            return rows, Values(
                self._rows(db, referenced_rows(invocation_id, self._location, rows))
            )

        return self._in_snapshot(invocation_id, "ORDER BY key", (), collect)

    async def history(
        self, invocation_id: str, *, values: bool = True, on_damage: str = "raise"
    ) -> AsyncIterator[Seal]:
        """Yield the Invocation's Seals one at a time, oldest first (none when unknown).

        One read snapshot: the Seal rows and, with ``values``, the value rows the
        history points at — each stored once, so memory follows the file's share of
        the history, not the sum of every Seal's state. Each Seal's values are rebuilt
        when it is yielded. ``values=False`` reads and decodes no value (``aether`` is
        empty).

        Raises:
            SealError: If the file cannot be opened or a Seal row was damaged.
        """
        rows, table = self._snapshot(invocation_id, values)
        for seal in thaw_each(invocation_id, self._location, rows, table, on_damage):
            yield seal

    async def latest_seal_id(self, invocation_id: str) -> str | None:
        """Return the seal_id of the Invocation's latest Seal, or None; reads no value.

        Raises:
            SealError: If the file cannot be opened or read.
        """
        with self._lock:
            try:
                return self._tip(self._reader(), invocation_id)[2]
            except sqlite3.Error as exc:
                raise self._failed(exc, "read seals", invocation_id) from None

    async def get_seal(self, invocation_id: str, seal_id: str) -> Seal | None:
        """Return the Seal ``seal_id`` of the Invocation, or None when unknown.

        Raises:
            SealError: If the file cannot be opened or the Seal row was damaged.
        """
        seals = self._read(
            invocation_id, "AND seal_id = ? ORDER BY key LIMIT 1", (seal_id,), remember=True
        )
        return seals[0] if seals else None

    async def invocations(self, limit: int = 50) -> builtins.list[InvocationSummary]:
        """Return the most recently written Invocations, newest first (at most ``limit``).

        Raises:
            SealError: If the file cannot be opened or read.
        """
        with self._lock:
            try:
                rows = (
                    self._reader()
                    .execute(
                        f"SELECT i.invocation_id, s.key & {SEQ_MASK}, s.superstep, s.frontier, "
                        "s.timestamp, s.metadata, s.seal_id FROM sanctum_invocations AS i "
                        "JOIN sanctum_seals AS s ON s.key = (SELECT max(key) FROM sanctum_seals "
                        f"WHERE key BETWEEN i.number << {SEQ_BITS} "
                        f"AND (i.number << {SEQ_BITS}) | {SEQ_MASK}) "
                        "WHERE substr(i.invocation_id, 1, ?) <> ? "  # not a claim ledger
                        "ORDER BY s.written DESC LIMIT ?",
                        (len(LEDGER_PREFIX), LEDGER_PREFIX, max(limit, 0)),
                    )
                    .fetchall()
                )
            except sqlite3.Error as exc:
                raise self._failed(exc, "list invocations", None) from None
        out: builtins.list[InvocationSummary] = []
        for invocation_id, count, superstep, frontier, timestamp, metadata, seal_id in rows:
            seal = thaw_seal(
                invocation_id,
                self._location,
                (seal_id, superstep, timestamp, frontier, metadata, "{}"),
                Values(()),
            )
            out.append(
                InvocationSummary(
                    invocation_id=invocation_id,
                    seals=count,
                    superstep=seal.superstep,
                    frontier=seal.frontier,
                    updated=seal.timestamp,
                    metadata=seal.metadata,
                )
            )
        return out

    # ------------------------------------------------------------------ writing

    def _held(self, invocation_id: str, parent: str | None) -> Helds:
        """What the Seal ``parent`` holds, remembered or loaded (a hint: {} on trouble)."""
        if parent is None:
            return {}
        held = self._helds.get(invocation_id, parent)
        if held is not None:
            return held
        try:
            self._read(invocation_id, "AND seal_id = ? LIMIT 1", (parent,), remember=True)
        except SealError:
            return {}  # only a hint: the put itself reports real trouble
        return self._helds.get(invocation_id, parent) or {}

    def _store_value(
        self, db: sqlite3.Connection, digest: bytes, prev: int | None, body: str
    ) -> int:
        stored: str | bytes = body
        if body.startswith(PACK_MARK):
            stored = zlib.compress(body.encode("ascii"), 6)  # inflated by _stored.Values
        row = db.execute(
            "INSERT INTO sanctum_values (digest, prev, body) VALUES (?, ?, ?) "
            "ON CONFLICT (digest) DO NOTHING RETURNING id",
            (digest, prev, stored),
        ).fetchone()
        if row is None:
            row = db.execute("SELECT id FROM sanctum_values WHERE digest = ?", (digest,)).fetchone()
        return int(row[0])

    def _tip(
        self, db: sqlite3.Connection, invocation_id: str
    ) -> tuple[int | None, int, str | None]:
        """``(number or None, seq of the latest Seal or 0, its seal_id or None)``."""
        row = db.execute(NUMBER_SQL, (invocation_id,)).fetchone()
        if row is None:
            return None, 0, None
        number = int(row[0])
        tip = db.execute(TIP_SQL, key_span(number)).fetchone()
        if tip is None:
            return number, 0, None
        return number, int(tip[0]) & SEQ_MASK, str(tip[1])

    def _number(self, db: sqlite3.Connection, invocation_id: str) -> int:
        """The Invocation's number, registering it (inside the caller's transaction)."""
        row = db.execute(NUMBER_SQL, (invocation_id,)).fetchone()
        if row is None:
            row = db.execute(
                "INSERT INTO sanctum_invocations (invocation_id, created) VALUES (?, ?) "
                "RETURNING number",
                (invocation_id, time.time_ns()),
            ).fetchone()
        return int(row[0])

    def _row(self, key: int, seal: Seal, encoded: EncodedSeal) -> tuple[Any, ...]:
        if key & SEQ_MASK == 0:
            raise SealError(
                f"seal {seal.seal_id!r} cannot be written to {self._location}: the history "
                f"already holds {SEQ_MASK} seals; start a new invocation",
                seal_id=seal.seal_id,
                location=self._location,
            )
        return (
            key,
            seal.seal_id,
            seal.superstep,
            float(seal.timestamp),
            encoded.frontier,
            encoded.metadata,
            aether_column(encoded.values),
            time.time_ns(),
        )

    def _write_values(self, db: sqlite3.Connection, encoded: EncodedSeal) -> None:
        """Insert the value rows the Seal needs (inside the caller's transaction)."""

        def put_row(body: str, prev: Any) -> int:
            return self._store_value(db, row_digest(body, prev), prev, body)

        for step in encoded.values.values():
            write_step(step, put_row)

    def _append_next(
        self,
        db: sqlite3.Connection,
        invocation_id: str,
        seal: Seal,
        encoded: EncodedSeal,
        expected: str | None,
        cached: _Tip | None,
    ) -> tuple[int, int]:
        """Write the Seal as the successor of ``expected``; ``(number, seq)``.

        The successor of Seal *k* is key *k + 1*: the table's primary key makes the
        check atomic across processes (a second writer that also expected *k* fails
        on the key). A Seal that adds no value row to a known Invocation (the common
        case) is a single autocommit INSERT; otherwise one ``BEGIN IMMEDIATE``
        transaction.

        Raises:
            _Lost: If the latest Seal is not ``expected`` (nothing written).
        """
        if seal.seal_id == expected:
            raise _Duplicate
        number: int | None
        if cached is not None and cached.seal_id == expected:
            number, after = cached.number, cached.seq
        else:
            number, after, latest = self._tip(db, invocation_id)
            if latest != expected:
                raise _Lost(latest)
        fresh = any(step.new_rows() for step in encoded.values.values())
        try:
            if number is not None and not fresh:
                key = (number << SEQ_BITS) + after + 1
                db.execute(INSERT_SEAL_SQL, self._row(key, seal, encoded))
                return number, after + 1
            db.execute("BEGIN IMMEDIATE")
            try:
                if number is None:
                    number = self._number(db, invocation_id)
                self._write_values(db, encoded)
                key = (number << SEQ_BITS) + after + 1
                db.execute(INSERT_SEAL_SQL, self._row(key, seal, encoded))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.IntegrityError:
            raise _Lost(self._tip(db, invocation_id)[2]) from None
        return number, after + 1

    def _append_any(
        self, db: sqlite3.Connection, invocation_id: str, seal: Seal, encoded: EncodedSeal
    ) -> tuple[int, int]:
        """Write the Seal after whatever is latest (plain ``put``); one transaction."""
        db.execute("BEGIN IMMEDIATE")
        try:
            number = self._number(db, invocation_id)
            low, high = key_span(number)
            if db.execute(
                f"SELECT 1 FROM sanctum_seals WHERE {RANGE_SQL} AND seal_id = ? LIMIT 1",
                (low, high, seal.seal_id),
            ).fetchone():
                raise _Duplicate
            tip = db.execute(TIP_SQL, (low, high)).fetchone()
            seq = (int(tip[0]) & SEQ_MASK if tip is not None else 0) + 1
            self._write_values(db, encoded)
            db.execute(INSERT_SEAL_SQL, self._row(low + seq, seal, encoded))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return number, seq

    def _write(self, invocation_id: str, seal: Seal, expected: str | _NoCheck | None) -> None:
        with self._lock:
            cached = self._latest.get(invocation_id)
            encoded = encode_seal(invocation_id, seal, self._held(invocation_id, seal.parent))
            try:
                db = self._conn()
                if isinstance(expected, _NoCheck):
                    number, seq = self._append_any(db, invocation_id, seal, encoded)
                else:
                    number, seq = self._append_next(
                        db, invocation_id, seal, encoded, expected, cached
                    )
            except _Lost as lost:
                assert not isinstance(expected, _NoCheck)
                raise concurrent_write(invocation_id, expected, lost.found) from None
            except _Duplicate:
                raise SealError(
                    f"invocation {invocation_id!r} already holds seal {seal.seal_id!r} in "
                    f"{self._location}; histories are append-only — write a new Seal with a "
                    "fresh seal_id instead",
                    invocation_id=invocation_id,
                    seal_id=seal.seal_id,
                    location=self._location,
                ) from None
            except sqlite3.Error as exc:
                raise self._failed(exc, "write a seal", invocation_id) from None
            self._helds.put(
                invocation_id,
                seal.seal_id,
                {name: step.held for name, step in encoded.values.items()},
            )
            latest = self._latest
            latest[invocation_id] = _Tip(number, seal.seal_id, seq)
            latest.move_to_end(invocation_id)
            if len(latest) > _CACHED_INVOCATIONS:
                latest.popitem(last=False)

    async def put(self, invocation_id: str, seal: Seal) -> None:
        """Append a Seal to the Invocation's history; committed before this returns.

        Raises:
            SealError: If the Seal's Aether, frontier, or metadata cannot be serialized
                to JSON (naming the Sigil, key path and type), the history already holds
                its seal_id, or the file cannot be written. Nothing is written then.
        """
        self._write(invocation_id, seal, _NO_CHECK)

    async def put_next(
        self, invocation_id: str, seal: Seal, *, expected_latest: str | None
    ) -> None:
        """Append a Seal only if the history's latest Seal is still ``expected_latest``.

        The successor of the expected Seal takes the next key of the Invocation; the
        table's primary key refuses a second writer that expected the same Seal, so the
        check holds across processes.

        Raises:
            SealError: If another writer appended first, or as for :meth:`put`;
                nothing is written.
        """
        self._write(invocation_id, seal, expected_latest)

    async def delete(self, invocation_id: str) -> bool:
        """Remove the Invocation's Seals, index row and claim ledger in one transaction.

        Value rows stay (shared between Invocations; see :meth:`Codex.delete`).

        Raises:
            SealError: If the file cannot be written.
        """
        with self._lock:
            try:
                found = delete_rows(self._conn(), (invocation_id, ledger_id(invocation_id)))
            except sqlite3.Error as exc:
                raise self._failed(exc, "delete an invocation", invocation_id) from None
            self._latest.pop(invocation_id, None)
            self._latest.pop(ledger_id(invocation_id), None)
            self._helds.clear()
            return found

    async def aclose(self) -> None:
        """Close the file; a later call reopens it. Idempotent."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._ro is not None:
                self._ro.close()
                self._ro = None
            self._latest.clear()
            self._helds.clear()
