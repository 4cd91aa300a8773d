"""Queueing a resume: checked against the queue and the Codex, then deferred, atomically.

What ``sanctum resume --executor queue`` does. Under a transaction-scoped advisory lock
of the Invocation (:func:`resume_key`), in one transaction: no segment of the
Invocation may be queued or running, its head Seal in the Codex must be one a resume
continues (paused, stopped, failed — not done, not unknown), and only then is the
resume deferred. Two resumes sent together are thereby serialised: the second finds
the first queued (or running) and is refused, never accepted to be skipped later with
its updates lost. The resume goes to the Invocation's own queue (the one it was
submitted to, recorded on its Seals) unless another is named. A worker adds a segment
job only while one of the Invocation is running (a hand-back, a takeover), so the
check cannot miss one.
"""

from __future__ import annotations

import difflib
import hashlib
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sanctum.errors import RitualFileError, SealError
from sanctum.queue._app import (
    SEGMENT_TASK,
    _location,
    check_codex,
    fetch_source,
    make_app,
    materialise,
    open_app,
)
from sanctum.queue._jobs import (
    DEFAULT_QUEUE,
    Resumed,
    check_queue_name,
    defer_segment,
    resting,
)
from sanctum.queue._project import PROJECT_KEY
from sanctum.queue._segment import QUEUED_KEY, state_of

__all__ = ["enqueue_resume", "own_queue", "resume_key"]

_KNOWN = 2000
"""Most recent invocations an unknown id is compared with (for "did you mean")."""


def resume_key(invocation_id: str) -> int:
    """The advisory-lock key (a signed 64-bit int) serialising resumes of an Invocation."""
    digest = hashlib.sha256(f"sanctum queued resume\0{invocation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


async def _busy(conn: Any, invocation_id: str) -> bool:
    """Whether a segment of the Invocation is queued or running."""
    cursor = await conn.execute(
        "SELECT 1 FROM procrastinate_jobs WHERE lock = %s AND task_name = %s "
        "AND status IN ('todo', 'doing') LIMIT 1",
        (invocation_id, SEGMENT_TASK),
    )
    return await cursor.fetchone() is not None


async def _unknown(store: Any, invocation_id: str, codex: str) -> SealError:
    """The error for an id the Codex does not hold, with the closest known id."""
    try:
        known = [summary.invocation_id for summary in await store.invocations(_KNOWN)]
    except Exception:  # the hint is a courtesy; the refusal stands without it
        known = []
    close = difflib.get_close_matches(invocation_id, known, n=1, cutoff=0.7)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return SealError(
        f"unknown invocation {invocation_id!r}: the codex at {_location(codex)} holds no "
        f"invocation of that id{hint} (list them with `sanctum invocations --codex URL`)",
        invocation_id=invocation_id,
    )


def _refuse(head: Any, invocation_id: str) -> None:
    """Refuse a head Seal no resume continues: a finished Invocation.

    Raises:
        SealError: If every branch of ``head`` reached END.
    """
    if state_of(head) == "done":
        raise SealError(
            f"invocation {invocation_id!r} is done (its last seal {head.seal_id} reached END "
            f"at superstep {head.superstep}); nothing was queued, and its history stays as "
            "it is. To run part of it again, branch from one of its seals with `sanctum "
            "resume --seal SEAL_ID` here (see `sanctum seals --invocation ID`)",
            invocation_id=invocation_id,
            seal_id=head.seal_id,
        )


async def enqueue_resume(
    invocation_id: str,
    updates: Mapping[str, Any] | None = None,
    *,
    codex: str,
    queue: str | None = None,
    token: str | None = None,
) -> Resumed:
    """Defer a resume segment of a submitted Invocation; any worker may run it.

    The segment carries ``token`` (a fresh one when omitted) and the Seal that applies
    ``updates`` records it, so a retried segment never applies the updates twice. The
    checks and the defer are one transaction under the Invocation's advisory lock (see
    the module docstring): a resume is refused (``already``) while any segment of the
    Invocation is queued or running, and refused with an error when the Invocation is
    done or unknown — in neither case would it run, and its updates would be lost.

    Args:
        invocation_id: The Invocation (paused, stopped or failed).
        updates: Values merged into the Aether first (answers to an interrupt).
        codex: The PostgreSQL URL of the Codex.
        queue: The queue to defer the resume into; None: the Invocation's own, the
            queue its head Seal records (``"queued": {"queue": ...}``), else
            ``sanctum``. A worker serving only that queue then runs it.
        token: The idempotency token of this resume.

    Returns:
        A :class:`Resumed`; ``already`` when a segment of it is queued or running.

    Raises:
        SealError: If the Invocation is unknown to the Codex (naming the closest known
            id), done, was not submitted through a queue, ``queue`` is no usable queue
            name, or ``codex`` is not PostgreSQL.
        CodexUnavailableError: If the database server cannot be reached.
        RitualInputError: If an update does not fit the ritual.
    """
    from sanctum.codex.postgres import PostgresCodex

    if queue is not None:
        check_queue_name(queue)
    await check_codex(codex)
    store = PostgresCodex(codex)
    app = make_app(codex)
    try:
        await open_app(app, codex)
        try:
            async with app.connector.pool.connection() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (resume_key(invocation_id),))
                if await _busy(conn, invocation_id):
                    return Resumed(invocation_id=invocation_id, job_id=None, already=True)
                head = await store.get(invocation_id)
                if head is None:
                    raise await _unknown(store, invocation_id, codex)
                _refuse(head, invocation_id)
                args = await _resume_args(app, head, invocation_id, updates, token)
                chosen = queue if queue is not None else own_queue(head)
                job_id = await defer_segment(app, invocation_id, chosen, args, connection=conn)
        finally:
            await app.close_async()
    finally:
        await store.aclose()
    return Resumed(invocation_id=invocation_id, job_id=job_id, already=False, queue=chosen)


def own_queue(head: Any) -> str:
    """The queue an Invocation was submitted to, as its head Seal (checkpoint) records
    it (``metadata["queued"]["queue"]``); ``sanctum`` when it records none."""
    origin = head.metadata.get(QUEUED_KEY)
    name = origin.get("queue") if isinstance(origin, Mapping) else None
    return name if isinstance(name, str) and name.strip() else DEFAULT_QUEUE


async def _resume_args(
    app: Any,
    head: Any,
    invocation_id: str,
    updates: Mapping[str, Any] | None,
    token: str | None,
) -> dict[str, Any]:
    """The resume job's arguments: the ritual's digest, token, bound updates, project.

    Raises:
        SealError: If the head names no ritual, or no ritual of its digest was stored.
        RitualInputError: If an update does not fit the ritual.
    """
    from sanctum.ritualfile import load

    record = head.metadata.get("ritual")
    digest = record.get("sha256") if isinstance(record, Mapping) else None
    if not isinstance(digest, str):
        raise SealError(
            f"invocation {invocation_id!r} has no seal that names its ritual, so no worker "
            "could run it; queue a resume only for an invocation started by `sanctum "
            "submit` (resume this one here, without --executor queue)",
            invocation_id=invocation_id,
        )
    name, source = await fetch_source(app, digest)
    project = head.metadata.get(PROJECT_KEY)
    args: dict[str, Any] = {"digest": digest, "kind": "resume", "token": token or uuid.uuid4().hex}
    with tempfile.TemporaryDirectory(prefix="sanctum-resume-") as private:
        path = materialise(name, source, Path(private))
        try:
            loaded = load(path)
            args["updates"] = resting(loaded.secrets, loaded.bind_updates(dict(updates or {})))
        except RitualFileError:
            if not isinstance(project, Mapping):
                raise
            # Its circle files are in the workers' checkout only: the worker binds.
            args.update(updates=dict(updates or {}), bind=True)
    if isinstance(project, Mapping):  # run from the same checked files again
        args["project"] = dict(project)
    return args
