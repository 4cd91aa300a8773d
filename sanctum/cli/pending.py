"""``sanctum pending`` — the reviewer's inbox: every paused invocation, and how to decide.

Each paused invocation is listed with its question (for an agent's approval: the calls
and their arguments), who started it (when its first Seal records it), since when it
waits, and the exact commands that approve or reject the waiting calls — or, for a plain
interrupt, the one that resumes it (through the queue for a queued invocation).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from sanctum.cli._common import guarded, make_console, print_json_line, printable
from sanctum.cli._options import CodexOpt, check_codex

if TYPE_CHECKING:
    from sanctum.api import PendingInvocation

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
                "started_by, since (epoch seconds), calls, resume, approve, reject, queued."
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
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(item.since))
        who = f"started by {printable(item.started_by)}, " if item.started_by else ""
        console.print(
            f"{printable(item.invocation_id)}  {who}waiting since {since}",
            markup=False,
            soft_wrap=True,
        )
        console.print(f"  {printable(item.question, lines=True)}", markup=False)
        for label, command in _commands(item):
            console.print(f"  {label:<8} {printable(command)}", markup=False, soft_wrap=True)


def _commands(item: PendingInvocation) -> list[tuple[str, str]]:
    """``(label, command)`` lines: approve and reject for waiting calls, else resume."""
    if item.approve is not None:
        decisions = [("approve:", item.approve)]
        return decisions + ([("reject:", item.reject)] if item.reject is not None else [])
    return [("resume:", f"{item.resume} --update KEY=VALUE")]


def register(app: typer.Typer) -> None:
    """Attach ``sanctum pending`` to the root app."""
    app.command("pending")(pending)
