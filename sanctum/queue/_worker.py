"""``sanctum worker``: run segment jobs, and sweep dead workers' jobs back into the queue.

Avoids procrastinate's known traps (see docs/scale-out.md): every worker has a unique
name (host, pid, random); it sweeps once at start-up and then every ``sweep`` seconds
in a plain loop (no ``lock`` on the sweeper, issue #1408); segments have ``retry=0``
and no ``scheduled_at`` (issues #1543, #1599).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sanctum.errors import SanctumError
from sanctum.queue._app import (
    SEGMENT_TASK,
    check_codex,
    fetch_source,
    make_app,
    materialise,
    open_app,
    private_folder,
    record_failure,
)
from sanctum.queue._jobs import WorkerTimings
from sanctum.queue._project import Checkout
from sanctum.queue._segment import Outcome, run_segment

__all__ = ["SegmentFailed", "run_worker", "sweep", "worker_name"]

_log = logging.getLogger("sanctum.queue")


class SegmentFailed(SanctumError):
    """A segment job failed; the worker logged one line and kept the reason.

    Raised out of the task so procrastinate marks the job ``failed``; its traceback is
    kept out of the worker log (see :class:`_NoSegmentTracebacks`).
    """


class _NoSegmentTracebacks(logging.Filter):
    """Drop procrastinate's "job ended with status: Error" record (with its traceback)
    for a :class:`SegmentFailed`: the worker already logged the failure in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        return not (info and isinstance(info[1], SegmentFailed))


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message`` of an error, for one log line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def worker_name() -> str:
    """A name no other worker process has: ``host-pid-random``."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


async def sweep(app: Any, stale: float) -> int:
    """Put the segments of workers silent for ``stale`` seconds back in the queue.

    Returns:
        How many were re-queued.
    """
    manager = app.job_manager
    count = 0
    for job in await manager.get_stalled_jobs(seconds_since_heartbeat=stale):
        try:
            await manager.retry_job(job)
            count += 1
        except Exception as exc:  # e.g. a resume of the same invocation waits already
            _log.warning("cannot re-queue stalled job %s: %s", job.id, exc)
    with contextlib.suppress(Exception):
        await manager.prune_stalled_workers(seconds_since_heartbeat=stale)
    return count


def _quiet_takeovers(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Say in one line that a zombie could not finish a job another worker finished.

    A worker frozen past the stall timeout comes back, meets LeaseLost and then fails
    to mark its job finished (the taker did); procrastinate leaves that error to the
    event loop. Anything else goes to the loop's default handler.
    """
    exc = context.get("exception")
    if exc is not None and 'not in "doing"' in str(getattr(exc, "__cause__", "")):
        print(
            "worker: a segment of this worker was taken over by another (stalled); "
            "it wrote nothing",
            file=sys.stderr,
            flush=True,
        )
        return
    loop.default_exception_handler(context)


async def _sweeping(app: Any, timings: WorkerTimings) -> None:
    while True:
        try:
            found = await sweep(app, timings.stale)
            if found:
                _log.info("re-queued %d stalled segment(s)", found)
        except Exception as exc:
            _log.warning("stalled-job sweep failed: %s", exc)
        await asyncio.sleep(timings.sweep)


async def run_worker(
    codex: str,
    *,
    queues: Sequence[str] | None = None,
    concurrency: int = 4,
    name: str | None = None,
    timings: WorkerTimings | None = None,
    cache: Path | None = None,
    log: Any = None,
    project_dir: Path | None = None,
) -> None:
    """Run segment jobs from the queue until cancelled (SIGINT/SIGTERM end it cleanly).

    Oracles with ``max_concurrency_global`` share PostgreSQL advisory-lock slots of the
    Codex's database with every other worker (one extra connection, opened on the first
    such call); ``max_concurrency`` bounds each endpoint within this process.

    Args:
        codex: The PostgreSQL URL of the Codex (the queue lives in its database).
        queues: Queue names to take jobs from (all when None).
        concurrency: Segments run at once by this process.
        name: The worker's name (a unique one when None).
        timings: Heartbeat, staleness, sweep and poll periods (seconds).
        cache: A folder of this user's, mode 0700, for the stored ritual files (a
            fresh private one, removed at the end, when None).
        log: A text stream for one line per segment (stderr when None).
        project_dir: The project's folder, checked out on this machine: jobs submitted
            with ``parts_from_worker`` run the ritual file and parts found there, once
            their digests match (a job is refused, one line, when one does not).

    Raises:
        SealError: If procrastinate is missing, ``codex`` is not PostgreSQL,
            ``cache`` is not private, or ``project_dir`` is not a folder.
        CodexUnavailableError: If the database server cannot be reached.
    """

    timings = timings or WorkerTimings()
    me = name or worker_name()
    out = log or sys.stderr
    await check_codex(codex)
    checkout = Checkout(project_dir)
    folder = private_folder(cache)
    try:
        await _serve(codex, queues, concurrency, name, me, timings, folder, out, checkout)
    finally:
        if cache is None:
            shutil.rmtree(folder, ignore_errors=True)


async def _serve(
    codex: str,
    queues: Sequence[str] | None,
    concurrency: int,
    name: str | None,
    me: str,
    timings: WorkerTimings,
    folder: Path,
    out: Any,
    checkout: Checkout,
) -> None:
    from sanctum.codex.postgres import PostgresCodex
    from sanctum.oracle.limits import shared_slots
    from sanctum.queue._slots import PostgresSlots

    app = make_app(codex)
    store = PostgresCodex(codex, max_size=concurrency + 1)
    await store.latest_seal_id("sanctum-worker-start")  # migrates the Codex tables
    await open_app(app, codex)
    paths: dict[str, Path] = {}

    running: set[str] = set()

    async def segment(context: Any, **args: Any) -> str:
        digest, inv = str(args["digest"]), str(args["invocation_id"])
        if inv in running:  # swept back while this process still runs it: it goes on
            print(Outcome(inv, "skipped", 0, 0, 0.0).line(me), file=out, flush=True)
            return "skipped"
        running.add(inv)
        began = asyncio.get_running_loop().time()
        try:
            project = args.get("project")
            if project is not None:
                path = checkout.ritual(project)
            else:
                if digest not in paths:
                    file_name, source = await fetch_source(app, digest)
                    paths[digest] = materialise(file_name, source, folder)
                path = paths[digest]
            result = await run_segment(store, me, path, args)
        except Exception as exc:
            reason = first_line(exc)
            seconds = asyncio.get_running_loop().time() - began
            line = Outcome(inv, "failed", 0, 0, seconds).line(me)
            print(f"{line} error={reason}", file=out, flush=True)
            with contextlib.suppress(Exception):
                await record_failure(app, int(context.job.id), reason)
            raise SegmentFailed(reason) from exc
        finally:
            running.discard(inv)
        print(result.line(me), file=out, flush=True)
        return result.outcome

    app.task(name=SEGMENT_TASK, retry=0, pass_context=True)(segment)
    quiet = _NoSegmentTracebacks()
    logging.getLogger("procrastinate.worker").addFilter(quiet)
    served = ", ".join(queues) if queues else "all"
    project = f", project {checkout.folder}" if checkout.folder is not None else ""
    print(
        f"worker {me} ready: queues {served}, concurrency {concurrency}{project}",
        file=out,
        flush=True,
    )
    asyncio.get_running_loop().set_exception_handler(_quiet_takeovers)
    sweeper = asyncio.create_task(_sweeping(app, timings))
    slots = PostgresSlots(codex)
    try:
        with shared_slots(slots):  # the jobs' tasks, created inside, inherit it
            while True:
                try:
                    await app.run_worker_async(
                        queues=list(queues) if queues else None,
                        name=me,
                        concurrency=concurrency,
                        update_heartbeat_interval=timings.heartbeat,
                        stalled_worker_timeout=timings.stale,
                        fetch_job_polling_interval=timings.poll,
                        install_signal_handlers=True,
                    )
                    break
                except Exception as exc:
                    if "procrastinate_jobs_worker_id_fkey" not in str(exc.__cause__):
                        raise
                    old = me
                    me = worker_name() if name is None else f"{name}-{uuid.uuid4().hex[:4]}"
                    print(
                        f"worker {old} was silent over {timings.stale:g} s and counted dead by "
                        f"the others; it rejoins as {me}",
                        file=out,
                        flush=True,
                    )
    finally:
        logging.getLogger("procrastinate.worker").removeFilter(quiet)
        sweeper.cancel()
        with contextlib.suppress(BaseException):
            await sweeper
        await slots.aclose()
        await app.close_async()
        await store.aclose()
