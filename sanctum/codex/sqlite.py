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
returns only after its transaction committed. ``put_next`` checks and appends inside
one ``BEGIN IMMEDIATE`` transaction, so two processes resuming one Invocation can never
both append after the same Seal.
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
_LATEST_ID = (
    "(SELECT seal_id FROM sanctum_seals WHERE invocation_id = :inv ORDER BY seq DESC LIMIT 1)"
)
_INSERT_SEAL = (
    f"INSERT INTO sanctum_seals (invocation_id, seq, {_SEAL_COLUMNS}, written) "
    "SELECT :inv, coalesce((SELECT max(seq) FROM sanctum_seals WHERE invocation_id = :inv), 0)"
    " + 1, :sid, :superstep, :ts, :frontier, :metadata, :aether, :written"
)
# The check and the insert are one statement: SQLite takes the write lock before it
# reads, so no other process can slip a Seal in between.
_INSERT_SEAL_CHECKED = f"{_INSERT_SEAL} WHERE {_LATEST_ID} IS :expected"
_INSERT_SEAL_UNIQUE = (
    f"{_INSERT_SEAL} WHERE NOT EXISTS (SELECT 1 FROM sanctum_seals "
    "WHERE invocation_id = :inv AND seal_id = :sid)"
)


class _Duplicate(Exception):
    """The history already holds the Seal's seal_id."""


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
        self._latest: OrderedDict[str, tuple[str, Bases]] = OrderedDict()

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
        with self._lock:
            try:
                db = self._conn()
                db.execute("BEGIN")
                try:
                    rows = db.execute(
                        f"SELECT {_SEAL_COLUMNS} FROM sanctum_seals {where}", params
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
        seals = self._read(
            invocation_id, "WHERE invocation_id = ? ORDER BY seq DESC LIMIT 1", (invocation_id,)
        )
        return seals[0] if seals else None

    async def list(self, invocation_id: str) -> builtins.list[Seal]:
        """Return the Invocation's full Seal history, oldest first.

        Raises:
            SealError: If the file cannot be opened or a Seal row was damaged.
        """
        return self._read(invocation_id, "WHERE invocation_id = ? ORDER BY seq", (invocation_id,))

    async def get_seal(self, invocation_id: str, seal_id: str) -> Seal | None:
        """Return the Seal ``seal_id`` of the Invocation, or None when unknown.

        Raises:
            SealError: If the file cannot be opened or the Seal row was damaged.
        """
        seals = self._read(
            invocation_id, "WHERE invocation_id = ? AND seal_id = ?", (invocation_id, seal_id)
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
                    self._conn()
                    .execute(
                        "SELECT i.invocation_id, s.seq, s.superstep, s.frontier, s.timestamp, "
                        "s.metadata, s.seal_id FROM sanctum_invocations AS i "
                        "JOIN sanctum_seals AS s ON s.invocation_id = i.invocation_id AND s.seq = "
                        "(SELECT max(seq) FROM sanctum_seals "
                        "WHERE invocation_id = i.invocation_id) "
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

    def _bases(self, invocation_id: str, seal: Seal) -> Bases:
        """Texts and value ids of the Seal this one probably continues from."""
        cached = self._latest.get(invocation_id)
        parent = seal.parent
        if cached is not None and (parent is None or cached[0] == parent):
            return cached[1]
        if parent is None:
            return {}
        try:
            db = self._conn()
            row = db.execute(
                "SELECT aether FROM sanctum_seals WHERE invocation_id = ? AND seal_id = ?",
                (invocation_id, parent),
            ).fetchone()
            if row is None:
                return cached[1] if cached is not None else {}
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

    def _insert_seal(
        self,
        db: sqlite3.Connection,
        invocation_id: str,
        seal: Seal,
        encoded: EncodedSeal,
        aether: str,
        expected: str | _NoCheck | None,
    ) -> bool:
        """Insert the Seal row; with ``expected``, only if the latest Seal still is it.

        The check and the insert are one statement, so they share one write lock.
        Returns False when the check failed (nothing inserted).
        """
        params: dict[str, Any] = {
            "inv": invocation_id,
            "sid": seal.seal_id,
            "superstep": seal.superstep,
            "ts": float(seal.timestamp),
            "frontier": encoded.frontier,
            "metadata": encoded.metadata,
            "aether": aether,
            "written": time.time_ns(),
        }
        if isinstance(expected, _NoCheck):
            if db.execute(_INSERT_SEAL_UNIQUE, params).rowcount != 1:
                raise _Duplicate
            return True
        if seal.seal_id == expected:
            raise _Duplicate
        cursor = db.execute(_INSERT_SEAL_CHECKED, {**params, "expected": expected})
        return cursor.rowcount == 1

    def _append(
        self,
        db: sqlite3.Connection,
        invocation_id: str,
        seal: Seal,
        encoded: EncodedSeal,
        plan: builtins.list[Placement],
        expected: str | _NoCheck | None,
    ) -> dict[str, int] | None:
        """Write value rows and the Seal row; None when the optimistic check failed.

        A Seal that adds no value row (the common case: small or unchanged values) is a
        single autocommit statement; otherwise one ``BEGIN IMMEDIATE`` transaction.
        """
        ids = {p.conduit: p.value_id for p in plan if p.value_id is not None}
        if all(p.digest is None for p in plan):
            if self._insert_seal(
                db, invocation_id, seal, encoded, aether_column(plan, ids), expected
            ):
                return ids
            return None
        db.execute("BEGIN IMMEDIATE")
        try:
            for place in plan:
                if place.digest is not None:
                    ids[place.conduit] = self._store_value(db, place.digest, place.prev, place.body)
            if not self._insert_seal(
                db, invocation_id, seal, encoded, aether_column(plan, ids), expected
            ):
                db.execute("ROLLBACK")
                return None
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return ids

    def _write(self, invocation_id: str, seal: Seal, expected: str | _NoCheck | None) -> None:
        with self._lock:
            bases = self._bases(invocation_id, seal)
            encoded = encode_seal(invocation_id, seal, {k: t for k, (t, _) in bases.items()})
            plan = plan_values(encoded, bases)
            try:
                db = self._conn()
                ids = self._append(db, invocation_id, seal, encoded, plan, expected)
                if ids is None:
                    row = db.execute(f"SELECT {_LATEST_ID}", {"inv": invocation_id}).fetchone()
                    latest = row[0] if row is not None else None
                    raise concurrent_write(invocation_id, expected, latest)  # type: ignore[arg-type]
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
            written = {p.conduit: (p.text, ids.get(p.conduit)) for p in plan}
            self._latest[invocation_id] = (seal.seal_id, written)
            self._latest.move_to_end(invocation_id)
            while len(self._latest) > _CACHED_INVOCATIONS:
                self._latest.popitem(last=False)

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

        The check and the append share one ``BEGIN IMMEDIATE`` transaction, so the
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
