"""Sharing invocations out through a PostgreSQL queue: submit, work, resume, list.

Thin, synchronous doors onto :mod:`sanctum.queue` (the ``queue`` extra, procrastinate),
imported only when called, so ``import sanctum.api`` never loads procrastinate.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from sanctum.queue import QueuedJob, Resumed

__all__ = ["queue_jobs", "queue_resume", "submit", "work"]


def submit(
    ritual: str | Path,
    inputs: Sequence[Mapping[str, Any]],
    *,
    codex: str,
    queue: str = "sanctum",
    parts_from_worker: bool = False,
) -> list[str]:
    """Store the ritual in the Codex and queue one Invocation per input mapping.

    Every input is bound (checked against the ritual's ``inputs:``) before anything is
    queued, and all that do not fit are reported together, as :func:`run_batch` does:
    one ``path:line: reason`` line each for a :class:`BatchLine` from
    :func:`read_batch`, ``input N: reason`` otherwise.

    Args:
        ritual: The ritual file (YAML).
        inputs: One mapping of input values per Invocation.
        codex: The PostgreSQL URL of the Codex.
        queue: The queue name.
        parts_from_worker: The ritual's parts (Python modules, spell folders, circle
            files) come from each worker's ``project_dir`` checkout; the jobs record
            their sha256 (``{project path: "sha256:<hex>"}``) and a worker refuses a
            job whose files differ.

    Returns:
        The invocation ids, in input order.

    Raises:
        RitualFileError: If the ritual file is missing or malformed.
        RitualInputError: If inputs do not fit (nothing is queued), every one listed.
        SealError: If ``queue`` is empty, longer than 128 characters or holds a
            control character, the queue extra is missing, ``codex`` is not PostgreSQL, the
            ritual needs files beside it a worker would not have (Python modules,
            spell folders, circle files) and ``parts_from_worker`` is False, or a
            part lies outside the ritual's project folder.
        CodexUnavailableError: If the database server cannot be reached.
    """
    from sanctum.api._batch import _bind_all
    from sanctum.queue import check_queue_name
    from sanctum.queue import submit as queue_submit
    from sanctum.ritualfile import load

    check_queue_name(queue)
    _bind_all(load(ritual), inputs)  # every misfit at once, at its file:line
    return asyncio.run(
        queue_submit(ritual, inputs, codex=codex, queue=queue, parts_from_worker=parts_from_worker)
    )


def work(
    codex: str,
    *,
    queues: Sequence[str] | None = None,
    concurrency: int = 4,
    name: str | None = None,
    timings: tuple[float, float, float, float] | None = None,
    log: TextIO | None = None,
    project_dir: str | Path | None = None,
) -> None:
    """Run queued segments until stopped by SIGINT, SIGTERM or SIGHUP.

    The first signal hands every running invocation back at its next Seal (the
    superstep in flight completes and is sealed; a fresh job lets any worker go on at
    once) and returns once all have; a second one ends the process at once with
    status 128 + the signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), leaving
    its running invocations to the other workers' stalled-job sweep. The signals are
    caught from this call's first line (on the main thread): one that arrives while
    the worker starts up stops it before it takes any job, and this returns.

    Args:
        codex: The PostgreSQL URL of the Codex.
        queues: Queue names to serve (all when None).
        concurrency: Segments run at once.
        name: A unique worker name (one is made when None).
        timings: ``(heartbeat, stale, sweep, poll)`` seconds; production defaults
            ``(10, 60, 10, 5)`` when None. Each above 0, and ``stale`` more than twice
            ``heartbeat``. This worker's ``stale`` is recorded with it, so the other
            workers' sweeps judge it by its own limit, whatever theirs.
        log: Where the one-line-per-segment log goes (stderr when None); a failed
            segment is one line ending ``error=<first line of the error>``.
        project_dir: The project's folder on this machine, for rituals submitted with
            ``parts_from_worker`` (their files are taken from it once their sha256
            match; a job is refused with one line when one does not).

    Oracles' ``max_concurrency`` bounds calls per endpoint in this worker;
    ``max_concurrency_global`` across every worker of the Codex (advisory locks).

    Raises:
        ValueError: If a timing is not a number of seconds above 0, ``stale`` is not
            more than twice ``heartbeat``, or ``concurrency`` is below 1.
        SealError: If the queue extra is missing, ``codex`` is not PostgreSQL, a queue
            name is empty (or over 128 characters), or ``project_dir`` is not a folder.
        CodexUnavailableError: If the database server cannot be reached.
    """
    early: list[int] = []
    previous = _record_signals(early)  # before anything slow: the imports, the loop
    try:
        from sanctum.queue import WorkerTimings, run_worker

        chosen = WorkerTimings(*timings) if timings is not None else WorkerTimings()
        asyncio.run(
            run_worker(
                codex,
                queues=queues,
                concurrency=concurrency,
                name=name,
                timings=chosen,
                log=log,
                project_dir=Path(project_dir) if project_dir is not None else None,
                early_signals=early,
            )
        )
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _record_signals(into: list[int]) -> dict[int, Any]:
    """Append every SIGINT, SIGTERM and SIGHUP to ``into`` instead of acting on it
    (until the worker's event loop installs its own handlers); the previous handlers,
    by signal (none off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def record(signum: int, _frame: object) -> None:
        into.append(signum)

    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        previous[signum] = signal.signal(signum, record)
    return previous


def queue_resume(
    invocation_id: str,
    updates: Mapping[str, Any] | None = None,
    *,
    codex: str,
    queue: str | None = None,
    token: str | None = None,
) -> Resumed:
    """Queue a resume of a submitted Invocation; any worker of its queue may run it.

    ``queue`` None sends the resume to the Invocation's own queue: the one it was
    submitted to, as its head Seal (checkpoint) records it (``sanctum`` when none is
    recorded). Name another to move it; a worker must serve that queue.

    ``token`` makes the resume idempotent (a fresh one when None): a retried segment
    never applies ``updates`` twice. The checks and the defer are one transaction under
    the Invocation's advisory lock, so of two resumes sent together one is refused.

    Returns:
        A Resumed: the job id and the queue it went to (``already`` when a start or
        resume of the Invocation is queued or running: nothing was queued, the caller
        should wait and resume again).

    Raises:
        SealError: If the Invocation is unknown (the message names the closest known
            id), done (nothing would run), not submitted to this queue, ``queue`` is no
            usable queue name, or ``codex`` is not PostgreSQL.
        CodexUnavailableError: If the database server cannot be reached.
        RitualInputError: If an update does not fit the ritual.
    """
    from sanctum.queue import enqueue_resume

    return asyncio.run(
        enqueue_resume(invocation_id, updates, codex=codex, queue=queue, token=token)
    )


def queue_jobs(
    *, codex: str, statuses: Sequence[str] = ("todo", "doing", "paused", "failed")
) -> list[QueuedJob]:
    """The queued, running, paused and failed segments (with the worker running each,
    why each failed or aborted one ended, and each paused one's question).

    Args:
        codex: The PostgreSQL URL of the Codex.
        statuses: Some of ``todo``, ``doing``, ``paused`` (an invocation waiting for a
            resume: it holds no job), ``failed``, ``succeeded``, ``aborted`` (taken over
            from a dead worker), ``cancelled``.

    Raises:
        ValueError: If a status is none of those.
        SealError: If ``codex`` is not PostgreSQL or the queue cannot be read.
        CodexUnavailableError: If the database server cannot be reached.
    """
    from sanctum.queue import list_jobs

    return asyncio.run(list_jobs(codex=codex, statuses=statuses))
