"""``sanctum graph`` — draw a ritual's graph as Mermaid or Graphviz dot."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from sanctum.cli._common import guarded
from sanctum.cli._options import file_path

__all__ = ["GraphFormat", "graph", "register"]


class GraphFormat(StrEnum):
    """Output formats of ``sanctum graph``."""

    mermaid = "mermaid"
    dot = "dot"


@guarded
def graph(
    ritual: Annotated[
        Path, typer.Argument(metavar="FILE", parser=file_path, help="The ritual file to draw.")
    ],
    format: Annotated[
        GraphFormat,
        typer.Option("--format", "-f", help="mermaid (renders on GitHub) or dot (Graphviz)."),
    ] = GraphFormat.mermaid,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="OUT", help="Write to OUT.")
    ] = None,
) -> None:
    """Draw a ritual's graph (Mermaid renders in GitHub markdown)."""
    from sanctum import api

    text = api.graph(ritual, format.value)
    if output is None:
        typer.echo(text.rstrip("\n"))
    else:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum graph`` to the root app."""
    app.command("graph")(graph)
