"""Opening a SqliteCodex file: pragmas, foreign-file checks, named migrations (private).

Migrations are plain functions applied in order, each recorded by name in
``sanctum_migrations`` in the same transaction that applies it, so a file always says
exactly which schema steps it went through. A file that records a migration this
version does not know was written by a newer sanctum and is refused rather than
guessed at; a SQLite file holding other tables and no ``sanctum_migrations`` belongs
to someone else and is never written to.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable

from sanctum.errors import SealError

__all__ = ["MIGRATIONS", "open_codex_file"]

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
        raise _refuse(
            path, f"SQLite could not open it ({exc})", "Check the path and its permissions."
        ) from None
    try:
        _prepare(db, path, synchronous)
    except BaseException:
        db.close()
        raise
    return db


def _prepare(db: sqlite3.Connection, path: str, synchronous: str) -> None:
    try:
        tables = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    except sqlite3.DatabaseError as exc:
        raise _refuse(path, f"it is not a SQLite database or it is damaged ({exc})") from None
    if tables and "sanctum_migrations" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        raise _refuse(
            path,
            f"it is a SQLite database of another application (tables: {shown}), not a "
            "sanctum codex; nothing was written to it",
            "Point the codex at another file (e.g. --codex .sanctum/codex.db).",
        )
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")
        _migrate(db, path)
    except sqlite3.DatabaseError as exc:
        raise _refuse(path, f"its schema could not be read or upgraded ({exc})") from None


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
