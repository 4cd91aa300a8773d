"""``sanctum queue`` — what is queued, running (on which worker) and failed."""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import EXIT_STATUS_HELP, guarded

__all__ = ["queue", "queue_resume", "register"]


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
    """List segment jobs: id, invocation, kind, queue, status, attempts, worker.

    Tab-separated under a header row; REASON is why a failed job failed.
    """
    from sanctum import api
    from sanctum.cli._common import printable

    jobs = api.queue_jobs(codex=codex, statuses=status or ("todo", "doing", "failed"))
    if jobs:
        typer.echo("\t".join(HEADER))
    for job in jobs:
        typer.echo(
            f"{job.job_id}\t{job.invocation_id}\t{job.kind}\t{job.queue}\t{job.status}\t"
            f"{job.attempts}\t{job.worker or '-'}\t{printable(job.reason or '-')}"
        )
    if not jobs:
        typer.echo("nothing queued, running or failed", err=True)


def queue_resume(
    invocation: str,
    updates: dict[str, object],
    executor: str,
    codex: str | None,
    refused: dict[str, object],
) -> None:
    """``sanctum resume --executor queue``: queue the resume; print its job id.

    ``refused`` maps the options that only a resume run here takes to their values.

    Raises:
        typer.BadParameter: For an unknown executor, no ``--codex`` or a refused option.
        typer.Exit: With status 1 when a segment of the invocation is queued or running.
    """
    from sanctum import api
    from sanctum.cli._common import EXIT_FAILED

    if executor != "queue":
        raise typer.BadParameter(f"--executor is local or queue, not {executor!r}")
    given = [name for name, value in refused.items() if value]
    if given:
        raise typer.BadParameter(f"{', '.join(given)} goes with a resume run here, not queued")
    if not codex:
        raise typer.BadParameter("--executor queue needs --codex postgresql://... (the queue's)")
    queued = api.queue_resume(invocation, updates, codex=codex)
    if queued.already:
        typer.echo(
            f"not queued: a start or resume of invocation {invocation} is already queued or "
            "running; wait for it (sanctum queue), then resume again",
            err=True,
        )
        raise typer.Exit(EXIT_FAILED)
    typer.echo(f"queued a resume of invocation {invocation} (job {queued.job_id})")


def register(app: typer.Typer) -> None:
    """Attach ``sanctum queue`` to the root app."""
    app.command("queue", epilog=QUEUE_EPILOG)(queue)


HEADER = ("JOB", "INVOCATION", "KIND", "QUEUE", "STATUS", "ATTEMPTS", "WORKER", "REASON")
"""The header row of ``sanctum queue``."""

QUEUE_EPILOG = f"""\
Examples:
  sanctum queue --codex postgresql://sanctum@db/sanctum
  sanctum queue --codex postgresql://sanctum@db/sanctum --status failed

{EXIT_STATUS_HELP}"""
"""The ``sanctum queue --help`` epilog."""
