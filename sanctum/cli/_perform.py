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
    except KeyboardInterrupt:
        if view is not None:
            view.stop()
        if performance.codex_url == "memory:":
            typer.echo(
                f"stopped by Ctrl-C; invocation {performance.invocation_id} is {EPHEMERAL_NOTE}",
                err=True,
            )
        elif not performance.sealed:
            typer.echo(
                f"stopped by Ctrl-C before the first Seal; invocation "
                f"{performance.invocation_id} left nothing to resume, so the run must start "
                "again",
                err=True,
            )
        else:
            typer.echo(
                f"stopped by Ctrl-C; invocation {performance.invocation_id} stays resumable "
                f"from its last Seal: {_resume(performance)}",
                err=True,
            )
        raise typer.Exit(EXIT_CTRL_C) from None
    except BaseException:
        if view is not None:
            view.stop()
        raise
    if view is not None:
        view.finish(result)
    else:
        print_json_line(result.to_dict())
    if result.status == "failed":
        typer.echo(f"error: {printable(result.error, lines=True)}", err=True)
    elif result.status == "paused" and json_lines:
        if result.ephemeral:
            typer.echo(
                f"paused: {printable(result.reason, lines=True)}\n{EPHEMERAL_NOTE}", err=True
            )
        else:
            reason = printable(result.reason, lines=True)
            command = printable(result.resume_command)
            typer.echo(f"paused: {reason}\nresume with: {command}", err=True)
    raise typer.Exit(_EXIT[result.status])


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

    Raises:
        KeyboardInterrupt: When Ctrl-C was pressed at any moment of the call.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(make())

    interrupts = 0
    main_task: asyncio.Task[_T] | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def cancel_everything() -> None:
        assert loop is not None
        for task in asyncio.all_tasks(loop):
            task.cancel()

    def on_sigint(_signum: int, _frame: object) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:
            raise KeyboardInterrupt
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

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            try:
                result = runner.run(main())
            except asyncio.CancelledError:
                if interrupts:
                    raise KeyboardInterrupt from None
                raise
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    if interrupts:  # it came after the coroutine finished: deferred, never lost
        raise KeyboardInterrupt
    return result
