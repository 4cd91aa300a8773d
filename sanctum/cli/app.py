"""The root of the command line: ``sanctum`` and its command groups.

Each command group lives in its own module and is attached here, either registered
as a top-level command or mounted with ``add_typer`` (``sanctum trace ...``). Command
modules import only typer at module level and load the YAML layer, the engine and rich
inside the command function, so ``sanctum --help`` starts as fast as a bare Typer app.
"""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli import graph as graph_command
from sanctum.cli import invocations as invocations_command
from sanctum.cli import pending as pending_command
from sanctum.cli import queue as queue_command
from sanctum.cli import resume as resume_command
from sanctum.cli import run as run_command
from sanctum.cli import schema as schema_command
from sanctum.cli import seals as seals_command
from sanctum.cli import submit as submit_command
from sanctum.cli import test as test_command
from sanctum.cli import trace as trace_command
from sanctum.cli import validate as validate_command
from sanctum.cli import watch as watch_command
from sanctum.cli import worker as worker_command
from sanctum.cli._common import ROOT_EPILOG, set_debug
from sanctum.cli._typer_fixes import SanctumGroup

__all__ = ["app", "main"]

app = typer.Typer(
    name="sanctum",
    cls=SanctumGroup,
    help=(
        "Run, resume, stream and trace sanctum rituals — cyclic state graphs of AI "
        "agents written as YAML files."
    ),
    epilog=ROOT_EPILOG,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    """Eager ``--version``: print and leave before any command runs."""
    if value:
        from sanctum.api import __version__

        typer.echo(f"sanctum {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            envvar="SANCTUM_DEBUG",
            help="Show Python tracebacks for expected errors too.",
        ),
    ] = False,
) -> None:
    """Run, resume, stream and trace sanctum rituals.

    Bare ``sanctum`` (no command) prints this help and exits 0, as ``--help`` does.
    """
    set_debug(debug)
    if ctx.invoked_subcommand is None:
        text = ctx.get_help()  # Typer's rich help prints itself and returns ""
        if text:
            typer.echo(text)
        raise typer.Exit(0)


run_command.register(app)
resume_command.register(app)
invocations_command.register(app)
pending_command.register(app)
seals_command.register(app)
app.add_typer(trace_command.app, name="trace")
validate_command.register(app)
graph_command.register(app)
schema_command.register(app)
test_command.register(app)
watch_command.register(app)
submit_command.register(app)
worker_command.register(app)
queue_command.register(app)


def main() -> None:
    """Entry point of the ``sanctum`` console script and ``python -m sanctum``.

    Text a run produced may hold what the terminal's encoding cannot (a lone surrogate
    from a decoding mishap): it is printed escaped (``\\ud800``) rather than failing.
    Warnings (a trace file that could not be written after a run that succeeded) are
    printed as one ``warning: ...`` line on stderr, not Python's source excerpt.
    """
    import sys
    import warnings

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="backslashreplace")
    warnings.showwarning = _show_warning
    if len(sys.argv) < 2 or not {"--help", "-h"}.isdisjoint(sys.argv[1:]):
        _quiet_broken_pipe_in_help()
    app(prog_name="sanctum")


def _quiet_broken_pipe_in_help() -> None:
    """Let ``sanctum --help | head -1`` end quietly with 141 (the reader went away).

    rich answers a closed pipe with ``SystemExit(1)``, which would make a help screen
    cut short by ``head`` look like a failure. Help is drawn by rich anyway, so
    importing it here costs nothing that help does not pay.
    """
    import os
    import sys

    from rich.console import Console

    from sanctum.cli._common import EXIT_BROKEN_PIPE

    def on_broken_pipe(self: Console) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_BROKEN_PIPE)

    Console.on_broken_pipe = on_broken_pipe  # type: ignore[method-assign]


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """Print a warning (e.g. a trace that could not be written) as one plain line."""
    import sys

    print(f"warning: {message}", file=sys.stderr)
