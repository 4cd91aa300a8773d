"""``sanctum pending`` — the reviewer's inbox: every paused invocation, and how to decide.

Each paused invocation is listed with its question (for an agent's approval: the calls
and their arguments), who started it, since when it waits, and the exact command that
approves or rejects it (or resumes a plain interrupt).
"""

from __future__ import annotations

import time
from typing import Annotated

import typer

from sanctum.cli._common import guarded, make_console, print_json_line
from sanctum.cli._options import CodexOpt, check_codex

__all__ = ["pending", "register"]


@guarded
def pending(
    codex: CodexOpt = None,
    json_lines: Annotated[
        bool,
        typer.Option(
            "--json",
            help=(
                "Print one object per paused invocation: invocation_id, question, sigil, "
                "started_by, since (epoch seconds), calls, approve, reject."
            ),
        ),
    ] = False,
) -> None:
    """List paused invocations: question, who started it, since when, how to decide."""
    import asyncio

    from sanctum import api

    check_codex(codex)
    waiting = asyncio.run(api.pending(codex))
    if json_lines:
        for item in waiting:
            print_json_line(item.to_dict())
        return
    console = make_console()
    if not waiting:
        console.print("nothing is waiting for a decision")
        return
    for item in waiting:
        who = item.started_by or "unknown"
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(item.since))
        console.print(
            f"{item.invocation_id}  started by {who}, waiting since {since}", markup=False
        )
        console.print(f"  {item.question}", markup=False)
        console.print(f"  approve: {item.approve}", markup=False, soft_wrap=True)
        if item.reject is not None:
            console.print(f"  reject:  {item.reject}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum pending`` to the root app."""
    app.command("pending")(pending)
