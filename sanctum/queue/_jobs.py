"""Deferring segments and listing them: what ``sanctum submit`` and ``sanctum queue`` do.

Every segment job is deferred by :func:`defer_segment` (``lock`` and ``queueing_lock``
set to the invocation id); a segment handed back by a stopping worker, or taken from a
dead one, is deferred again as a fresh job by :func:`defer_again`, so the job row the
first worker held is never the one another worker runs.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sanctum.errors import SealError
from sanctum.queue._app import SEGMENT_TASK, check_codex, make_app, open_app

__all__ = [
    "DEFAULT_QUEUE",
    "JOB_STATUSES",
    "QueuedJob",
    "Resumed",
    "WorkerTimings",
    "check_queue_name",
    "defer_again",
    "defer_segment",
    "list_jobs",
    "refuse_uncarried",
    "resting",
    "submit",
]

DEFAULT_QUEUE = "sanctum"

JOB_STATUSES = ("todo", "doing", "paused", "failed", "succeeded", "aborted", "cancelled")
"""What :func:`list_jobs` can list: procrastinate's job statuses, and ``paused`` (an
invocation whose last segment ended at an interrupt: it holds no job until resumed)."""

MAX_QUEUE_NAME = 128
"""The longest queue name procrastinate stores (``varchar(128)``)."""


@dataclass(frozen=True, slots=True)
class WorkerTimings:
    """How often a worker beats and sweeps, in seconds.

    ``heartbeat``: between heartbeats; ``stale``: this worker silent this long is dead
    and its segments go back to the queue (it is recorded with the worker, so every
    sweep judges this worker by this limit, whatever the sweeping worker's own);
    ``sweep``: between two sweeps for dead workers' segments; ``poll``: between fetches
    when no notification came. Production defaults; tests use sub-second values.
    Check given values with :meth:`check`.
    """

    heartbeat: float = 10.0
    stale: float = 60.0
    sweep: float = 10.0
    poll: float = 5.0

    def check(self) -> None:
        """Refuse timings a worker cannot keep.

        Raises:
            ValueError: If a period is not a finite number of seconds above 0, or
                ``stale`` is not more than twice ``heartbeat`` (one late beat would
                count a healthy worker dead).
        """
        for name in ("heartbeat", "stale", "sweep", "poll"):
            value = getattr(self, name)
            if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a number of seconds above 0, not {value!r}")
        if self.stale <= 2 * self.heartbeat:
            raise ValueError(
                f"stale ({self.stale:g} s) must be more than twice heartbeat "
                f"({self.heartbeat:g} s): a worker that beats every {self.heartbeat:g} s "
                "and is late once would be counted dead (six times the heartbeat, as the "
                "defaults, leaves room)"
            )


@dataclass(frozen=True, slots=True)
class Resumed:
    """The outcome of queueing a resume: the job id and the queue it went to, or
    ``already`` when a start or resume of the Invocation is queued or running (this one
    was refused, not queued; ``queue`` is then None)."""

    invocation_id: str
    job_id: int | None
    already: bool
    queue: str | None = None


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """One segment job, or one paused invocation.

    ``status`` is procrastinate's (todo, doing, succeeded, failed, cancelled, aborted),
    or ``paused`` for an invocation whose last segment ended at an interrupt (then
    ``job_id`` is that last job's); ``attempts`` how many times a worker ran (or runs)
    this segment, counting the runs of the jobs it was handed back or taken over from;
    ``worker`` the worker running it, else None; ``reason`` the first line of the error
    of a failed job, why an aborted one was taken over, or a paused one's question.
    """

    job_id: int
    invocation_id: str
    kind: str
    queue: str
    status: str
    attempts: int
    worker: str | None
    reason: str | None = None


def check_queue_name(name: str) -> None:
    """Refuse a queue name procrastinate cannot keep, or a worker could not be given.

    Raises:
        SealError: If ``name`` is empty, only blanks, longer than 128 characters, or
            holds a control character (a usage error: ``sanctum`` exits 2).
    """
    if not name.strip():
        raise SealError("a queue name cannot be empty (the default is 'sanctum')")
    if len(name) > MAX_QUEUE_NAME:
        raise SealError(f"a queue name has at most {MAX_QUEUE_NAME} characters, not {len(name)}")
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise SealError(f"a queue name cannot hold control characters: {name!r}")


def refuse_uncarried(file: Any) -> None:
    """Refuse a ritual whose parts a worker would not have: only its YAML is stored.

    Python modules beside the file (``call:``, ``reducer:``), spell folders
    (``tomes:``) and circle files stay on the submitter's disk; a worker imports code
    only from installed packages (``call: mypackage.steps:fn``).

    Raises:
        SealError: Naming what the file needs.
    """
    from sanctum.ritualfile.resolve import module_files

    folder = file.path.resolve().parent
    references = [ref for _where, ref in file.code_references()]
    modules = sorted({ref.partition(":")[0] for ref in references if module_files(ref, folder)})
    needs = []
    if modules:
        needs.append(f"Python modules beside it ({', '.join(modules)})")
    if file.spec.tomes:
        needs.append(f"spell folders (tomes: {', '.join(sorted(file.spec.tomes))})")
    if file.circles:
        needs.append(f"circle files ({', '.join(sorted(file.circles))})")
    if needs:
        raise SealError(
            f"cannot submit {file.path.name}: it needs {' and '.join(needs)}, and a queue "
            "carries only the YAML to the workers; install that code as a package the "
            "workers import, or submit with --parts-from-worker to workers started with "
            "--project-dir (see docs/scale-out.md), or run it with `sanctum run`"
        )


async def submit(
    ritual: str | Path,
    inputs: Sequence[Mapping[str, Any]],
    *,
    codex: str,
    queue: str = DEFAULT_QUEUE,
    parts_from_worker: bool = False,
) -> list[str]:
    """Store the ritual in the Codex and defer one start segment per input.

    Every input is checked against the ritual first (nothing is queued when one does
    not fit).

    Args:
        ritual: The ritual file (YAML).
        inputs: One mapping of input values per Invocation.
        codex: The PostgreSQL URL of the Codex (the queue lives in its database).
        queue: The queue name (workers choose theirs with ``--queue``).
        parts_from_worker: Let the workers take the ritual's parts (Python modules,
            spell folders, circle files) from their ``--project-dir`` checkout: each
            job records the ritual's project path and every part's sha256, which a
            worker checks before it runs the job (see ``sanctum.queue._project``).

    Returns:
        The new invocation ids, in input order.

    Raises:
        RitualFileError: If the ritual file is missing or malformed.
        RitualInputError: If an input does not fit the ritual (the first one; the
            façade, ``sanctum.api.submit``, lists every one).
        SealError: If ``queue`` is no usable name (see :func:`check_queue_name`),
            ``codex`` is not PostgreSQL, the ritual needs files a worker would not have
            (see :func:`refuse_uncarried`) and ``parts_from_worker`` is False, a part
            lies outside the project folder, or procrastinate is missing.
        CodexUnavailableError: If the database server cannot be reached.
    """
    from sanctum.queue._app import store_source
    from sanctum.queue._project import manifest
    from sanctum.ritualfile import load

    check_queue_name(queue)
    file = load(ritual)
    extra: dict[str, Any] = {}
    if parts_from_worker:
        extra["project"] = manifest(file)
    else:
        refuse_uncarried(file)
    # Job arguments rest in PostgreSQL like Seals do: masked as Seals are.
    bound = [resting(file.secrets, file.bind_inputs(dict(given))) for given in inputs]
    await check_codex(codex)
    source = file.path.read_text(encoding="utf-8")
    app = make_app(codex)
    await open_app(app, codex)
    try:
        await store_source(app, file.digest, file.path.name, source)
        ids = [uuid.uuid4().hex for _ in bound]
        origin = {"ritual": str(file.path.resolve()), "queue": queue}  # Seals' "queued"
        for ident, values in zip(ids, bound, strict=True):
            args = {"kind": "start", "inputs": values, "origin": origin, **extra}
            await defer_segment(app, ident, queue, {**args, "digest": file.digest})
        return ids
    finally:
        await app.close_async()


def resting(secrets: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (inputs or updates) as a job's arguments may hold them: masked.

    A job's arguments stay in procrastinate's table after the job ran, so the ritual's
    secrets are masked in them as in every Seal. A value that holds a secret reaches
    the worker as the mask, as it would a run resumed from its Seals; a worker reads
    secrets from its own environment (``${VAR}``) instead.
    """
    kept = dict(values)
    if not secrets:
        return kept
    masked: dict[str, Any] = secrets.mask(kept)
    return masked


async def defer_segment(
    app: Any,
    invocation_id: str,
    queue: str,
    args: Mapping[str, Any],
    *,
    priority: int = 0,
    connection: Any = None,
) -> int:
    """Defer one segment with the invocation's lock and queueing lock; its job id.

    Args:
        app: An open procrastinate App.
        invocation_id: The Invocation (its ``lock`` and ``queueing_lock``).
        queue: The queue name.
        args: The task's keyword arguments (``digest``, ``kind``, ...);
            ``invocation_id`` is added.
        priority: procrastinate's priority (higher runs first).
        connection: A psycopg connection whose transaction the defer joins (the
            app's pool when None).

    Raises:
        procrastinate.exceptions.AlreadyEnqueued: If a segment of the Invocation waits.
    """
    task = app.configure_task(
        SEGMENT_TASK,
        queue=queue,
        lock=invocation_id,
        queueing_lock=invocation_id,
        priority=priority,
        connection=connection,
    )
    job_id: int = await task.defer_async(**{**args, "invocation_id": invocation_id})
    return job_id


async def defer_again(
    app: Any,
    queue: str,
    args: Mapping[str, Any],
    *,
    priority: int = 0,
    connection: Any = None,
) -> int | None:
    """Defer a fresh job for a segment a worker gave up (handed back, or taken over).

    The new job carries the same arguments, with ``tries`` (runs of the segment so
    far) one higher; the segment itself is idempotent (see ``sanctum.queue._segment``),
    so it goes on from the Invocation's latest Seal.

    Args:
        app: An open procrastinate App.
        queue: The queue of the job given up.
        args: That job's keyword arguments (with ``invocation_id``).
        priority: That job's priority.
        connection: A psycopg connection in a transaction to join, or None.

    Returns:
        The new job's id, or None when a segment of the Invocation waits already
        (that one goes on from the latest Seal instead).
    """
    from sanctum.queue._app import _procrastinate

    again = {**args, "tries": int(args.get("tries") or 0) + 1}
    try:
        if connection is None:
            return await defer_segment(
                app, str(args["invocation_id"]), queue, again, priority=priority
            )
        async with connection.transaction():  # a savepoint: a refusal keeps the rest
            return await defer_segment(
                app,
                str(args["invocation_id"]),
                queue,
                again,
                priority=priority,
                connection=connection,
            )
    except _procrastinate().exceptions.AlreadyEnqueued:
        return None


_LIST = (
    "SELECT j.id, j.lock, j.args, j.queue_name, j.status::text AS status, j.attempts, "
    "{holder} AS holder, {reason} AS reason FROM procrastinate_jobs AS j {joins}"
    "WHERE j.task_name = %(task)s AND j.status::text = ANY(%(statuses)s) "
    "AND (%(inv)s::text IS NULL OR j.lock = %(inv)s::text) ORDER BY j.id"
)
"""The segment jobs in some statuses; ``{holder}``, ``{reason}`` and ``{joins}`` are
filled by :func:`_jobs_query` from the tables that exist."""

_PAUSED = (
    "SELECT j.id, j.lock, j.args, j.queue_name, j.attempts, s.metadata "
    "FROM (SELECT DISTINCT ON (lock) id, lock, args, queue_name, attempts, status "
    "FROM procrastinate_jobs WHERE task_name = %(task)s ORDER BY lock, id DESC) AS j "
    "JOIN sanctum_invocations AS i ON i.invocation_id = j.lock "
    "JOIN sanctum_seals AS s ON s.seq = i.latest_seq "
    "WHERE j.status = 'succeeded' AND position('\"interrupt\"' in s.metadata) > 0 "
    "AND (%(inv)s::text IS NULL OR j.lock = %(inv)s::text) ORDER BY j.id"
)
"""Invocations whose latest segment job succeeded and whose head Seal may be a pause
(the metadata is read to be sure)."""


def _jobs_query(found: Mapping[str, Any]) -> str:
    holder, reason, joins = "NULL", "NULL", ""
    if found["workers"]:
        joins += "LEFT JOIN sanctum_queue_workers AS w ON w.worker_id = j.worker_id "
        holder = "w.name"
    if found["leases"]:
        joins += "LEFT JOIN sanctum_leases AS l ON l.invocation_id = j.lock AND j.status = 'doing' "
        holder = f"COALESCE({holder}, l.holder)"
    if found["failures"]:
        joins += "LEFT JOIN sanctum_queue_failures AS f ON f.job_id = j.id "
        reason = "f.reason"
    return _LIST.format(holder=holder, reason=reason, joins=joins)


def _attempts(row: Mapping[str, Any]) -> int:
    """Runs of the segment: earlier jobs' (``tries``), this job's, and the one running."""
    tries = (row["args"] or {}).get("tries", 0)
    earlier = tries if isinstance(tries, int) and not isinstance(tries, bool) else 0
    return earlier + int(row["attempts"]) + (1 if row.get("status") == "doing" else 0)


def _question(metadata: str) -> str | None:
    """The pause's question of a head Seal's metadata (JSON text), or None if no pause."""
    import json

    try:
        record = json.loads(metadata).get("interrupt")
    except (ValueError, AttributeError):
        return None
    if not isinstance(record, Mapping):
        return None
    reason = record.get("reason")
    return str(reason) if reason is not None else "paused"


async def list_jobs(
    *,
    codex: str,
    statuses: Iterable[str] = ("todo", "doing", "paused", "failed"),
    invocation_id: str | None = None,
) -> list[QueuedJob]:
    """The segment jobs in the given statuses, oldest first, with the worker running
    each and, for failed and aborted ones, why; then the paused invocations.

    Reads only: on a database no submit and no worker has used yet (no queue tables),
    the list is empty and nothing is created.

    Args:
        codex: The PostgreSQL URL of the Codex.
        statuses: Some of :data:`JOB_STATUSES`.
        invocation_id: Only this Invocation's jobs (all when None).

    Raises:
        ValueError: If a status is none of :data:`JOB_STATUSES`.
        SealError: If ``codex`` is not PostgreSQL or the database cannot be read.
        CodexUnavailableError: If the database server cannot be reached.
    """
    import psycopg
    from psycopg.rows import dict_row

    wanted = list(dict.fromkeys(statuses))
    unknown = [status for status in wanted if status not in JOB_STATUSES]
    if unknown:
        raise ValueError(f"unknown status {unknown[0]!r} (choose from {', '.join(JOB_STATUSES)})")
    await check_codex(codex)
    try:
        async with await psycopg.AsyncConnection.connect(
            codex, autocommit=True, row_factory=dict_row
        ) as conn:
            cursor = await conn.execute(
                "SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS jobs, "
                "to_regclass('sanctum_leases') IS NOT NULL AS leases, "
                "to_regclass('sanctum_queue_failures') IS NOT NULL AS failures, "
                "to_regclass('sanctum_queue_workers') IS NOT NULL AS workers, "
                "to_regclass('sanctum_invocations') IS NOT NULL AS codex"
            )
            found = await cursor.fetchone()
            if found is None or not found["jobs"]:
                return []
            params = {"task": SEGMENT_TASK, "statuses": wanted, "inv": invocation_id}
            cursor = await conn.execute(_jobs_query(found), params)
            rows = await cursor.fetchall()
            paused: list[dict[str, Any]] = []
            if "paused" in wanted and found["codex"]:
                cursor = await conn.execute(_PAUSED, params)
                paused = await cursor.fetchall()
    except psycopg.Error as exc:
        raise SealError(f"cannot list the queue: {str(exc).strip()}") from None
    jobs = [
        QueuedJob(
            job_id=int(row["id"]),
            invocation_id=str(row["lock"]),
            kind=str((row["args"] or {}).get("kind", "?")),
            queue=str(row["queue_name"]),
            status=str(row["status"]),
            attempts=_attempts(row),
            worker=row["holder"] if row["status"] == "doing" else None,
            reason=row["reason"] if row["status"] in ("failed", "aborted") else None,
        )
        for row in rows
    ]
    for row in paused:
        question = _question(str(row["metadata"]))
        if question is not None:
            kind = str((row["args"] or {}).get("kind", "?"))
            attempts = _attempts(row)
            jobs.append(
                QueuedJob(
                    job_id=int(row["id"]),
                    invocation_id=str(row["lock"]),
                    kind=kind,
                    queue=str(row["queue_name"]),
                    status="paused",
                    attempts=attempts,
                    worker=None,
                    reason=question,
                )
            )
    return jobs
