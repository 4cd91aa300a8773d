"""Drive a :class:`sanctum.api.Performance` to its end for ``run`` and ``resume``.

Two audiences: ``--json`` prints one JSON object per Omen and a final result object
for machines; otherwise :class:`sanctum.cli._view.RunView` draws for people. The exit
status follows the result: 0 done, 1 failed, 3 paused, 130 stopped by Ctrl-C.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from sanctum.cli._common import (
    EPHEMERAL_NOTE,
    EXIT_BROKEN_PIPE,
    EXIT_CTRL_C,
    EXIT_DONE,
    EXIT_FAILED,
    EXIT_PAUSED,
    print_json_line,
    printable,
)

if TYPE_CHECKING:
    from sanctum.api import Performance, RunResult
    from sanctum.cli._view import RunView

__all__ = ["perform"]

_EXIT = {"done": EXIT_DONE, "failed": EXIT_FAILED, "paused": EXIT_PAUSED}

_SIGNAL_NAMES = {2: "Ctrl-C", 15: "SIGTERM", 1: "SIGHUP"}
"""How a stop names the signal (SIGINT is Ctrl-C); the exit status is 128 + its number."""


class Stopped(KeyboardInterrupt):
    """A stop by SIGTERM or SIGHUP, handled like Ctrl-C; ``signum`` names the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_T = TypeVar("_T")


def perform(
    performance: Performance,
    *,
    modes: Sequence[str],
    json_lines: bool,
    quiet: bool = False,
) -> NoReturn:
    """Run the performance, print what it shows, and leave with its exit status.

    ``quiet`` leaves the final Aether tree out of the people view (``--quiet``).

    Raises:
        typer.Exit: Always, with 0, 1, 3 or 130.
    """
    from sanctum.api import omen_to_dict

    view: RunView | None = None
    if not json_lines:
        from sanctum.cli._view import RunView

        view = RunView(modes=modes, quiet=quiet)

    async def drive() -> RunResult:
        async for omen in performance:
            if view is not None:
                view.omen(omen)
            else:
                print_json_line(omen_to_dict(omen))
        assert performance.result is not None
        return performance.result

    try:
        result = run_interruptibly(drive)
    except BrokenPipeError:
        # the reader of stdout went away (`sanctum run ... | head -1`): stop, say so once
        _stdout_closed(performance, None)
    except KeyboardInterrupt as stop:
        if view is not None:
            view.stop()
        signum = getattr(stop, "signum", None)
        by = _SIGNAL_NAMES.get(signum, "Ctrl-C") if signum is not None else "Ctrl-C"
        code = 128 + signum if signum is not None else EXIT_CTRL_C
        if performance.codex_url == "memory:":
            typer.echo(
                f"stopped by {by}; invocation {performance.invocation_id} is {EPHEMERAL_NOTE}",
                err=True,
            )
        elif not performance.sealed:
            typer.echo(
                f"stopped by {by} before the first Seal; invocation "
                f"{performance.invocation_id} left nothing to resume, so the run must start "
                "again",
                err=True,
            )
        else:
            typer.echo(
                f"stopped by {by}; invocation {performance.invocation_id} stays resumable "
                f"from its last Seal: {_resume(performance)}",
                err=True,
            )
        raise typer.Exit(code) from None
    except BaseException:
        if view is not None:
            view.stop()
        raise
    try:
        if view is not None:
            view.finish(result)
        else:
            print_json_line(result.to_dict())
    except BrokenPipeError:
        # gone while the ending was drawn (a step's own print may have met it first)
        _stdout_closed(performance, result)
    if result.status == "failed":
        from sanctum.cli._common import is_debug

        if result.traceback and is_debug():  # the ritual code's own frames
            typer.echo(printable(result.traceback, lines=True), err=True)
        typer.echo(f"error: {printable(result.error, lines=True)}", err=True)
    elif result.status == "paused" and json_lines:
        reason = _reasons_text(result)
        if result.ephemeral:
            typer.echo(f"paused: {reason}\n{EPHEMERAL_NOTE}", err=True)
        else:
            command = printable(result.resume_command)
            if result.awaits_approval:
                typer.echo(
                    f"paused: {reason}\napprove with: {command} --approve\n"
                    f"reject with: {command} --reject --reason TEXT",
                    err=True,
                )
            else:
                typer.echo(f"paused: {reason}\nresume with: {command}", err=True)
    raise typer.Exit(_EXIT[result.status])


def _stdout_closed(performance: Performance, result: RunResult | None) -> NoReturn:
    """Say once on stderr that stdout's reader went away, then exit 141.

    Args:
        performance: The run.
        result: Its result when it ended before the pipe broke, else None (stopped).

    Raises:
        typer.Exit: Always, with :data:`EXIT_BROKEN_PIPE`.
    """
    import os
    import sys

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    ident = performance.invocation_id
    if result is not None and result.status == "done":
        typer.echo(f"stdout was closed; invocation {ident} is done", err=True)
        raise typer.Exit(EXIT_BROKEN_PIPE)
    typer.echo(
        f"stdout was closed; stopped invocation {ident}"
        + (
            f"; resume it with: {_resume(performance)}"
            if performance.codex_url != "memory:"
            else f" ({EPHEMERAL_NOTE})"
        ),
        err=True,
    )
    raise typer.Exit(EXIT_BROKEN_PIPE)


def _reasons_text(result: RunResult) -> str:
    """The pause's reason, or every sigil's (``a: ...; b: ...``) when several paused."""
    reasons = dict(result.reasons or {})
    if len(reasons) > 1:
        return "; ".join(f"{printable(k)}: {printable(v, lines=True)}" for k, v in reasons.items())
    return printable(result.reason, lines=True)


def _resume(performance: Performance) -> str:
    from sanctum.api import resume_command

    return resume_command(performance.invocation_id, performance.codex_url)


def run_interruptibly(make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run a coroutine on a fresh event loop, Ctrl-C landing only where it can be handled.

    ``asyncio.run`` turns the first Ctrl-C into cancellation of the main task, but a
    Ctrl-C that arrives while the loop is being built, after the main task finished, or
    while the loop shuts down raises ``KeyboardInterrupt`` inside asyncio's own code and
    leaves tasks or the loop half-closed (their destructors print tracebacks). Here the
    SIGINT handler only records the Ctrl-C and cancels the loop's tasks if the main one
    still runs (so a run stops at its next superstep boundary);
    the ``KeyboardInterrupt`` is raised afterwards, once the loop is closed (deferred,
    never lost). A second Ctrl-C raises at once, the way out of a shutdown that hangs.

    SIGTERM and SIGHUP are handled the same way; what is raised then is a
    :class:`Stopped` (a ``KeyboardInterrupt``) whose ``signum`` names the signal.

    Raises:
        KeyboardInterrupt: When Ctrl-C was pressed (or SIGTERM/SIGHUP arrived, as
            :class:`Stopped`) at any moment of the call.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(make())

    interrupts = 0
    stopped_by: int | None = None
    main_task: asyncio.Task[_T] | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def cancel_everything() -> None:
        assert loop is not None
        for task in asyncio.all_tasks(loop):
            task.cancel()

    def stop() -> KeyboardInterrupt:
        return (
            Stopped(stopped_by)
            if stopped_by not in (None, signal.SIGINT)
            else (KeyboardInterrupt())
        )

    def on_sigint(signum: int, _frame: object) -> None:
        nonlocal interrupts, stopped_by
        interrupts += 1
        if stopped_by is None:
            stopped_by = signum
        if interrupts > 1:
            raise stop()
        if loop is not None and main_task is not None and not main_task.done():
            # Every task, not just the main one: a stream's scheduler runs as its own
            # task, and this callback is queued (from inside a running Sigil) ahead of
            # the scheduler's step past the superstep boundary — so the next superstep
            # never starts, as the CLI promises.
            loop.call_soon_threadsafe(cancel_everything)

    async def main() -> _T:
        nonlocal main_task
        main_task = asyncio.current_task()
        if interrupts:
            raise asyncio.CancelledError
        return await make()

    # SIGTERM and SIGHUP stop the run as Ctrl-C does (exit status 128 + the signal)
    caught = [
        signal.SIGINT,
        signal.SIGTERM,
        *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []),
    ]
    previous = {signum: signal.signal(signum, on_sigint) for signum in caught}
    try:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            try:
                result = runner.run(main())
            except asyncio.CancelledError:
                if interrupts:
                    raise stop() from None
                raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
    if interrupts:  # it came after the coroutine finished: deferred, never lost
        raise stop()
    return result
