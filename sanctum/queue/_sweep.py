"""The stalled-job sweep: each worker judged by its own stale limit; fresh jobs for takers.

Every worker records its timings in ``sanctum_queue_workers`` under its procrastinate
worker id (:func:`record_worker`), and keeps beating while it stops. The sweep every
live worker runs (:func:`sweep`) declares a worker dead only when its last heartbeat is
older than *that worker's own* ``stale`` seconds — a worker started with ``--stale 3``
never counts a healthy one beating every 10 s dead — and takes over the segments of
dead workers (and those whose worker row is gone) as follows, in one transaction per
sweep, the rows locked:

1. the dead worker's job row is finished as ``aborted`` (procrastinate's own
   ``finish_job``), with the reason kept in ``sanctum_queue_failures``;
2. a fresh job with the same arguments is deferred (:func:`~sanctum.queue._jobs.
   defer_again`), which any worker may fetch.

The taker thus runs a job row of its own. A frozen worker that wakes up later meets
``LeaseLost`` at its next Seal write, and its attempt to finish its old row fails
(that row is no longer ``doing``): it can never mark the taker's job ``succeeded``,
release the Invocation's lock while the taker runs, or let a resume in early.

Finally the rows of dead workers are deleted, each by its own limit too.

Sweeps are serialised across workers by a transaction-level advisory lock
(:data:`SWEEP_LOCK`, ``pg_try_advisory_xact_lock``): a worker that finds another
sweeping skips its round (the other takes over whatever is stalled). Two sweeps at once
would otherwise deadlock deleting dead workers' rows (each delete clears the
``worker_id`` of that worker's job rows).
"""

from __future__ import annotations

import logging
from typing import Any

from sanctum.queue._app import SEGMENT_TASK
from sanctum.queue._jobs import WorkerTimings, defer_again

__all__ = ["SWEEP_LOCK", "Swept", "forget_worker", "record_worker", "sweep"]

_log = logging.getLogger("sanctum.queue")

SWEEP_LOCK = 0x5A4E_C700_0053
"""The advisory-lock key one sweep at a time holds (for its transaction)."""

_STALLED = (
    "SELECT j.id, j.queue_name, j.priority, j.args, j.worker_id, s.name AS worker, "
    "COALESCE(s.stale, %(fallback)s) AS stale FROM procrastinate_jobs AS j "
    "LEFT JOIN procrastinate_workers AS w ON w.id = j.worker_id "
    "LEFT JOIN sanctum_queue_workers AS s ON s.worker_id = j.worker_id "
    "WHERE j.status = 'doing' AND j.task_name = %(task)s AND (w.id IS NULL OR "
    "w.last_heartbeat < now() - make_interval(secs => COALESCE(s.stale, %(fallback)s))) "
    "ORDER BY j.id FOR UPDATE OF j SKIP LOCKED"
)
"""Running segment jobs whose worker is gone or silent past its own stale limit."""

_PRUNE = (
    "DELETE FROM procrastinate_workers AS w WHERE w.last_heartbeat < now() - "
    "make_interval(secs => COALESCE((SELECT s.stale FROM sanctum_queue_workers AS s "
    "WHERE s.worker_id = w.id), %(fallback)s)) RETURNING w.id"
)
"""Workers silent past their own stale limit (their sanctum row goes with them)."""

Swept = tuple[int, int | None]
"""``(aborted job id, the fresh job's id or None when one was waiting already)``."""


async def record_worker(app: Any, worker_id: int, name: str, timings: WorkerTimings) -> None:
    """Keep a worker's name and timings beside its procrastinate row (deleted with it)."""
    await app.connector.execute_query_async(
        "INSERT INTO sanctum_queue_workers (worker_id, name, heartbeat, stale) "
        "VALUES (%(id)s, %(name)s, %(heartbeat)s, %(stale)s) ON CONFLICT (worker_id) "
        "DO UPDATE SET name = EXCLUDED.name, heartbeat = EXCLUDED.heartbeat, "
        "stale = EXCLUDED.stale",
        id=worker_id,
        name=name,
        heartbeat=timings.heartbeat,
        stale=timings.stale,
    )


async def forget_worker(app: Any, worker_id: int) -> None:
    """Delete a worker's row now: its running jobs are the sweep's at once.

    What a worker stopped at once (a second Ctrl-C) does on its way out.
    """
    await app.job_manager.unregister_worker(worker_id)


def _reason(row: dict[str, Any], again: int | None) -> str:
    who = f"worker {row['worker']}" if row["worker"] else "its worker"
    why = (
        f"{who} was silent over {float(row['stale']):g} s"
        if row["worker_id"] is not None
        else f"{who} stopped or was counted dead"
    )
    then = f"continued as job {again}" if again is not None else "a queued segment goes on"
    return f"taken over: {why}; {then} from the latest Seal"


async def sweep(app: Any, fallback: float) -> list[Swept]:
    """Take over the segments of dead workers; delete dead workers' rows.

    Args:
        app: An open procrastinate App.
        fallback: The stale limit, in seconds, of a worker that recorded none (one
            that has only just registered, or a foreign one).

    Returns:
        One :data:`Swept` per segment taken over, oldest job first; none when another
        worker is sweeping (holds :data:`SWEEP_LOCK`): this round is skipped.

    Raises:
        procrastinate.exceptions.ConnectorException: If the database cannot be used
            (nothing is changed then).
    """
    from procrastinate import sql

    params = {"task": SEGMENT_TASK, "fallback": float(fallback)}
    swept: list[Swept] = []
    async with app.connector.pool.connection() as conn, conn.transaction():
        cursor = await conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (SWEEP_LOCK,))
        first = await cursor.fetchone()
        if not (first and first[0]):
            return swept  # another worker sweeps now
        cursor = await conn.execute(_STALLED, params)
        columns = [column.name for column in cursor.description or ()]
        rows = [dict(zip(columns, row, strict=True)) for row in await cursor.fetchall()]
        for row in rows:
            await app.connector.execute_query_one_async_with_connection(
                conn, query=sql.queries["finish_job"], job_id=row["id"], status="aborted",
                delete_job=False,
            )  # fmt: skip
            again = await defer_again(
                app, row["queue_name"], row["args"] or {}, priority=row["priority"],
                connection=conn,
            )  # fmt: skip
            await conn.execute(
                "INSERT INTO sanctum_queue_failures (job_id, reason) VALUES (%s, %s) "
                "ON CONFLICT (job_id) DO UPDATE SET reason = EXCLUDED.reason",
                (row["id"], _reason(row, again)),
            )
            swept.append((int(row["id"]), again))
        await conn.execute(_PRUNE, params)
    return swept
