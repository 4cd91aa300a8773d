"""Deferring segments and listing them: what ``sanctum submit``, ``resume --executor
queue`` and ``sanctum queue`` do."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sanctum.errors import RitualFileError, SealError
from sanctum.queue._app import (
    SEGMENT_TASK,
    check_codex,
    fetch_source,
    make_app,
    materialise,
    open_app,
)
from sanctum.queue._project import PROJECT_KEY

__all__ = [
    "DEFAULT_QUEUE",
    "QueuedJob",
    "Resumed",
    "WorkerTimings",
    "enqueue_resume",
    "list_jobs",
    "refuse_uncarried",
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
    """The outcome of queueing a resume: the job id, or ``already`` when a start or
    resume of the Invocation is queued or running (this one was refused, not queued)."""

    invocation_id: str
    job_id: int | None
    already: bool


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """One segment job: ``status`` is procrastinate's (todo, doing, succeeded, failed,
    cancelled, aborted); ``worker`` the lease holder while it runs, else None;
    ``reason`` the first line of the error of a failed job, else None."""

    job_id: int
    invocation_id: str
    kind: str
    queue: str
    status: str
    attempts: int
    worker: str | None
    reason: str | None = None


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
        RitualInputError: If an input does not fit the ritual.
        SealError: If ``codex`` is not PostgreSQL, the ritual needs files a worker would
            not have (see :func:`refuse_uncarried`) and ``parts_from_worker`` is False,
            a part lies outside the project folder, or procrastinate is missing.
        CodexUnavailableError: If the database server cannot be reached.
    """
    from sanctum.queue._app import store_source
    from sanctum.queue._project import manifest
    from sanctum.ritualfile import load

    file = load(ritual)
    extra: dict[str, Any] = {}
    if parts_from_worker:
        extra["project"] = manifest(file)
    else:
        refuse_uncarried(file)
    bound = [file.bind_inputs(dict(given)) for given in inputs]
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
            await _defer(app, ident, queue, args, file.digest)
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
    ``updates`` records it, so a retried segment never applies the updates twice. A
    resume is refused (``already``) while any segment of the Invocation is queued or
    running: it would find nothing to resume and its updates would be lost.

    Args:
        invocation_id: The Invocation (paused, or stopped).
        updates: Values merged into the Aether first (answers to an interrupt).
        codex: The PostgreSQL URL of the Codex.
        queue: The queue name.
        token: The idempotency token of this resume.

    Returns:
        A :class:`Resumed`; ``already`` when a segment of it is queued or running.

    Raises:
        SealError: If the Invocation is unknown, was not submitted to a queue, or
            ``codex`` is not PostgreSQL.
        CodexUnavailableError: If the database server cannot be reached.
        RitualInputError: If an update does not fit the ritual.
    """
    procrastinate = _procrastinate_exceptions()
    from sanctum.codex.postgres import PostgresCodex
    from sanctum.ritualfile import load

    await check_codex(codex)
    if await list_jobs(codex=codex, statuses=("todo", "doing"), invocation_id=invocation_id):
        return Resumed(invocation_id=invocation_id, job_id=None, already=True)
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
        project = head.metadata.get(PROJECT_KEY)
        args: dict[str, Any] = {"kind": "resume", "token": token or uuid.uuid4().hex}
        with tempfile.TemporaryDirectory(prefix="sanctum-resume-") as private:
            path = materialise(name, source, Path(private))
            try:
                args["updates"] = load(path).bind_updates(dict(updates or {}))
            except RitualFileError:
                if not isinstance(project, Mapping):
                    raise
                # Its circle files are in the workers' checkout only: the worker binds.
                args.update(updates=dict(updates or {}), bind=True)
        if isinstance(project, Mapping):  # run from the same checked files again
            args["project"] = dict(project)
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
    *,
    codex: str,
    statuses: Iterable[str] = ("todo", "doing", "failed"),
    invocation_id: str | None = None,
) -> list[QueuedJob]:
    """The segment jobs in the given statuses, oldest first, with their lease holders
    and, for failed ones, why.

    Reads only: on a database no submit and no worker has used yet (no queue tables),
    the list is empty and nothing is created.

    Args:
        codex: The PostgreSQL URL of the Codex.
        statuses: procrastinate statuses to list.
        invocation_id: Only this Invocation's jobs (all when None).

    Raises:
        SealError: If ``codex`` is not PostgreSQL or the database cannot be read.
        CodexUnavailableError: If the database server cannot be reached.
    """
    import psycopg
    from psycopg.rows import dict_row

    await check_codex(codex)
    try:
        async with await psycopg.AsyncConnection.connect(
            codex, autocommit=True, row_factory=dict_row
        ) as conn:
            cursor = await conn.execute(
                "SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS jobs, "
                "to_regclass('sanctum_leases') IS NOT NULL AS leases, "
                "to_regclass('sanctum_queue_failures') IS NOT NULL AS failures"
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
            reason, failures = (
                ("f.reason", "LEFT JOIN sanctum_queue_failures AS f ON f.job_id = j.id ")
                if found["failures"]
                else ("NULL AS reason", "")
            )
            cursor = await conn.execute(
                "SELECT j.id, j.lock, j.args, j.queue_name, j.status::text AS status, "
                f"j.attempts, {holder}, {reason} FROM procrastinate_jobs AS j {leases}"
                f"{failures}WHERE j.task_name = %(task)s "
                "AND j.status::text = ANY(%(statuses)s) "
                "AND (%(inv)s::text IS NULL OR j.lock = %(inv)s::text) ORDER BY j.id",
                {"task": SEGMENT_TASK, "statuses": list(statuses), "inv": invocation_id},
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
            reason=row["reason"] if row["status"] == "failed" else None,
        )
        for row in rows
    ]
