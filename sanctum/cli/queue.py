"""``sanctum queue`` — what is queued, running (on which worker) and failed."""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import guarded

__all__ = ["queue", "register"]


@guarded
def queue(
    codex: Annotated[
        str, typer.Option("--codex", metavar="URL", help="The PostgreSQL Codex of the queue.")
    ],
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status", metavar="STATUS", help="todo, doing, failed or succeeded (repeat)."
        ),
    ] = None,
) -> None:
    """List segment jobs: id, invocation, kind, queue, status, attempts, worker."""
    from sanctum import api

    jobs = api.queue_jobs(codex=codex, statuses=status or ("todo", "doing", "failed"))
    for job in jobs:
        typer.echo(
            f"{job.job_id}\t{job.invocation_id}\t{job.kind}\t{job.queue}\t{job.status}\t"
            f"{job.attempts}\t{job.worker or '-'}"
        )
    if not jobs:
        typer.echo("nothing queued, running or failed", err=True)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum queue`` to the root app."""
    app.command("queue")(queue)
