"""``sanctum schema`` — print the ritual file's JSON Schema (for editors)."""

from __future__ import annotations

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
    """Print the JSON Schema of ritual files (point yaml-language-server at it).

    The text is byte for byte schema/ritual.schema.json (sorted keys, 2-space indent).
    """
    from sanctum import api

    text = api.schema_text()
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_bytes(text.encode("utf-8"))  # no newline translation on Windows
        typer.echo(f"wrote {output}", err=True)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum schema`` to the root app."""
    app.command("schema")(schema)
