"""``sanctum worker``: run segment jobs, sweep dead workers' jobs, stop without a double run.

Avoids procrastinate's known traps (see docs/scale-out.md): every worker has a unique
name (host, pid, random); it sweeps once at start-up and then every ``sweep`` seconds
in a plain loop (no ``lock`` on the sweeper, issue #1408); segments have ``retry=0``
and no ``scheduled_at`` (issues #1543, #1599). procrastinate's own start-up prune of
"stalled" workers is switched off: it would judge every worker by *this* one's stale
limit; the sweep judges each by its own (``sanctum.queue._sweep``).

Stopping: procrastinate, asked to stop, cancels its heartbeat first and then waits for
the running jobs; a worker that took longer than the others' stale limit would be
counted dead while it still ran. So this worker handles SIGINT and SIGTERM itself:

* the first one stops fetching, keeps the worker's heartbeat going, and makes every
  running segment stop right after its next Seal (:class:`~sanctum.queue._draining.
  DrainingCodex`); each such segment is deferred again at once as a fresh job, which
  any other worker continues from that Seal. When the last has handed back, the worker
  unregisters and ``run_worker`` returns (``sanctum worker`` exits 0);
* a second one stops the process at once (exit status 128 + the signal: 130 for
  SIGINT, 143 for SIGTERM) after deleting its worker row, so the next sweep of any
  worker takes its segments over, as after a SIGKILL but without waiting ``stale``
  seconds; the superstep each was running is run again by the taker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sanctum.errors import SanctumError
from sanctum.queue._app import (
    SEGMENT_TASK,
    check_codex,
    check_url,
    fetch_source,
    make_app,
    materialise,
    open_app,
    private_folder,
    record_failure,
)
from sanctum.queue._jobs import WorkerTimings, check_queue_name, defer_again
from sanctum.queue._project import Checkout
from sanctum.queue._segment import Outcome, run_segment
from sanctum.queue._sweep import forget_worker, record_worker, sweep

__all__ = ["SegmentFailed", "run_worker", "worker_name"]

_log = logging.getLogger("sanctum.queue")

_NEVER = 10 * 365 * 86400.0
"""procrastinate's ``stalled_worker_timeout`` and heartbeat period: its start-up prune
never fires, and the one heartbeat is this module's (which goes on while stopping)."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a worker: the first hands back, a second stops at once."""
_LAST_WORDS = 1.0
"""Seconds a worker stopped at once waits to delete its worker row before exiting."""


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


def _quiet_takeovers(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Say in one line that a zombie could not finish a job another worker took over.

    A worker frozen past its stale limit comes back, meets LeaseLost and then fails to
    mark its job finished (the sweep ended that job row and gave the segment a fresh
    one); procrastinate leaves that error to the event loop. Anything else goes to the
    loop's default handler.
    """
    exc = context.get("exception")
    if exc is not None and 'not in "doing"' in str(getattr(exc, "__cause__", "")):
        print(
            "worker: a segment of this worker was taken over by another (stalled); its "
            "job is the taker's now (its segment line says what it wrote before)",
            file=sys.stderr,
            flush=True,
        )
        return
    loop.default_exception_handler(context)


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
    early_signals: list[int] | None = None,
) -> None:
    """Run segment jobs from the queue until SIGINT, SIGTERM or SIGHUP (see the module).

    The first SIGINT, SIGTERM or SIGHUP (the terminal closed) hands every running
    segment back at its next Seal and returns once they have; a second one ends the
    process at once with status 128 + the signal number (``os._exit``: the running
    segments are left to the other workers' stalled-job sweep). The handlers are
    installed before anything else; a first signal before the worker is ready (checking
    the Codex, opening the queue) ends start-up, removes the private folder, logs one
    line (``stopped by SIGTERM before it took any job``) and returns. In a thread other
    than the main one no signal is handled; cancel the task instead (its running
    segments are then aborted).

    Oracles with ``max_concurrency_global`` share PostgreSQL advisory-lock slots of the
    Codex's database with every other worker (one extra connection, opened on the first
    such call); ``max_concurrency`` bounds each endpoint within this process.

    Args:
        codex: The PostgreSQL URL of the Codex (the queue lives in its database).
        queues: Queue names to take jobs from (all when None).
        concurrency: Segments run at once by this process (at least 1).
        name: The worker's name (a unique one when None).
        timings: Heartbeat, staleness, sweep and poll periods (seconds); checked by
            :meth:`WorkerTimings.check`. This worker's ``stale`` is recorded with it:
            every sweep judges it by that limit.
        cache: A folder of this user's, mode 0700, for the stored ritual files (a
            fresh private one, removed at the end, when None).
        log: A text stream for one line per segment (stderr when None).
        project_dir: The project's folder, checked out on this machine: jobs submitted
            with ``parts_from_worker`` run the ritual file and parts found there, once
            their digests match (a job is refused, one line, when one does not).
        early_signals: Signal numbers the caller received before this was called (its
            own ``signal.signal`` handlers append to the list until this installs the
            event loop's): each is handled as soon as the loop's handlers are in.

    Raises:
        ValueError: If a timing is refused by :meth:`WorkerTimings.check`, or
            ``concurrency`` is below 1.
        SealError: If procrastinate is missing, ``codex`` is not PostgreSQL, a queue
            name is refused by ``check_queue_name``, ``cache`` is not private, or
            ``project_dir`` is not a folder.
        CodexUnavailableError: If the database server cannot be reached.
    """
    timings = timings or WorkerTimings()
    timings.check()
    for queue in queues or ():
        check_queue_name(queue)
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    check_url(codex)  # before the App and Codex parse it
    serving = _Serving(codex, queues, concurrency, name, timings, log or sys.stderr)
    loop = asyncio.get_running_loop()
    handled = _handle_signals(loop, serving.on_signal)
    try:
        for signum in list(early_signals or ()):  # received before the loop's handlers
            serving.on_signal(signum)
        if not serving.signals:
            serving.starting = asyncio.ensure_future(serving.start(cache, project_dir))
            try:
                await serving.starting
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not serving.stopped() or (task is not None and task.cancelling()):
                    raise
        if serving.stopped():  # a signal came before "ready", whatever start-up did
            which = signal.Signals(serving.first).name if serving.first else "a signal"
            serving.say(f"worker {serving.me} stopped by {which} before it took any job")
            return
        await serving.serve()
    finally:
        await serving.close()
        serving.cleanup()
        for signum in handled:
            loop.remove_signal_handler(signum)


class _Serving:
    """One worker process's state: its App, Codex, running segments and stop requests."""

    def __init__(
        self,
        codex: str,
        queues: Sequence[str] | None,
        concurrency: int,
        name: str | None,
        timings: WorkerTimings,
        out: Any,
    ) -> None:
        from sanctum.queue._draining import DrainingCodex

        self.codex = codex
        self.queues = list(queues) if queues else None
        self.concurrency = concurrency
        self.name = name
        self.me = name or worker_name()
        self.timings = timings
        self.folder: Path | None = None
        """The private folder of stored ritual files (made by :meth:`start`)."""
        self.own_folder = False
        """Whether :attr:`folder` was made here, and is removed at the end."""
        self.out = out
        self.checkout = Checkout(None)
        self.app = make_app(codex)
        self.opened = False
        """Whether the App was opened (and must be closed)."""
        self.store = DrainingCodex(codex, max_size=concurrency + 1)
        self.paths: dict[str, Path] = {}
        self.running: dict[str, asyncio.Event] = {}
        """Invocations this process runs a segment of, each with its end."""
        self.worker: Any = None
        self.signals = 0
        self.first = 0
        """The first stop signal's number (0 before any)."""
        self.ready = False
        """Whether start-up is over and jobs may be taken."""
        self.starting: asyncio.Future[None] | None = None
        self.handed = 0
        """Segments handed back since the first stop signal."""
        self.abandoning: asyncio.Future[None] | None = None

    def stopped(self) -> bool:
        """Whether a stop signal came."""
        return self.signals > 0

    def cleanup(self) -> None:
        """Remove the private folder of stored ritual files, when made here."""
        if self.own_folder and self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    # ----------------------------------------------------------------- the segment task

    async def segment(self, context: Any, **args: Any) -> str:
        """The procrastinate task: run one segment, or hand it back when stopping."""
        inv = str(args["invocation_id"])
        while inv in self.running:  # swept back while this process still runs it
            await self.running[inv].wait()
        self.running[inv] = asyncio.Event()
        began = asyncio.get_running_loop().time()
        try:
            if self.store.draining:  # fetched as the worker began to stop: untouched
                result = Outcome(inv, "handed-back", 0, 0, 0.0)
            else:
                result = await run_segment(self.store, self.me, self._ritual(args), args)
            tail = ""
            if result.outcome == "handed-back":
                job = context.job
                again = await defer_again(self.app, job.queue, args, priority=job.priority)
                tail = f" requeued={again if again is not None else '-'}"
                self.handed += 1
        except Exception as exc:
            reason = first_line(exc)
            seconds = asyncio.get_running_loop().time() - began
            self.say(f"{Outcome(inv, 'failed', 0, 0, seconds).line(self.me)} error={reason}")
            with contextlib.suppress(Exception):
                await record_failure(self.app, int(context.job.id), reason)
            raise SegmentFailed(reason) from exc
        finally:
            self.running.pop(inv).set()
        self.say(result.line(self.me) + tail)
        return result.outcome

    def _ritual(self, args: dict[str, Any]) -> Any:
        """The ritual file a job runs (its awaitable fetch is done by :meth:`_fetch`)."""
        project = args.get("project")
        if project is not None:
            return self.checkout.ritual(project)
        return self.paths[str(args["digest"])]

    async def _fetch(self, args: dict[str, Any]) -> None:
        digest = str(args["digest"])
        if args.get("project") is None and digest not in self.paths:
            assert self.folder is not None  # made by start(), before any job
            file_name, source = await fetch_source(self.app, digest)
            self.paths[digest] = materialise(file_name, source, self.folder)

    async def task(self, context: Any, **args: Any) -> str:
        """What procrastinate calls: the stored ritual fetched, then :meth:`segment`."""
        if not self.store.draining:
            try:
                await self._fetch(args)
            except Exception as exc:
                reason = first_line(exc)
                inv = str(args["invocation_id"])
                self.say(f"{Outcome(inv, 'failed', 0, 0, 0.0).line(self.me)} error={reason}")
                with contextlib.suppress(Exception):
                    await record_failure(self.app, int(context.job.id), reason)
                raise SegmentFailed(reason) from exc
        return await self.segment(context, **args)

    # ------------------------------------------------------------------------- signals

    def on_signal(self, signum: int) -> None:
        """First SIGINT/SIGTERM/SIGHUP: hand back at the next Seals (before "ready":
        end start-up); second: stop at once."""
        self.signals += 1
        if self.signals == 1:
            self.first = signum
            self.store.drain()
            if not self.ready:
                if self.starting is not None:
                    self.starting.cancel()  # checked again once start-up returns
                return
            count = len(self.running)
            self.say(
                f"worker {self.me} stopping: {count} running invocation(s) hand back at "
                "their next Seal, for any worker to go on; Ctrl-C again to stop at once"
            )
            if self.worker is not None:
                self.worker.stop()
            return
        self.say(
            f"worker {self.me} stopped at once: {len(self.running)} running invocation(s) "
            "left to the other workers' stalled-job sweep (the superstep in flight runs "
            "again)"
        )
        code = 128 + signum
        asyncio.get_running_loop().call_later(_LAST_WORDS * 2, self._exit, code)
        self.abandoning = asyncio.ensure_future(self._abandon(code))

    async def _abandon(self, code: int) -> None:
        """Delete this worker's row (so the sweep takes its jobs now), then exit."""
        worker_id = getattr(self.worker, "worker_id", None)
        if worker_id is not None:
            with contextlib.suppress(BaseException):
                async with asyncio.timeout(_LAST_WORDS):
                    await forget_worker(self.app, worker_id)
        self._exit(code)

    def _exit(self, code: int) -> None:
        with contextlib.suppress(Exception):
            self.cleanup()
            sys.stderr.flush()
            self.out.flush()
        os._exit(code)

    # ---------------------------------------------------------------------- the loops

    async def _sweeping(self) -> None:
        while True:
            try:
                for old, again in await sweep(self.app, self.timings.stale):
                    shown = again if again is not None else "-"
                    self.say(f"takeover worker={self.me} job={old} requeued={shown}")
            except Exception as exc:
                if "deadlock detected" in str(exc):  # with a foreign sweeper: next round
                    _log.debug("stalled-job sweep met a deadlock; it sweeps again next round")
                else:
                    _log.warning("stalled-job sweep failed: %s", first_line(exc))
            await asyncio.sleep(self.timings.sweep)

    async def _beating(self, worker: Any) -> None:
        """Record this worker's timings once registered, then beat every ``heartbeat``
        seconds until it unregisters (procrastinate's own beat, which would end as
        soon as the worker is asked to stop, is switched off)."""
        while worker.worker_id is None:  # noqa: ASYNC110 — procrastinate sets no event
            await asyncio.sleep(0.01)
        try:
            await record_worker(self.app, worker.worker_id, self.me, self.timings)
        except Exception as exc:
            _log.warning("cannot record the worker's timings: %s", exc)
        while True:
            await asyncio.sleep(self.timings.heartbeat)
            worker_id = worker.worker_id
            if worker_id is None:
                return
            try:
                await self.app.job_manager.update_heartbeat(worker_id)
            except Exception as exc:
                _log.warning("heartbeat failed: %s", exc)

    async def _run_once(self) -> None:
        from procrastinate.worker import Worker

        worker: Any = Worker(
            self.app,
            queues=self.queues,
            name=self.me,
            concurrency=self.concurrency,
            fetch_job_polling_interval=self.timings.poll,
            install_signal_handlers=False,
            update_heartbeat_interval=_NEVER,
            stalled_worker_timeout=_NEVER,
        )
        self.worker = worker
        beating = asyncio.create_task(self._beating(worker))
        try:
            await worker.run()
        finally:
            beating.cancel()
            with contextlib.suppress(BaseException):
                await beating

    async def _work(self) -> None:
        """Run procrastinate's worker; rejoin under a new name when counted dead."""
        while not self.store.draining:
            try:
                await self._run_once()
                return
            except Exception as exc:
                if "procrastinate_jobs_worker_id_fkey" not in str(exc.__cause__):
                    raise
                old = self.me
                self.me = (
                    worker_name() if self.name is None else f"{self.name}-{uuid.uuid4().hex[:4]}"
                )
                self.say(
                    f"worker {old} was silent over {self.timings.stale:g} s and counted dead "
                    f"by the others; it rejoins as {self.me}"
                )

    async def start(self, cache: Path | None, project_dir: Path | None) -> None:
        """Check the Codex, make the private folder, open the App; then "ready".

        Raises:
            SealError: As :func:`run_worker`.
            CodexUnavailableError: If the database server cannot be reached.
        """
        await check_codex(self.codex)
        self.checkout = Checkout(project_dir)
        self.own_folder = cache is None
        self.folder = private_folder(cache)
        await self.store.latest_seal_id("sanctum-worker-start")  # migrates the Codex tables
        self.opened = True
        await open_app(self.app, self.codex)
        self.app.task(name=SEGMENT_TASK, retry=0, pass_context=True)(self.task)

    async def close(self) -> None:
        """Close the App (when opened) and the Codex."""
        if self.opened:
            with contextlib.suppress(Exception):
                await self.app.close_async()
        with contextlib.suppress(Exception):
            await self.store.aclose()

    async def serve(self) -> None:
        """Say "ready", then run until stopped (see the module)."""
        from sanctum.oracle.limits import shared_slots
        from sanctum.queue._slots import PostgresSlots

        quiet = _NoSegmentTracebacks()
        logging.getLogger("procrastinate.worker").addFilter(quiet)
        served = ", ".join(self.queues) if self.queues else "all"
        where = self.checkout.folder
        project = f", project {where}" if where is not None else ""
        self.ready = True
        self.say(
            f"worker {self.me} ready: queues {served}, concurrency {self.concurrency}{project}"
        )
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(_quiet_takeovers)
        sweeper = asyncio.create_task(self._sweeping())
        slots = PostgresSlots(self.codex)
        try:
            with shared_slots(slots):  # the jobs' tasks, created inside, inherit it
                await self._work()
        finally:
            logging.getLogger("procrastinate.worker").removeFilter(quiet)
            sweeper.cancel()
            with contextlib.suppress(BaseException):
                await sweeper
            await slots.aclose()
        if self.signals:
            self.say(f"worker {self.me} stopped ({self.handed} invocation(s) handed back)")


def _handle_signals(
    loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]
) -> list[signal.Signals]:
    """Route SIGINT, SIGTERM and SIGHUP (a closed terminal) to ``handler(signum)``;
    the signals handled (none off the main thread, or where the loop cannot)."""
    handled: list[signal.Signals] = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, handler, int(signum))
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        handled.append(signum)
    return handled
