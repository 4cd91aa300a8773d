"""The procrastinate App over the Codex's own database, its schema, the stored rituals.

The only module (with its siblings) that imports procrastinate. Ritual sources are kept
in ``sanctum_queue_rituals`` (digest, file name, text) beside the Codex's tables, so a
worker on another machine needs the sanctum package and the ritual's Python code
(installed, importable), not the submitter's file paths. Why a segment job failed (or
was taken over) is kept in ``sanctum_queue_failures`` (job id, first line of the
error). Each running worker's own timings are kept in ``sanctum_queue_workers``
(procrastinate worker id, name, heartbeat and stale seconds), so the stalled-job sweep
judges every worker by its own stale limit (see ``sanctum.queue._sweep``).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from sanctum.errors import CodexUnavailableError, SealError

__all__ = [
    "SEGMENT_TASK",
    "check_codex",
    "check_url",
    "fetch_source",
    "make_app",
    "materialise",
    "open_app",
    "private_folder",
    "record_failure",
    "store_source",
]

SEGMENT_TASK = "sanctum.segment"
"""The procrastinate task name of a segment job."""
_SCHEMA_LOCK = 0x5A4E_C700_0051
"""Advisory lock serialising the first schema set-up of several workers."""


def _procrastinate() -> Any:
    try:
        import procrastinate
    except ImportError:
        raise SealError(
            "the queue needs procrastinate; install the queue extra: "
            "pip install 'sanctum-rituals[queue]'"
        ) from None
    return procrastinate


def make_app(conninfo: str) -> Any:
    """A procrastinate App on ``conninfo`` (not opened), with the segment task declared.

    The task body is given when a worker runs (see ``sanctum.queue._worker``); a
    submitter only defers. The task has ``retry=0``: only the stalled-job sweep
    re-queues a segment (procrastinate issue #1543).

    Raises:
        SealError: If procrastinate is not installed.
    """
    procrastinate = _procrastinate()
    connector = procrastinate.PsycopgConnector(conninfo=conninfo)
    app = procrastinate.App(connector=connector)
    return app


async def open_app(app: Any, conninfo: str) -> None:
    """Open ``app`` (made on ``conninfo``) and create the queue's tables when missing.

    The first set-up is serialised across processes by a session advisory lock held on
    a connection of its own: the app's pool may run the unlock on another session than
    the lock, which would leave the lock held and every later worker waiting.

    Raises:
        SealError: If the database cannot be used.
    """
    import psycopg

    await app.open_async()
    try:
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as lock:
            await lock.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
            if not await app.job_manager.check_connection_async():
                await app.schema_manager.apply_schema_async()
            await app.connector.execute_query_async(
                "CREATE TABLE IF NOT EXISTS sanctum_queue_rituals (digest text PRIMARY KEY, "
                "name text NOT NULL, source text NOT NULL)"
            )
            await app.connector.execute_query_async(
                "CREATE TABLE IF NOT EXISTS sanctum_queue_failures (job_id bigint PRIMARY KEY, "
                "reason text NOT NULL)"
            )
            await app.connector.execute_query_async(
                "CREATE TABLE IF NOT EXISTS sanctum_queue_workers (worker_id bigint PRIMARY KEY "
                "REFERENCES procrastinate_workers(id) ON DELETE CASCADE, name text NOT NULL, "
                "heartbeat double precision NOT NULL, stale double precision NOT NULL)"
            )
            await lock.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))
    except Exception as exc:
        await app.close_async()
        raise SealError(f"cannot set up the queue tables: {exc}") from None


async def store_source(app: Any, digest: str, name: str, source: str) -> None:
    """Keep a ritual's text under its digest (written once)."""
    await app.connector.execute_query_async(
        "INSERT INTO sanctum_queue_rituals (digest, name, source) "
        "VALUES (%(digest)s, %(name)s, %(source)s) ON CONFLICT (digest) DO NOTHING",
        digest=digest,
        name=name,
        source=source,
    )


async def fetch_source(app: Any, digest: str) -> tuple[str, str]:
    """The ``(file name, text)`` stored under ``digest``.

    Raises:
        SealError: If no ritual was stored under it.
    """
    row = await app.connector.execute_query_one_async(
        "SELECT name, source FROM sanctum_queue_rituals WHERE digest = %(digest)s",
        digest=digest,
    )
    if row is None:
        raise SealError(
            f"no ritual with digest {digest[:12]} was submitted to this queue; submit it "
            "again with `sanctum submit`"
        )
    return str(row["name"]), str(row["source"])


async def record_failure(app: Any, job_id: int, reason: str) -> None:
    """Keep why segment job ``job_id`` failed (one line), for ``sanctum queue``."""
    await app.connector.execute_query_async(
        "INSERT INTO sanctum_queue_failures (job_id, reason) VALUES (%(job)s, %(reason)s) "
        "ON CONFLICT (job_id) DO UPDATE SET reason = EXCLUDED.reason",
        job=job_id,
        reason=reason,
    )


_SCHEMES = ("postgresql://", "postgres://")


def _location(codex: str) -> str:
    """``host:port/dbname`` of a PostgreSQL URL (for messages; no password)."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(codex)
    host = str(params.get("host") or params.get("hostaddr") or "localhost")
    port = str(params.get("port") or 5432)
    dbname = str(params.get("dbname") or params.get("user") or "postgres")
    return f"{host}:{port}/{dbname}"


def _check_ports(codex: str) -> None:
    """Refuse a port that is no number from 1 to 65535 (each, for several hosts).

    Raises:
        SealError: Naming the bad port (never the rest of the URL: it may hold a
            password).
    """
    from psycopg.conninfo import conninfo_to_dict

    ports = str(conninfo_to_dict(codex).get("port") or "")
    for port in ports.split(",") if ports else ():
        text = port.strip()
        if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 65535):
            raise SealError(
                f"the port in the PostgreSQL URL must be a number from 1 to 65535, not "
                f"{text!r}; write postgresql://user@host:port/dbname"
            )


def check_url(codex: str) -> str:
    """Refuse a Codex that is no PostgreSQL URL, without connecting; its location.

    Returns:
        ``host:port/dbname`` of the URL (for messages; no password).

    Raises:
        SealError: If ``codex`` is no ``postgresql://`` URL (a SQLite file, ``memory:``),
            cannot be parsed, or names a port that is no number from 1 to 65535.
    """
    if not codex.startswith(_SCHEMES):
        raise SealError(
            f"a queue needs a PostgreSQL codex: --codex postgresql://user@host:port/dbname "
            f"(not {codex!r}; workers on other machines share it)"
        )
    import psycopg

    try:
        location = _location(codex)
        _check_ports(codex)
    except psycopg.Error:
        raise SealError(
            "the PostgreSQL connection string could not be parsed (not shown: it may hold "
            "a password); write postgresql://user@host:port/dbname"
        ) from None
    return location


async def check_codex(codex: str, *, wait: int = 5) -> None:
    """Refuse a Codex that is not PostgreSQL, and one whose server cannot be reached.

    One connection is opened (and closed) before any pool, so a dead server gives one
    message rather than a pool's retries.

    Args:
        codex: What ``--codex`` was given.
        wait: Seconds to wait for the server.

    Raises:
        SealError: As :func:`check_url`.
        CodexUnavailableError: If the server cannot be reached or refuses the login.
    """
    import psycopg

    location = check_url(codex)
    try:
        conn = await psycopg.AsyncConnection.connect(codex, connect_timeout=wait)
    except psycopg.Error as exc:
        detail = " ".join(str(exc).split()).rstrip(".?! ") or type(exc).__name__
        raise CodexUnavailableError(
            f"cannot use the PostgreSQL codex at {location}: {detail}. Start the server or "
            "fix the host, port, user or database in the URL.",
            location=location,
        ) from None
    await conn.close()


def private_folder(cache: Path | None) -> Path:
    """A folder only this user can write, for the stored rituals a worker runs.

    ``None`` makes a fresh one (``tempfile.mkdtemp``, mode 0700). A given folder is
    created with mode 0700 when missing; an existing one must be a real folder (no
    symlink), owned by this user and writable by nobody else.

    Raises:
        SealError: If the given folder is a symlink, not a folder, another user's, or
            open to group or others.
    """
    if cache is None:
        return Path(tempfile.mkdtemp(prefix="sanctum-queue-rituals-"))
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = cache.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise SealError(f"the ritual cache {cache} is not a folder (a symlink?); remove it")
    if info.st_uid != os.getuid():
        raise SealError(
            f"the ritual cache {cache} belongs to another user (uid {info.st_uid}); "
            "use a folder of your own"
        )
    if info.st_mode & 0o077:
        raise SealError(
            f"the ritual cache {cache} is open to other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}); run chmod 700 {cache}"
        )
    return cache


def materialise(name: str, source: str, folder: Path) -> Path:
    """Write a stored ritual to ``<folder>/<sha256 of text>/<name>`` (once); its path.

    ``folder`` must come from :func:`private_folder`: what is in it is trusted.
    """
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    path = folder / digest / Path(name).name
    if not path.is_file() or path.read_text(encoding="utf-8") != source:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        part = path.with_suffix(path.suffix + f".{digest[:8]}.part")
        part.write_text(source, encoding="utf-8")
        part.replace(path)
    return path
