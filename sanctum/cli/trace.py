"""``sanctum trace`` — render a recorded trace as HTML or show it in the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sanctum.cli._common import guarded

__all__ = ["app", "render", "show"]

app = typer.Typer(
    help="Render or show a trace recorded with `sanctum run --trace PATH`.",
    no_args_is_help=True,
)


@app.command("render")
@guarded
def render(
    trace: Annotated[Path, typer.Argument(metavar="TRACE", help="The recorded trace file.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="OUT.html", help="Where to write (default: TRACE.html)."
        ),
    ] = None,
) -> None:
    """Render a trace as one self-contained HTML file (open it in a browser).

    The "wrote FILE" line goes to stderr, as for graph, schema and test.
    """
    from sanctum.api import render_trace_file

    written = render_trace_file(trace, output)
    typer.echo(f"wrote {written}", err=True)


@app.command("show")
@guarded
def show(
    trace: Annotated[Path, typer.Argument(metavar="TRACE", help="The recorded trace file.")],
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Draw every superstep, seal and circle (past 100, the middle is folded).",
        ),
    ] = False,
) -> None:
    """Show a trace in the terminal as a tree of supersteps and sigils."""
    from sanctum.api import load_trace
    from sanctum.cli._common import make_console
    from sanctum.cli._trace_tree import trace_tree

    make_console().print(trace_tree(load_trace(trace), fold=not every))
