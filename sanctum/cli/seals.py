"""``sanctum seals`` — an invocation's history of Seals (checkpoints)."""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import guarded, make_console, print_json_line
from sanctum.cli._options import CodexOpt, check_codex

__all__ = ["register", "seals"]


@guarded
def seals(
    invocation: Annotated[
        str,
        typer.Option(
            "--invocation",
            metavar="ID",
            help="The invocation to inspect (or a unique prefix of 8+ characters).",
        ),
    ],
    codex: CodexOpt = None,
    json_lines: Annotated[
        bool,
        typer.Option(
            "--json",
            help=(
                "Print one object per Seal, oldest first: seal_id, superstep, timestamp, "
                "parent, frontier, interrupt, metadata (add --values for each Seal's "
                "Aether)."
            ),
        ),
    ] = False,
    values: Annotated[
        bool, typer.Option("--values", help="With --json, include each Seal's full Aether.")
    ] = False,
) -> None:
    """Show an invocation's Seals: seal id, superstep, frontier, time, interrupt reason."""
    import asyncio

    from sanctum.api import list_seals, resolve_invocation, seal_history
    from sanctum.cli._tables import print_table, seal_row, seals_table

    check_codex(codex)
    invocation = asyncio.run(resolve_invocation(invocation, codex))
    if values and not json_lines:
        typer.echo(
            "warning: --values needs --json (the table shows no values); add --json to "
            "see each Seal's Aether",
            err=True,
        )
    if json_lines:

        async def stream() -> None:  # one Seal's values in memory at a time
            async for seal in seal_history(invocation, codex, values=values, on_damage="mark"):
                row = seal_row(seal)
                if values and "damaged" not in row:
                    row["aether"] = dict(seal.aether)
                print_json_line(row)

        asyncio.run(stream())
        return
    history = asyncio.run(list_seals(invocation, codex, values=False, on_damage="mark"))
    console = make_console()
    print_table(console, seals_table(invocation, history, console.width))


def register(app: typer.Typer) -> None:
    """Attach ``sanctum seals`` to the root app."""
    app.command("seals")(seals)
