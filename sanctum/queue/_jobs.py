"""Deferring segments and listing them: what ``sanctum submit``, ``resume --executor
queue`` and ``sanctum queue`` do."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sanctum.errors import SealError
from sanctum.queue._app import SEGMENT_TASK, fetch_source, make_app, materialise, open_app

__all__ = [
    "DEFAULT_QUEUE",
    "QueuedJob",
    "Resumed",
    "WorkerTimings",
    "enqueue_resume",
    "list_jobs",
    "submit",
]

DEFAULT_QUEUE = "sanctum"


@dataclass(frozen=True, slots=True)
class WorkerTimings:
    """How often a worker beats and sweeps, in seconds.

    ``heartbeat``: between heartbeats; ``stale``: a worker silent this long is dead and
    its segments go back to the queue; ``sweep``: between two sweeps for such segments;
    ``poll``: between fetches when no notification came. Production defaults; tests use
    sub-second values.
    """

    heartbeat: float = 10.0
    stale: float = 60.0
    sweep: float = 10.0
    poll: float = 5.0


@dataclass(frozen=True, slots=True)
class Resumed:
    """The outcome of queueing a resume: the job id, or ``already`` when a segment of
    the Invocation is waiting in the queue (it will run; this one was refused)."""

    invocation_id: str
    job_id: int | None
    already: bool


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """One segment job: ``status`` is procrastinate's (todo, doing, succeeded, failed,
    cancelled, aborted); ``worker`` the lease holder while it runs, else None."""

    job_id: int
    invocation_id: str
    kind: str
    queue: str
    status: str
    attempts: int
    worker: str | None


async def submit(
    ritual: str | Path,
    inputs: Sequence[Mapping[str, Any]],
    *,
    codex: str,
    queue: str = DEFAULT_QUEUE,
) -> list[str]:
    """Store the ritual in the Codex and defer one start segment per input.

    Every input is checked against the ritual first (nothing is queued when one does
    not fit).

    Args:
        ritual: The ritual file (YAML).
        inputs: One mapping of input values per Invocation.
        codex: The PostgreSQL URL of the Codex (the queue lives in its database).
        queue: The queue name (workers choose theirs with ``--queue``).

    Returns:
        The new invocation ids, in input order.

    Raises:
        RitualFileError: If the ritual file is missing or malformed.
        RitualInputError: If an input does not fit the ritual.
        SealError: If procrastinate is missing or the database cannot be used.
    """
    from sanctum.queue._app import store_source
    from sanctum.ritualfile import load

    file = load(ritual)
    bound = [file.bind_inputs(dict(given)) for given in inputs]
    source = file.path.read_text(encoding="utf-8")
    app = make_app(codex)
    await open_app(app, codex)
    try:
        await store_source(app, file.digest, file.path.name, source)
        ids = [uuid.uuid4().hex for _ in bound]
        for ident, values in zip(ids, bound, strict=True):
            await _defer(app, ident, queue, {"kind": "start", "inputs": values}, file.digest)
        return ids
    finally:
        await app.close_async()


async def _defer(
    app: Any, invocation_id: str, queue: str, args: Mapping[str, Any], digest: str
) -> int:
    """Defer one segment with the invocation's lock and queueing lock; its job id."""
    task = app.configure_task(
        SEGMENT_TASK, queue=queue, lock=invocation_id, queueing_lock=invocation_id
    )
    job_id: int = await task.defer_async(invocation_id=invocation_id, digest=digest, **args)
    return job_id


async def enqueue_resume(
    invocation_id: str,
    updates: Mapping[str, Any] | None = None,
    *,
    codex: str,
    queue: str = DEFAULT_QUEUE,
    token: str | None = None,
) -> Resumed:
    """Defer a resume segment of a submitted Invocation; any worker may run it.

    The segment carries ``token`` (a fresh one when omitted) and the Seal that applies
    ``updates`` records it, so a retried segment never applies the updates twice.

    Args:
        invocation_id: The Invocation (paused, or stopped).
        updates: Values merged into the Aether first (answers to an interrupt).
        codex: The PostgreSQL URL of the Codex.
        queue: The queue name.
        token: The idempotency token of this resume.

    Returns:
        A :class:`Resumed`; ``already`` when a segment of it is waiting already.

    Raises:
        SealError: If the Invocation is unknown, was not submitted to a queue, or the
            database cannot be used.
        RitualInputError: If an update does not fit the ritual.
    """
    procrastinate = _procrastinate_exceptions()
    from sanctum.codex.postgres import PostgresCodex
    from sanctum.ritualfile import load

    store = PostgresCodex(codex)
    try:
        head = await store.get(invocation_id)
    finally:
        await store.aclose()
    record = head.metadata.get("ritual") if head is not None else None
    digest = record.get("sha256") if isinstance(record, Mapping) else None
    if head is None or not isinstance(digest, str):
        raise SealError(
            f"invocation {invocation_id!r} has no seal in the codex that names its ritual; "
            "queue a resume only for an invocation started by `sanctum submit`",
            invocation_id=invocation_id,
        )
    app = make_app(codex)
    await open_app(app, codex)
    try:
        name, source = await fetch_source(app, digest)
        bound = load(materialise(name, source, None)).bind_updates(dict(updates or {}))
        args = {"kind": "resume", "updates": bound, "token": token or uuid.uuid4().hex}
        try:
            job_id = await _defer(app, invocation_id, queue, args, digest)
        except procrastinate.AlreadyEnqueued:
            return Resumed(invocation_id=invocation_id, job_id=None, already=True)
        return Resumed(invocation_id=invocation_id, job_id=job_id, already=False)
    finally:
        await app.close_async()


def _procrastinate_exceptions() -> Any:
    from sanctum.queue._app import _procrastinate

    return _procrastinate().exceptions


async def list_jobs(
    *, codex: str, statuses: Iterable[str] = ("todo", "doing", "failed")
) -> list[QueuedJob]:
    """The segment jobs in the given statuses, oldest first, with their lease holders.

    Reads only: on a database no submit and no worker has used yet (no queue tables),
    the list is empty and nothing is created.

    Raises:
        SealError: If the database cannot be used.
    """
    import psycopg
    from psycopg.rows import dict_row

    try:
        async with await psycopg.AsyncConnection.connect(
            codex, autocommit=True, row_factory=dict_row
        ) as conn:
            cursor = await conn.execute(
                "SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS jobs, "
                "to_regclass('sanctum_leases') IS NOT NULL AS leases"
            )
            found = await cursor.fetchone()
            if found is None or not found["jobs"]:
                return []
            holder = "l.holder" if found["leases"] else "NULL AS holder"
            leases = (
                "LEFT JOIN sanctum_leases AS l ON l.invocation_id = j.lock AND j.status = 'doing' "
                if found["leases"]
                else ""
            )
            cursor = await conn.execute(
                "SELECT j.id, j.lock, j.args, j.queue_name, j.status::text AS status, "
                f"j.attempts, {holder} FROM procrastinate_jobs AS j {leases}"
                "WHERE j.task_name = %(task)s AND j.status::text = ANY(%(statuses)s) "
                "ORDER BY j.id",
                {"task": SEGMENT_TASK, "statuses": list(statuses)},
            )
            rows = await cursor.fetchall()
    except psycopg.Error as exc:
        raise SealError(f"cannot list the queue: {str(exc).strip()}") from None
    return [
        QueuedJob(
            job_id=int(row["id"]),
            invocation_id=str(row["lock"]),
            kind=str((row["args"] or {}).get("kind", "?")),
            queue=str(row["queue_name"]),
            status=str(row["status"]),
            attempts=int(row["attempts"]),
            worker=row["holder"],
        )
        for row in rows
    ]
