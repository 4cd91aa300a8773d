"""``sanctum invocations`` — recent invocations in the codex; show, delete, prune.

Bare ``sanctum invocations`` lists (the group's callback); ``show ID``, ``delete ID``
and ``prune --older-than AGE`` are its subcommands.
"""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import guarded, make_console, print_json_line
from sanctum.cli._options import CodexOpt, check_codex

__all__ = ["invocations", "register"]


@guarded
def invocations(
    ctx: typer.Context,
    codex: CodexOpt = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="How many to show, newest first.")
    ] = 20,
    json_lines: Annotated[
        bool,
        typer.Option(
            "--json",
            help=(
                "Print one object per invocation, newest first: invocation_id, ritual, "
                "queue, status, supersteps, seals, frontier, updated, reason, failure."
            ),
        ),
    ] = False,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help=(
                "Only invocations in this status: running, paused, done, failed or "
                "incomplete (stopped by a signal or a crash). Repeat or comma-separate."
            ),
        ),
    ] = None,
) -> None:
    """List recent invocations: id, ritual, status, supersteps, last update.

    `show ID`, `delete ID` and `prune --older-than AGE` look after single ones.
    """
    import asyncio

    if ctx.invoked_subcommand is not None:
        return

    from sanctum.api import list_invocations
    from sanctum.cli._tables import invocation_row, invocations_table, print_table

    check_codex(codex)
    wanted = _statuses(status)
    if wanted:  # filter the whole index, then keep the newest `limit`
        everything = asyncio.run(list_invocations(codex, limit=_ALL))
        summaries = [s for s in everything if s.status in wanted][:limit]
    else:
        summaries = asyncio.run(list_invocations(codex, limit=limit))
    if json_lines:
        for summary in summaries:
            print_json_line(invocation_row(summary))
        return
    console = make_console()
    if not summaries and wanted:
        console.print(f"no {' or '.join(sorted(wanted))} invocations in this codex")
        return
    if not summaries:
        console.print("no invocations yet; start one with `sanctum run RITUAL.yaml`")
        return
    print_table(console, invocations_table(summaries, console.width))


STATUSES = ("running", "paused", "done", "failed", "incomplete")
"""What ``--status`` accepts (:attr:`sanctum.codex.base.InvocationSummary.status`)."""

_ALL = 2**31 - 1
"""The limit that lists every invocation (a filter must see them all)."""


def _statuses(values: list[str] | None) -> set[str]:
    """The ``--status`` values, repeated or comma-separated, each checked.

    Raises:
        typer.BadParameter: For a status that is none of :data:`STATUSES` (exit 2).
    """
    from sanctum.cli._options import split_statuses

    return set(split_statuses(values, STATUSES))


def register(root: typer.Typer) -> None:
    """Attach ``sanctum invocations`` (and its subcommands) to the root app."""
    from sanctum.cli import invocations_manage

    app = typer.Typer(
        epilog=INVOCATIONS_EPILOG,
        invoke_without_command=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(invocations)
    invocations_manage.register(app)
    root.add_typer(app, name="invocations")


INVOCATIONS_EPILOG = """\
Examples:
  sanctum invocations --status paused          (what waits for an answer)
  sanctum invocations --status incomplete -n 5
  sanctum invocations --json | jq -r .invocation_id
  sanctum invocations show ID                  (status, ritual, the Aether)
  sanctum invocations delete ID                (a finished one; --force otherwise)
  sanctum invocations prune --older-than 30d   (finished ones only)
  sanctum seals --invocation ID                (one invocation's history)"""
"""The ``sanctum invocations --help`` epilog."""
