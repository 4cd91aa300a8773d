"""Opening a SqliteCodex file: pragmas, foreign-file checks, migrations, statements.

Migrations are plain functions applied in order, each recorded by name in
``sanctum_migrations`` in the same transaction that applies it, so a file always says
exactly which schema steps it went through. A file that records a migration this
version does not know was written by a newer sanctum and is refused rather than
guessed at; a SQLite file holding other tables and no ``sanctum_migrations`` belongs
to someone else and is never written to, nor is a file that fails ``PRAGMA
quick_check`` when opened for writing.

Readers open the file apart (:func:`open_read_only`: a ``mode=ro`` URI, so they take no
write lock and work on read-only media), and every SQLite failure is told apart by
:func:`sqlite_failure`: a full disk, a read-only file, folder or filesystem, a write
lock held by another process (naming it when it can be found), a file that is not a
SQLite database, and a damaged one.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from sanctum.errors import CodexUnavailableError, SealError

__all__ = [
    "CHAIN_SQL",
    "INSERT_SEAL_SQL",
    "MIGRATIONS",
    "NUMBER_SQL",
    "RANGE_SQL",
    "SEAL_COLUMNS",
    "SEQ_BITS",
    "SEQ_MASK",
    "TIP_SQL",
    "SqliteFile",
    "delete_rows",
    "holders",
    "key_span",
    "open_codex_file",
    "open_read_only",
    "sqlite_failure",
]

# The statements and the key layout the codex reads and writes with.
SEAL_COLUMNS = "seal_id, superstep, timestamp, frontier, metadata, aether"
CHAIN_SQL = """
WITH RECURSIVE chain(id) AS (
    SELECT value FROM json_each(?)
    UNION
    SELECT v.prev FROM sanctum_values AS v JOIN chain AS c ON v.id = c.id
    WHERE v.prev IS NOT NULL
)
SELECT v.id, v.prev, v.body FROM sanctum_values AS v JOIN chain AS c ON v.id = c.id
"""
SEQ_BITS = 32
SEQ_MASK = (1 << SEQ_BITS) - 1
"""A Seal's key is ``number << 32 | seq`` (see ``m002_keyed_seals``)."""
NUMBER_SQL = "SELECT number FROM sanctum_invocations WHERE invocation_id = ?"
RANGE_SQL = "key BETWEEN ? AND ?"
TIP_SQL = f"SELECT key, seal_id FROM sanctum_seals WHERE {RANGE_SQL} ORDER BY key DESC LIMIT 1"
INSERT_SEAL_SQL = (
    f"INSERT INTO sanctum_seals (key, {SEAL_COLUMNS}, written) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def key_span(number: int) -> tuple[int, int]:
    """The first and last key an Invocation's Seals can hold."""
    low = number << SEQ_BITS
    return low, low | SEQ_MASK


def delete_rows(db: sqlite3.Connection, invocation_ids: tuple[str, ...]) -> bool:
    """Delete the Seals and index rows of ``invocation_ids`` in one transaction.

    Value rows stay: they are shared between Invocations. Returns whether any was held.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        found = False
        for invocation_id in invocation_ids:
            row = db.execute(NUMBER_SQL, (invocation_id,)).fetchone()
            if row is not None:
                found = True
                db.execute(f"DELETE FROM sanctum_seals WHERE {RANGE_SQL}", key_span(int(row[0])))
                db.execute("DELETE FROM sanctum_invocations WHERE number = ?", (row[0],))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return found


_BUSY, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 8, 10, 11, 13, 14, 26
"""Primary SQLite result codes (``sqlite3.Error.sqlite_errorcode & 0xFF``)."""

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []


def _migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@_migration
def m001_seals_and_values(db: sqlite3.Connection) -> None:
    """Values (content-addressed, list chains), Seals, and the index of Invocations.

    ``sanctum_seals`` is keyed by ``(invocation_id, seq)``: ``seq`` counts the
    Invocation's Seals in write order (1-based), ``written`` is the write time in
    epoch nanoseconds (orders the Invocations index).
    """
    db.execute(
        """
        CREATE TABLE sanctum_values (
            id INTEGER PRIMARY KEY,
            digest BLOB NOT NULL UNIQUE,
            prev INTEGER REFERENCES sanctum_values(id),
            body TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE sanctum_seals (
            invocation_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            seal_id TEXT NOT NULL,
            superstep INTEGER NOT NULL,
            timestamp REAL NOT NULL,
            frontier TEXT NOT NULL,
            metadata TEXT NOT NULL,
            aether TEXT NOT NULL,
            written INTEGER NOT NULL,
            PRIMARY KEY (invocation_id, seq)
        ) WITHOUT ROWID
        """
    )
    # One row per Invocation, added with its first Seal and never touched again.
    db.execute(
        """
        CREATE TABLE sanctum_invocations (
            invocation_id TEXT PRIMARY KEY,
            created INTEGER NOT NULL
        ) WITHOUT ROWID
        """
    )
    db.execute(
        """
        CREATE TRIGGER sanctum_first_seal AFTER INSERT ON sanctum_seals
        WHEN new.seq = 1 BEGIN
            INSERT OR IGNORE INTO sanctum_invocations (invocation_id, created)
            VALUES (new.invocation_id, new.written);
        END
        """
    )


@_migration
def m002_keyed_seals(db: sqlite3.Connection) -> None:
    """Seals in a rowid table keyed by ``number << 32 | seq`` (one page per commit).

    m001 clustered Seals by ``(invocation_id, seq)`` in a WITHOUT ROWID table: an index
    b-tree, whose page splits rewrite three sibling pages and their parent, so about
    one commit in four wrote four pages. Each Invocation now has a small ``number``
    (``sanctum_invocations``, written once, with its first Seal) and a Seal's rowid
    ``key`` is ``number * 2**32 + seq``: an Invocation's Seals stay contiguous, the
    newest Invocation appends at the right edge of the table b-tree (SQLite's quick
    balance: one new page, no sibling rewrite), and the primary key itself is the
    optimistic check — two writers that both expect Seal *k* both write key *k + 1*,
    and the second one fails. Existing Seals are copied over unchanged.
    """
    db.execute("DROP TRIGGER IF EXISTS sanctum_first_seal")
    db.execute("ALTER TABLE sanctum_seals RENAME TO sanctum_m001_seals")
    db.execute("ALTER TABLE sanctum_invocations RENAME TO sanctum_m001_invocations")
    db.execute(
        """
        CREATE TABLE sanctum_invocations (
            number INTEGER PRIMARY KEY,
            invocation_id TEXT NOT NULL UNIQUE,
            created INTEGER NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE sanctum_seals (
            key INTEGER PRIMARY KEY,
            seal_id TEXT NOT NULL,
            superstep INTEGER NOT NULL,
            timestamp REAL NOT NULL,
            frontier TEXT NOT NULL,
            metadata TEXT NOT NULL,
            aether TEXT NOT NULL,
            written INTEGER NOT NULL
        )
        """
    )
    db.execute(
        "INSERT INTO sanctum_invocations (invocation_id, created) "
        "SELECT invocation_id, min(written) FROM sanctum_m001_seals "
        "GROUP BY invocation_id ORDER BY min(written), invocation_id"
    )
    db.execute(
        "INSERT INTO sanctum_seals (key, seal_id, superstep, timestamp, frontier, metadata, "
        "aether, written) SELECT (i.number << 32) + s.seq, s.seal_id, s.superstep, "
        "s.timestamp, s.frontier, s.metadata, s.aether, s.written "
        "FROM sanctum_m001_seals AS s JOIN sanctum_invocations AS i "
        "ON i.invocation_id = s.invocation_id ORDER BY i.number, s.seq"
    )
    db.execute("DROP TABLE sanctum_m001_seals")
    db.execute("DROP TABLE sanctum_m001_invocations")


_FIX = (
    "Point the codex at another file (e.g. --codex .sanctum/codex.db), or move this one "
    "aside if it is a damaged codex and restore it from a backup."
)


def _refuse(path: str, problem: str, fix: str = _FIX) -> SealError:
    return SealError(f"cannot open the codex {path}: {problem}. {fix}", location=path)


def _read_only_fs(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder or ".").f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _disk_full(path: str) -> bool:
    """Whether the filesystem holding ``path`` has (almost) no room left."""
    try:
        stats = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


def _read_only_part(path: str) -> str | None:
    """What makes ``path`` unwritable, in words (None when it looks writable)."""
    folder = os.path.dirname(os.path.abspath(path))
    if _read_only_fs(folder):
        return "it is on a read-only filesystem"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "the file is read-only"
    if not os.access(folder, os.W_OK):
        return (
            f"its folder {folder} is read-only (SQLite writes its -wal and -shm files "
            "beside the codex)"
        )
    return None


def holders(path: str) -> list[str]:
    """Other processes that have the codex (or its -wal or -shm file) open.

    Linux only (reads ``/proc/*/fd``); empty elsewhere or when nothing is found. Each
    entry reads ``pid 1234 (sanctum run ritual.yaml)``.
    """
    wanted = {os.path.realpath(path + suffix) for suffix in ("", "-wal", "-shm")}
    found: list[str] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = {os.readlink(fd) for fd in (entry / "fd").iterdir()}
        except OSError:
            continue
        if links & wanted:
            try:
                raw = (entry / "cmdline").read_bytes().split(b"\0")
                words = [Path(raw[0].decode(errors="replace")).name] + [
                    w.decode(errors="replace") for w in raw[1:4] if w
                ]
                command = " ".join(words)
            except OSError:
                command = "?"
            found.append(f"pid {entry.name} ({command})")
    return sorted(found)


def sqlite_failure(
    exc: sqlite3.Error,
    path: str,
    doing: str,
    *,
    invocation_id: str | None = None,
    busy_timeout: float | None = None,
) -> SealError:
    """The SealError for a SQLite failure, told apart by cause, with its fix.

    Args:
        exc: What sqlite3 raised.
        path: The codex file.
        doing: What was being done ("read seals", "write a seal"), for the message.
        invocation_id: The Invocation concerned, when there is one.
        busy_timeout: Seconds the lock was waited for (quoted when busy).

    Returns:
        A :class:`~sanctum.errors.CodexUnavailableError` for a full disk or a write
        lock another process held too long (the same call may work later); a
        :class:`~sanctum.errors.SealError` for a read-only file, folder or filesystem,
        a file that is not a SQLite database, a damaged file, or anything else.
    """
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    text = str(exc)
    where = f"could not {doing} in the codex {path}"
    if code == _FULL or "disk is full" in text or (code == _IOERR and _disk_full(path)):
        return CodexUnavailableError(
            f"{where}: the disk is full ({text}). Free some space and try again; nothing "
            "was written by this call and every Seal written before is intact.",
            invocation_id=invocation_id,
            location=path,
        )
    if code == _BUSY or "locked" in text:
        who = holders(path)
        held = f" (held by {', '.join(who)})" if who else ""
        waited = f" for {busy_timeout:g} s" if busy_timeout is not None else ""
        return CodexUnavailableError(
            f"{where}: another process holds its write lock{held}; waited{waited}. Wait "
            "for it to finish (or stop it) and try again, or raise busy_timeout.",
            invocation_id=invocation_id,
            location=path,
        )
    unwritable = _read_only_part(path) if code in (_READONLY, _CANTOPEN) else None
    if unwritable is not None or code == _READONLY:
        why = unwritable or "SQLite opened it read-only"
        return SealError(
            f"{where}: {why} ({text}). Reading it still works (sanctum seals, "
            "invocations); to write, copy it to writable storage and point --codex at "
            "the copy.",
            invocation_id=invocation_id,
            location=path,
        )
    if code == _NOTADB:
        return SealError(
            f"{where}: it is not a SQLite database ({text}); nothing was written to it. "
            "Point the codex at another file (e.g. --codex .sanctum/codex.db), or, if it "
            "was a codex whose header got damaged, restore it from a backup.",
            invocation_id=invocation_id,
            location=path,
        )
    if code == _CORRUPT:
        return SealError(
            f"{where}: the file is damaged ({text}); nothing was written to it. Restore it "
            "from a backup (seals that still read can be listed with sanctum seals), or "
            "move it aside and start a new codex.",
            invocation_id=invocation_id,
            location=path,
        )
    return SealError(
        f"{where}: {text}. Check the file, its folder and the disk.",
        invocation_id=invocation_id,
        location=path,
    )


def open_read_only(path: str, *, busy_timeout: float) -> sqlite3.Connection | None:
    """Open a codex file for reading only: no write lock, never a write.

    A ``mode=ro`` URI; on read-only media or in a read-only folder, where SQLite cannot
    create the ``-shm`` file a WAL reader needs, ``immutable=1`` (nobody can write
    there either).

    Args:
        path: The codex file (it must exist).
        busy_timeout: Seconds to wait while a writer checkpoints.

    Returns:
        The connection, or None when the file's schema needs an upgrade first (only a
        writable open can apply it).

    Raises:
        SealError: If the file cannot be opened, is not a SQLite database, belongs to
            another application, is damaged, or was written by a newer sanctum.
    """
    absolute = quote(os.path.abspath(path))
    try:
        return _check_readable(_connect_ro(f"file:{absolute}?mode=ro", busy_timeout), path)
    except sqlite3.Error as exc:
        code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
        if code not in (_CANTOPEN, _READONLY) or _read_only_part(path) is None:
            raise sqlite_failure(exc, path, "read seals", busy_timeout=busy_timeout) from None
    try:
        db = _connect_ro(f"file:{absolute}?mode=ro&immutable=1", busy_timeout)
        return _check_readable(db, path)
    except sqlite3.Error as exc:
        raise sqlite_failure(exc, path, "read seals", busy_timeout=busy_timeout) from None


def _connect_ro(uri: str, busy_timeout: float) -> sqlite3.Connection:
    return sqlite3.connect(
        uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )


def _check_readable(db: sqlite3.Connection, path: str) -> sqlite3.Connection | None:
    """``db`` when it holds an up-to-date sanctum codex; None when it needs migrating."""
    try:
        tables = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "sanctum_migrations" not in tables:
            if tables:
                shown = ", ".join(sorted(tables)[:5])
                raise _refuse(
                    path,
                    f"it is a SQLite database of another application (tables: {shown}), not "
                    "a sanctum codex",
                    "Point the codex at another file (e.g. --codex .sanctum/codex.db).",
                )
            db.close()
            return None  # an empty file: a writer creates the schema
        applied = {row[0] for row in db.execute("SELECT name FROM sanctum_migrations")}
    except BaseException:
        db.close()
        raise
    known = {fn.__name__ for fn in MIGRATIONS}
    if applied - known:
        db.close()
        unknown = ", ".join(sorted(applied - known))
        raise _refuse(
            path,
            f"it was written by a newer sanctum (unknown schema steps: {unknown})",
            "Upgrade sanctum to open it.",
        )
    if known - applied:
        db.close()
        return None
    return db


def open_codex_file(path: str, *, busy_timeout: float, synchronous: str) -> sqlite3.Connection:
    """Open (creating it, and its folder, when absent) a SqliteCodex file; bring its
    schema up to date.

    Args:
        path: The database file.
        busy_timeout: Seconds to wait for another process's write lock.
        synchronous: SQLite ``synchronous`` pragma value (``"FULL"`` or ``"NORMAL"``).

    Returns:
        An autocommit connection (explicit ``BEGIN`` per transaction) in WAL mode.

    Raises:
        SealError: If the file cannot be opened, is not a SQLite database, belongs to
            another application, or was written by a newer sanctum (naming the path
            and the fix).
    """
    if path != ":memory:" and not path.startswith("file:"):
        folder = os.path.dirname(path)
        if folder and not os.path.isdir(folder):
            try:  # as the command line does: `.sanctum/codex.db` works in a fresh folder
                os.makedirs(folder, exist_ok=True)
            except OSError as exc:
                raise _refuse(
                    path,
                    f"its folder {folder} cannot be created ({exc.strerror or exc})",
                    "Check the path and its permissions.",
                ) from None
    try:
        db = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise sqlite_failure(exc, path, "open the file", busy_timeout=busy_timeout) from None
    try:
        _prepare(db, path, synchronous)
    except sqlite3.Error as exc:
        db.close()
        raise sqlite_failure(exc, path, "open the file", busy_timeout=busy_timeout) from None
    except BaseException:
        db.close()
        raise
    return db


def _prepare(db: sqlite3.Connection, path: str, synchronous: str) -> None:
    """Check the file (foreign, damaged) before the first write; migrate it.

    Raises:
        SealError: A foreign, damaged or newer file.
        sqlite3.Error: Anything else (the caller tells the causes apart).
    """
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and "sanctum_migrations" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        raise _refuse(
            path,
            f"it is a SQLite database of another application (tables: {shown}), not a "
            "sanctum codex; nothing was written to it",
            "Point the codex at another file (e.g. --codex .sanctum/codex.db).",
        )
    if tables:
        # Once per open, before anything is written: a damaged file gets no new Seal.
        verdict = [str(row[0]) for row in db.execute("PRAGMA quick_check(3)")]
        if verdict != ["ok"]:
            raise _refuse(
                path,
                f"it is damaged (PRAGMA quick_check: {'; '.join(verdict)[:300]}); nothing "
                "was written to it. Its intact seals can still be read (sanctum seals)",
                "Restore it from a backup, or move it aside and start a new codex.",
            )
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    _migrate(db, path)


def _migrate(db: sqlite3.Connection, path: str) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "CREATE TABLE IF NOT EXISTS sanctum_migrations "
            "(name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        applied = {row[0] for row in db.execute("SELECT name FROM sanctum_migrations")}
        known = {fn.__name__ for fn in MIGRATIONS}
        unknown = sorted(applied - known)
        if unknown:
            raise _refuse(
                path,
                f"it was written by a newer sanctum (unknown schema steps: {', '.join(unknown)})",
                "Upgrade sanctum to open it.",
            )
        for fn in MIGRATIONS:
            if fn.__name__ not in applied:
                fn(db)
                db.execute(
                    "INSERT INTO sanctum_migrations (name, applied_at) VALUES (?, ?)",
                    (fn.__name__, time.time()),
                )
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


class SqliteFile:
    """The connections of a SqliteCodex to its file (a mixin: the codex sets ``path``,
    ``_synchronous``, ``_busy_timeout``, ``_db`` and ``_ro``; this opens them lazily and
    words their failures)."""

    path: Path
    _synchronous: str
    _busy_timeout: float
    _db: sqlite3.Connection | None
    _ro: sqlite3.Connection | None

    @property
    def _location(self) -> str:
        return str(self.path)

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = open_codex_file(
                self._location, busy_timeout=self._busy_timeout, synchronous=self._synchronous
            )
        return self._db

    def _reader(self) -> sqlite3.Connection:
        """The connection reads use: this object's writer when it has written, else a
        read-only one (``mode=ro``: no write lock, works on read-only media). A file
        that does not exist yet, or whose schema needs an upgrade, is opened for
        writing instead (which creates or upgrades it)."""
        if self._db is not None:
            return self._db
        if self._ro is None:
            if self._location == ":memory:" or not self.path.is_file():
                return self._conn()
            self._ro = open_read_only(self._location, busy_timeout=self._busy_timeout)
            if self._ro is None:
                return self._conn()
        return self._ro

    def _failed(self, exc: sqlite3.Error, doing: str, invocation_id: str | None) -> SealError:
        return sqlite_failure(
            exc,
            self._location,
            doing,
            invocation_id=invocation_id,
            busy_timeout=self._busy_timeout,
        )
