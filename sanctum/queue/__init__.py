"""Invocations shared out to many workers through a PostgreSQL queue (procrastinate).

The optional ``queue`` extra (``pip install 'sanctum-rituals[queue]'``). The engine
never imports this package, and importing it loads procrastinate only when a function
here is called. A *segment* — the start of an Invocation, or one resume of it — is one
procrastinate job, deferred with ``lock`` and ``queueing_lock`` set to the invocation id
and ``retry=0``; a worker claims the Invocation by bumping its lease epoch in the Codex
(:meth:`~sanctum.codex.postgres.PostgresCodex.lease`), so a worker that froze while
another took over meets :class:`~sanctum.errors.LeaseLost` at its next Seal write. Every
worker also sweeps the segments of dead workers — each worker judged by its own stale
limit — into fresh jobs (``sanctum.queue._sweep``); a worker asked to stop hands its
segments back at their next Seal (see :func:`run_worker`). A queued resume is checked
and deferred in one transaction (:func:`enqueue_resume`). :class:`PostgresSlots` holds
the slots of Oracles' ``max_concurrency_global``.
"""

from __future__ import annotations

from sanctum.queue._jobs import (
    JOB_STATUSES,
    QueuedJob,
    Resumed,
    WorkerTimings,
    check_queue_name,
    list_jobs,
    submit,
)
from sanctum.queue._resume import enqueue_resume
from sanctum.queue._slots import PostgresSlots
from sanctum.queue._worker import run_worker

__all__ = [
    "JOB_STATUSES",
    "PostgresSlots",
    "QueuedJob",
    "Resumed",
    "WorkerTimings",
    "check_queue_name",
    "enqueue_resume",
    "list_jobs",
    "run_worker",
    "submit",
]
