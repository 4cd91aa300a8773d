"""``sanctum submit`` — queue invocations of a ritual for ``sanctum worker`` s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import typer

from sanctum.cli._common import guarded, warn_repeated_keys

__all__ = ["SUBMIT_STATUS_HELP", "read_batch", "register", "run_batch", "submit"]


def read_batch(path: str) -> list[Mapping[str, object]]:
    """The input mappings of a JSON Lines file, or of standard input for ``-`` (see
    :func:`sanctum.api.read_batch`).

    Raises:
        RitualInputError: If the file cannot be read, holds no object, or has bad lines
            (every one listed).
    """
    from sanctum import api

    return list(api.read_batch(path))  # each line keeps its place for later messages


def run_batch(
    ritual: str, path: str, *, codex: str | None, concurrency: int, json_lines: bool
) -> None:
    """``sanctum run RITUAL --inputs FILE``: the batch in this process; one line each.

    Prints ``ID<TAB>STATUS[<TAB>ERROR]`` per invocation in input order (a JSON object
    per line under ``--json``), then leaves with status 1 if one failed, else 3 if one
    paused, else 0.

    Raises:
        typer.BadParameter: If the file cannot be read or a line is not a JSON object.
        typer.Exit: With status 1 or 3 as above.
    """
    import json

    from sanctum import api
    from sanctum.cli._common import EXIT_FAILED, EXIT_PAUSED

    outcomes = api.run_batch(ritual, read_batch(path), codex=codex, concurrency=concurrency)
    for one in outcomes:
        if json_lines:
            fields = {"invocation_id": one.invocation_id, "status": one.status}
            typer.echo(json.dumps({**fields, "error": one.error}))
        else:
            tail = f"\t{one.error}" if one.error else ""
            typer.echo(f"{one.invocation_id}\t{one.status}{tail}")
    statuses = {one.status for one in outcomes}
    if "failed" in statuses:
        raise typer.Exit(EXIT_FAILED)
    if "paused" in statuses:
        raise typer.Exit(EXIT_PAUSED)


@guarded
def submit(
    ritual: Annotated[str, typer.Argument(metavar="RITUAL", help="The ritual file (YAML).")],
    codex: Annotated[
        str, typer.Option("--codex", metavar="URL", help="The PostgreSQL Codex to queue in.")
    ],
    inputs: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", metavar="KEY=VALUE", help="An input of one invocation."),
    ] = None,
    batch: Annotated[
        str | None,
        typer.Option(
            "--inputs", metavar="FILE", help="JSON Lines: one invocation per line; - for stdin."
        ),
    ] = None,
    queue: Annotated[
        str, typer.Option("--queue", "-q", metavar="NAME", help="The queue to put them in.")
    ] = "sanctum",
    parts_from_worker: Annotated[
        bool,
        typer.Option(
            "--parts-from-worker",
            help="Workers take the ritual's Python modules, spell folders and circle files "
            "from their --project-dir checkout (their sha256 are recorded and checked).",
        ),
    ] = False,
) -> None:
    """Store the ritual in the Codex and queue invocations; prints one id per line."""
    from sanctum import api
    from sanctum.cli._parsing import parse_input_pairs

    if batch is not None:
        if inputs:
            raise typer.BadParameter(
                "--inputs queues one invocation per line; --input is for one invocation "
                "(put the value in each line instead)"
            )
        given: list[Mapping[str, object]] = read_batch(batch)
    else:
        warn_repeated_keys(inputs or [], "--input")
        given = [dict(parse_input_pairs(inputs or [], option="--input"))]
    queued = api.submit(
        ritual, given, codex=codex, queue=queue, parts_from_worker=parts_from_worker
    )
    for ident in queued:
        typer.echo(ident)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum submit`` to the root app."""
    app.command("submit", epilog=SUBMIT_EPILOG)(submit)


SUBMIT_STATUS_HELP = """\
Exit status:
  0    queued: one invocation id per line
  1    the codex's PostgreSQL server cannot be reached
  2    bad usage, bad input (every bad line listed) or a ritual a worker could not
       run; nothing was queued
  130  stopped by Ctrl-C"""
"""The exit statuses of ``sanctum submit``."""

SUBMIT_EPILOG = f"""\
Examples:
  sanctum submit rituals/triage.yaml --input ticket="Where is my order?" --codex $URL
  sanctum submit rituals/triage.yaml --inputs tickets.jsonl --queue gpu-box-3 --codex $URL
  sanctum submit rituals/triage.yaml --inputs tickets.jsonl --parts-from-worker --codex $URL

{SUBMIT_STATUS_HELP}"""
"""The ``sanctum submit --help`` epilog."""
