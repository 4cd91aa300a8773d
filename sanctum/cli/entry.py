"""The ``sanctum`` console script's entry point: a quiet Ctrl-C while starting up.

Importing the command line (Typer, rich, click) takes a noticeable part of a second;
Python's own Ctrl-C handler would print a ``KeyboardInterrupt`` traceback from
whichever import it lands in. Here a Ctrl-C during those imports ends the process
with exit status 130 and nothing printed; once the app is loaded, Ctrl-C is handled
by the commands themselves (:func:`sanctum.cli._perform.run_interruptibly`).
"""

from __future__ import annotations

__all__ = ["main"]

EXIT_CTRL_C = 130
"""The exit status of a Ctrl-C (128 + SIGINT), as documented for every command."""


def main() -> None:
    """Load the command line with Ctrl-C deferred to a quiet exit, then run it.

    Raises:
        SystemExit: With 130 when Ctrl-C arrives while loading; else the app's status.
    """
    import signal

    def stop(_signum: int, _frame: object) -> None:
        raise SystemExit(EXIT_CTRL_C)

    try:
        previous = signal.signal(signal.SIGINT, stop)
    except ValueError:  # not the main thread: nothing to guard
        previous = None
    try:
        from sanctum.cli.app import main as run
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    run()
