"""``sanctum invocations`` — recent invocations in the codex."""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import guarded, make_console, print_json_line
from sanctum.cli._options import CodexOpt, JsonOpt, check_codex

__all__ = ["invocations", "register"]


@guarded
def invocations(
    codex: CodexOpt = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="How many to show, newest first.")
    ] = 20,
    json_lines: JsonOpt = False,
) -> None:
    """List recent invocations: id, ritual, status, supersteps, last update."""
    import asyncio

    from sanctum.api import list_invocations
    from sanctum.cli._tables import invocation_row, invocations_table, print_table

    check_codex(codex)
    summaries = asyncio.run(list_invocations(codex, limit=limit))
    if json_lines:
        for summary in summaries:
            print_json_line(invocation_row(summary))
        return
    console = make_console()
    if not summaries:
        console.print("no invocations yet; start one with `sanctum run RITUAL.yaml`")
        return
    print_table(console, invocations_table(summaries, console.width))


def register(app: typer.Typer) -> None:
    """Attach ``sanctum invocations`` to the root app."""
    app.command("invocations")(invocations)
