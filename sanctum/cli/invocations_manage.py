"""``sanctum invocations show|delete|prune`` — look after single invocations."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from sanctum.cli._common import guarded, make_console, print_json_line
from sanctum.cli._options import CodexOpt, check_codex

__all__ = ["delete", "parse_age", "prune", "register", "show"]

InvocationArg = Annotated[
    str,
    typer.Argument(
        metavar="ID",
        help="The invocation (see `sanctum invocations`), or a unique prefix of its id of "
        "8 characters or more.",
    ),
]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"\A\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*\Z", re.IGNORECASE)


def parse_age(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``45s`` or ``2w`` as seconds.

    Raises:
        typer.BadParameter: For anything else (exit status 2).
    """
    match = _AGE.match(text)
    if match is None:
        raise typer.BadParameter(
            f"{text!r} is no age; give a number and a unit: 45s, 90m, 12h, 30d or 2w",
            param_hint="--older-than",
        )
    return float(match.group(1)) * _UNITS[match.group(2).lower()]


@guarded
def show(
    invocation_id: InvocationArg,
    codex: CodexOpt = None,
    json_lines: Annotated[
        bool,
        typer.Option(
            "--json",
            help=(
                "Print one object: the fields of `sanctum invocations --json`, plus "
                "created, seal_id and aether."
            ),
        ),
    ] = False,
) -> None:
    """Show one invocation: status, ritual, supersteps, times, reason, the Aether."""
    import asyncio

    from sanctum.api import origin_of, resume_command, show_invocation
    from sanctum.cli._tables import _display_path, format_time, invocation_row
    from sanctum.cli._view import aether_tree

    check_codex(codex)
    detail = asyncio.run(show_invocation(invocation_id, codex))
    row = invocation_row(detail.summary)
    if json_lines:
        print_json_line(
            {**row, "created": detail.created, "seal_id": detail.latest.seal_id}
            | {"aether": dict(detail.latest.aether)}
        )
        return
    console = make_console()
    summary = detail.summary
    lines: list[tuple[str, Any]] = [
        ("invocation", summary.invocation_id),
        ("status", summary.status),
        ("ritual", _display_path(row["ritual"] or "") or "(not recorded)"),
        ("supersteps", f"{summary.superstep} ({summary.seals} seals)"),
        ("created", format_time(detail.created)),
        ("updated", format_time(summary.updated)),
        ("last seal", detail.latest.seal_id),
    ]
    if row["reason"]:
        lines.append(("reason", row["reason"]))
    failure = row["failure"]
    if failure:
        lines.append(("error", f"{failure.get('type', 'Error')}: {failure.get('error', '')}"))
    if row["queue"]:
        lines.insert(3, ("queue", row["queue"]))
    for label, value in lines:
        console.print(f"{label:<11} {value}", markup=False, highlight=False)
    if summary.status in ("paused", "incomplete"):
        queued = origin_of(summary.metadata).queued
        console.print(
            f"resume with: {resume_command(summary.invocation_id, codex, queued=queued)}",
            markup=False,
            soft_wrap=True,  # one line to copy, whatever the width
        )
    console.print(aether_tree(detail.latest.aether))


@guarded
def delete(
    invocation_id: InvocationArg,
    codex: CodexOpt = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Delete a paused or incomplete invocation too."),
    ] = False,
) -> None:
    """Delete one invocation: its Seals and its line in the index.

    A done or failed invocation goes at once; a paused or incomplete one (which could
    still be resumed) only with --force; a running one never.
    """
    import asyncio

    from sanctum.api import delete_invocation

    check_codex(codex)
    summary = asyncio.run(delete_invocation(invocation_id, codex, force=force))
    typer.echo(f"deleted {summary.status} invocation {summary.invocation_id}", err=True)


@guarded
def prune(
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            metavar="AGE",
            help="Delete finished invocations last updated longer ago: 45s, 90m, 12h, 30d, 2w.",
        ),
    ],
    codex: CodexOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only list what would be deleted.")
    ] = False,
) -> None:
    """Delete whole finished invocations (done or failed) older than AGE.

    Paused, incomplete and running invocations stay, however old: they can still be
    resumed. Nothing is cut out of an invocation that stays.
    """
    import asyncio

    from sanctum.api import prune_invocations

    seconds = parse_age(older_than)
    check_codex(codex)
    gone = asyncio.run(prune_invocations(codex, older_than=seconds, dry_run=dry_run))
    verb = "would delete" if dry_run else "deleted"
    for summary in gone:
        typer.echo(f"{verb} {summary.status} invocation {summary.invocation_id}")
    noun = "invocation" if len(gone) == 1 else "invocations"
    typer.echo(f"{verb} {len(gone)} finished {noun} older than {older_than.strip()}", err=True)


def register(app: typer.Typer) -> None:
    """Attach ``show``, ``delete`` and ``prune`` to the ``invocations`` group."""
    app.command("show")(show)
    app.command("delete")(delete)
    app.command("prune", epilog=PRUNE_EPILOG)(prune)


PRUNE_EPILOG = """\
Examples:
  sanctum invocations prune --older-than 30d --dry-run
  sanctum invocations prune --older-than 12h --codex runs/codex.db"""
"""The ``sanctum invocations prune --help`` epilog."""
