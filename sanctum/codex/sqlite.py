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
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sanctum.codex._serial import EncodedSeal, encode_seal
from sanctum.codex._sqlite_schema import open_codex_file
from sanctum.codex._stored import (
    Bases,
    Placement,
    aether_column,
    assemble_texts,
    bases_from_refs,
    decode_refs,
    plan_values,
    thaw_seal,
    value_ids,
)
from sanctum.codex.base import Codex, InvocationSummary, Seal, concurrent_write
from sanctum.errors import SealError

__all__ = ["SqliteCodex"]

_SEAL_COLUMNS = "seal_id, superstep, timestamp, frontier, metadata, aether"
_CHAIN_SQL = """
WITH RECURSIVE chain(id) AS (
    SELECT value FROM json_each(?)
    UNION
    SELECT v.prev FROM sanctum_values AS v JOIN chain AS c ON v.id = c.id
    WHERE v.prev IS NOT NULL
)
SELECT v.id, v.prev, v.body FROM sanctum_values AS v JOIN chain AS c ON v.id = c.id
"""
_CACHED_INVOCATIONS = 32
_SEQ_BITS = 32
_SEQ_MASK = (1 << _SEQ_BITS) - 1
"""A Seal's key is ``number << 32 | seq`` (see ``m002_keyed_seals``)."""
_NUMBER = "SELECT number FROM sanctum_invocations WHERE invocation_id = ?"
_RANGE = "key BETWEEN ? AND ?"
_TIP = f"SELECT key, seal_id FROM sanctum_seals WHERE {_RANGE} ORDER BY key DESC LIMIT 1"
_INSERT_SEAL = (
    f"INSERT INTO sanctum_seals (key, {_SEAL_COLUMNS}, written) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _span(number: int) -> tuple[int, int]:
    """The first and last key an Invocation's Seals can hold."""
    low = number << _SEQ_BITS
    return low, low | _SEQ_MASK


@dataclass(slots=True)
class _Tip:
    """The last Seal this object wrote for an Invocation (a cache; keys never change).

    Replaced, never mutated (not frozen: a frozen dataclass is slower to build).
    """

    number: int
    seal_id: str
    seq: int
    bases: Bases
    texts: dict[str, str]


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


class SqliteCodex(Codex):
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
        self._lock = threading.RLock()
        self._latest: OrderedDict[str, _Tip] = OrderedDict()

    def __repr__(self) -> str:
        return f"SqliteCodex({str(self.path)!r})"

    @property
    def _location(self) -> str:
        return str(self.path)

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = open_codex_file(
                self._location, busy_timeout=self._busy_timeout, synchronous=self._synchronous
            )
        return self._db

    def _failed(self, exc: sqlite3.Error, doing: str, invocation_id: str | None) -> SealError:
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            fix = "Another process holds the write lock for too long; retry, or raise busy_timeout."
        elif isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError):
            fix = "The file may be damaged: restore it from a backup, or point at another file."
        else:
            fix = "Check the file, its folder and the disk."
        return SealError(
            f"could not {doing} in the codex {self._location}: {exc}. {fix}",
            invocation_id=invocation_id,
            location=self._location,
        )

    # ------------------------------------------------------------------ reading

    def _texts(self, db: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        rows = db.execute(_CHAIN_SQL, (json.dumps(wanted),)).fetchall()
        return assemble_texts(rows)

    def _thaw_rows(self, invocation_id: str, rows: list[tuple[Any, ...]]) -> builtins.list[Seal]:
        db = self._conn()
        ids: set[int] = set()
        for row in rows:
            ids.update(value_ids(decode_refs(invocation_id, str(row[0]), self._location, row[5])))
        texts = self._texts(db, ids)
        return [thaw_seal(invocation_id, self._location, row, texts) for row in rows]

    def _read(self, invocation_id: str, where: str, params: tuple[Any, ...]) -> list[Seal]:
        """Seals of the Invocation matching ``where`` (after the key range), one snapshot."""
        with self._lock:
            try:
                db = self._conn()
                db.execute("BEGIN")
                try:
                    row = db.execute(_NUMBER, (invocation_id,)).fetchone()
                    if row is None:
                        return []
                    rows = db.execute(
                        f"SELECT {_SEAL_COLUMNS} FROM sanctum_seals WHERE {_RANGE} {where}",
                        (*_span(int(row[0])), *params),
                    ).fetchall()
                    return self._thaw_rows(invocation_id, rows)
                finally:
                    db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._failed(exc, "read seals", invocation_id) from None

    async def get(self, invocation_id: str) -> Seal | None:
        """Return the Invocation's most recently written Seal, or None.

        Raises:
            SealError: If the file cannot be opened or the Seal row was damaged.
        """
        seals = self._read(invocation_id, "ORDER BY key DESC LIMIT 1", ())
        return seals[0] if seals else None

    async def list(self, invocation_id: str) -> builtins.list[Seal]:
        """Return the Invocation's full Seal history, oldest first.

        Raises:
            SealError: If the file cannot be opened or a Seal row was damaged.
        """
        return self._read(invocation_id, "ORDER BY key", ())

    async def get_seal(self, invocation_id: str, seal_id: str) -> Seal | None:
        """Return the Seal ``seal_id`` of the Invocation, or None when unknown.

        Raises:
            SealError: If the file cannot be opened or the Seal row was damaged.
        """
        seals = self._read(invocation_id, "AND seal_id = ? ORDER BY key LIMIT 1", (seal_id,))
        return seals[0] if seals else None

    async def invocations(self, limit: int = 50) -> builtins.list[InvocationSummary]:
        """Return the most recently written Invocations, newest first (at most ``limit``).

        Raises:
            SealError: If the file cannot be opened or read.
        """
        with self._lock:
            try:
                rows = (
                    self._conn()
                    .execute(
                        f"SELECT i.invocation_id, s.key & {_SEQ_MASK}, s.superstep, s.frontier, "
                        "s.timestamp, s.metadata, s.seal_id FROM sanctum_invocations AS i "
                        "JOIN sanctum_seals AS s ON s.key = (SELECT max(key) FROM sanctum_seals "
                        f"WHERE key BETWEEN i.number << {_SEQ_BITS} "
                        f"AND (i.number << {_SEQ_BITS}) | {_SEQ_MASK}) "
                        "ORDER BY s.written DESC LIMIT ?",
                        (max(limit, 0),),
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
                {},
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

    def _bases(self, invocation_id: str, parent: str, cached: _Tip | None) -> Bases:
        """Texts and value ids of the Seal ``parent`` (when this object did not write it)."""
        try:
            db = self._conn()
            number = db.execute(_NUMBER, (invocation_id,)).fetchone()
            if number is None:
                return {}
            row = db.execute(
                f"SELECT aether FROM sanctum_seals WHERE {_RANGE} AND seal_id = ? LIMIT 1",
                (*_span(int(number[0])), parent),
            ).fetchone()
            if row is None:
                return cached.bases if cached is not None else {}
            refs = decode_refs(invocation_id, parent, self._location, row[0])
            return bases_from_refs(refs, self._texts(db, value_ids(refs)))
        except (sqlite3.Error, SealError):
            return {}  # only a hint: the put itself reports real trouble

    def _store_value(
        self, db: sqlite3.Connection, digest: bytes, prev: int | None, body: str
    ) -> int:
        row = db.execute(
            "INSERT INTO sanctum_values (digest, prev, body) VALUES (?, ?, ?) "
            "ON CONFLICT (digest) DO NOTHING RETURNING id",
            (digest, prev, body),
        ).fetchone()
        if row is None:
            row = db.execute("SELECT id FROM sanctum_values WHERE digest = ?", (digest,)).fetchone()
        return int(row[0])

    def _tip(
        self, db: sqlite3.Connection, invocation_id: str
    ) -> tuple[int | None, int, str | None]:
        """``(number or None, seq of the latest Seal or 0, its seal_id or None)``."""
        row = db.execute(_NUMBER, (invocation_id,)).fetchone()
        if row is None:
            return None, 0, None
        number = int(row[0])
        tip = db.execute(_TIP, _span(number)).fetchone()
        if tip is None:
            return number, 0, None
        return number, int(tip[0]) & _SEQ_MASK, str(tip[1])

    def _number(self, db: sqlite3.Connection, invocation_id: str) -> int:
        """The Invocation's number, registering it (inside the caller's transaction)."""
        row = db.execute(_NUMBER, (invocation_id,)).fetchone()
        if row is None:
            row = db.execute(
                "INSERT INTO sanctum_invocations (invocation_id, created) VALUES (?, ?) "
                "RETURNING number",
                (invocation_id, time.time_ns()),
            ).fetchone()
        return int(row[0])

    def _row(
        self,
        key: int,
        seal: Seal,
        encoded: EncodedSeal,
        plan: builtins.list[Placement],
        ids: dict[str, int],
    ) -> tuple[Any, ...]:
        if key & _SEQ_MASK == 0:
            raise SealError(
                f"seal {seal.seal_id!r} cannot be written to {self._location}: the history "
                f"already holds {_SEQ_MASK} seals; start a new invocation",
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
            aether_column(plan, ids),
            time.time_ns(),
        )

    def _append_next(
        self,
        db: sqlite3.Connection,
        invocation_id: str,
        seal: Seal,
        encoded: EncodedSeal,
        plan: builtins.list[Placement],
        expected: str | None,
        cached: _Tip | None,
    ) -> tuple[int, int, dict[str, int]]:
        """Write the Seal as the successor of ``expected``; ``(number, seq, value ids)``.

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
        ids: dict[str, int] = {}
        fresh = False
        for place in plan:
            if place.value_id is not None:
                ids[place.conduit] = place.value_id
            elif place.digest is not None:
                fresh = True
        try:
            if number is not None and not fresh:
                key = (number << _SEQ_BITS) + after + 1
                db.execute(_INSERT_SEAL, self._row(key, seal, encoded, plan, ids))
                return number, after + 1, ids
            db.execute("BEGIN IMMEDIATE")
            try:
                if number is None:
                    number = self._number(db, invocation_id)
                for place in plan:
                    if place.digest is not None:
                        ids[place.conduit] = self._store_value(
                            db, place.digest, place.prev, place.body
                        )
                key = (number << _SEQ_BITS) + after + 1
                db.execute(_INSERT_SEAL, self._row(key, seal, encoded, plan, ids))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.IntegrityError:
            raise _Lost(self._tip(db, invocation_id)[2]) from None
        return number, after + 1, ids

    def _append_any(
        self,
        db: sqlite3.Connection,
        invocation_id: str,
        seal: Seal,
        encoded: EncodedSeal,
        plan: builtins.list[Placement],
    ) -> tuple[int, int, dict[str, int]]:
        """Write the Seal after whatever is latest (plain ``put``); one transaction."""
        ids = {p.conduit: p.value_id for p in plan if p.value_id is not None}
        db.execute("BEGIN IMMEDIATE")
        try:
            number = self._number(db, invocation_id)
            low, high = _span(number)
            if db.execute(
                f"SELECT 1 FROM sanctum_seals WHERE {_RANGE} AND seal_id = ? LIMIT 1",
                (low, high, seal.seal_id),
            ).fetchone():
                raise _Duplicate
            tip = db.execute(_TIP, (low, high)).fetchone()
            seq = (int(tip[0]) & _SEQ_MASK if tip is not None else 0) + 1
            for place in plan:
                if place.digest is not None:
                    ids[place.conduit] = self._store_value(db, place.digest, place.prev, place.body)
            db.execute(_INSERT_SEAL, self._row(low + seq, seal, encoded, plan, ids))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return number, seq, ids

    def _write(self, invocation_id: str, seal: Seal, expected: str | _NoCheck | None) -> None:
        with self._lock:
            cached = self._latest.get(invocation_id)
            parent = seal.parent
            if cached is not None and (parent is None or cached.seal_id == parent):
                bases, texts = cached.bases, cached.texts
            else:
                bases = self._bases(invocation_id, parent, cached) if parent is not None else {}
                texts = {name: text for name, (text, _) in bases.items()}
            encoded = encode_seal(invocation_id, seal, texts)
            plan = plan_values(encoded, bases)
            try:
                db = self._conn()
                if isinstance(expected, _NoCheck):
                    number, seq, ids = self._append_any(db, invocation_id, seal, encoded, plan)
                else:
                    number, seq, ids = self._append_next(
                        db, invocation_id, seal, encoded, plan, expected, cached
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
            written: Bases = {}
            texts = {}
            for place in plan:
                written[place.conduit] = (place.text, ids.get(place.conduit))
                texts[place.conduit] = place.text
            latest = self._latest
            latest[invocation_id] = _Tip(number, seal.seal_id, seq, written, texts)
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

    async def aclose(self) -> None:
        """Close the file; a later call reopens it. Idempotent."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._latest.clear()
