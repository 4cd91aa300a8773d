"""The procrastinate App over the Codex's own database, its schema, the stored rituals.

The only module (with its siblings) that imports procrastinate. Ritual sources are kept
in ``sanctum_queue_rituals`` (digest, file name, text) beside the Codex's tables, so a
worker on another machine needs the sanctum package and the ritual's Python code, not
the submitter's file paths.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from sanctum.errors import SealError

__all__ = [
    "SEGMENT_TASK",
    "fetch_source",
    "make_app",
    "materialise",
    "open_app",
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


def materialise(name: str, source: str, cache: Path | None) -> Path:
    """Write a stored ritual to ``<cache>/<sha256 of text>/<name>`` (once); its path.

    ``cache`` defaults to ``<tmp>/sanctum-queue-rituals``.
    """
    folder = cache or Path(tempfile.gettempdir()) / "sanctum-queue-rituals"
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    path = folder / digest / Path(name).name
    if not path.is_file() or path.read_text(encoding="utf-8") != source:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(path.suffix + f".{digest[:8]}.part")
        part.write_text(source, encoding="utf-8")
        part.replace(path)
    return path
