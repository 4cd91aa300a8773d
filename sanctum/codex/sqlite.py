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
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sanctum.codex._serial import EncodedSeal, chain_digest, encode_seal, root_digest
from sanctum.codex._sqlite_schema import open_codex_file
from sanctum.codex._stored import assemble_texts, decode_refs, thaw_seal
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
_Bases = dict[str, tuple[str, int]]
_CACHED_INVOCATIONS = 32


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
        self._latest: OrderedDict[str, tuple[str, _Bases]] = OrderedDict()

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
        elif isinstance(exc, sqlite3.DatabaseError) and not isinstance(
            exc, sqlite3.IntegrityError
        ):
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
            ids.update(decode_refs(invocation_id, str(row[0]), self._location, row[5]).values())
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
                        "SELECT i.invocation_id, i.seals, s.superstep, s.frontier, s.timestamp, "
                        "s.metadata, s.seal_id FROM sanctum_invocations AS i "
                        "JOIN sanctum_seals AS s ON s.seq = i.latest_seq "
                        "ORDER BY i.latest_seq DESC LIMIT ?",
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

    def _bases(self, invocation_id: str, seal: Seal) -> _Bases:
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
            texts = self._texts(db, refs.values())
        except (sqlite3.Error, SealError):
            return {}  # only a hint: the put itself reports real trouble
        return {name: (texts[i], i) for name, i in refs.items() if i in texts}

    def _store_value(self, db: sqlite3.Connection, digest: bytes, prev: int | None, body: str) -> int:
        row = db.execute(
            "INSERT INTO sanctum_values (digest, prev, body) VALUES (?, ?, ?) "
            "ON CONFLICT (digest) DO NOTHING RETURNING id",
            (digest, prev, body),
        ).fetchone()
        if row is None:
            row = db.execute("SELECT id FROM sanctum_values WHERE digest = ?", (digest,)).fetchone()
        return int(row[0])

    def _append(
        self,
        db: sqlite3.Connection,
        invocation_id: str,
        seal: Seal,
        encoded: EncodedSeal,
        bases: _Bases,
    ) -> _Bases:
        refs: dict[str, int] = {}
        written: _Bases = {}
        for name, value in encoded.values.items():
            base = bases.get(name)
            if base is not None and base[0] == value.text:
                value_id = base[1]
            elif base is not None and value.base is not None:
                digest = chain_digest(base[1].to_bytes(8, "big"), value.suffix)
                value_id = self._store_value(db, digest, base[1], value.suffix)
            else:
                value_id = self._store_value(db, root_digest(value.text), None, value.text)
            refs[name] = value_id
            written[name] = (value.text, value_id)
        seq = db.execute(
            f"INSERT INTO sanctum_seals (invocation_id, {_SEAL_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (
                invocation_id,
                seal.seal_id,
                seal.superstep,
                float(seal.timestamp),
                encoded.frontier,
                encoded.metadata,
                json.dumps(refs, separators=(",", ":")),
            ),
        ).fetchone()[0]
        db.execute(
            "INSERT INTO sanctum_invocations (invocation_id, latest_seq, latest_seal_id, seals) "
            "VALUES (?, ?, ?, 1) ON CONFLICT (invocation_id) DO UPDATE SET "
            "latest_seq = excluded.latest_seq, latest_seal_id = excluded.latest_seal_id, "
            "seals = seals + 1",
            (invocation_id, seq, seal.seal_id),
        )
        return written

    def _write(self, invocation_id: str, seal: Seal, check: bool, expected: str | None) -> None:
        with self._lock:
            bases = self._bases(invocation_id, seal)
            encoded = encode_seal(invocation_id, seal, {k: t for k, (t, _) in bases.items()})
            try:
                db = self._conn()
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._failed(exc, "begin a write", invocation_id) from None
            try:
                if check:
                    row = db.execute(
                        "SELECT latest_seal_id FROM sanctum_invocations WHERE invocation_id = ?",
                        (invocation_id,),
                    ).fetchone()
                    latest = row[0] if row is not None else None
                    if latest != expected:
                        raise concurrent_write(invocation_id, expected, latest)
                written = self._append(db, invocation_id, seal, encoded, bases)
                db.execute("COMMIT")
            except sqlite3.IntegrityError:
                db.execute("ROLLBACK")
                raise SealError(
                    f"invocation {invocation_id!r} already holds seal {seal.seal_id!r} in "
                    f"{self._location}; histories are append-only — write a new Seal with a "
                    "fresh seal_id instead",
                    invocation_id=invocation_id,
                    seal_id=seal.seal_id,
                    location=self._location,
                ) from None
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise self._failed(exc, "write a seal", invocation_id) from None
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
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
        self._write(invocation_id, seal, False, None)

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
        self._write(invocation_id, seal, True, expected_latest)

    async def aclose(self) -> None:
        """Close the file; a later call reopens it. Idempotent."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._latest.clear()

