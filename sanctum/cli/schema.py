"""``sanctum schema`` — print the ritual file's JSON Schema (for editors)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from sanctum.cli._common import guarded

__all__ = ["register", "schema"]


@guarded
def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to FILE.")
    ] = None,
) -> None:
    """Print the JSON Schema of ritual files (point yaml-language-server at it)."""
    from sanctum import api

    text = json.dumps(api.schema(), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum schema`` to the root app."""
    app.command("schema")(schema)
