"""``sanctum queue`` — what is queued, running (on which worker), paused and failed."""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import guarded

__all__ = ["QUEUE_STATUS_HELP", "STATUSES", "queue", "queue_resume", "register"]

STATUSES = ("todo", "doing", "paused", "failed", "succeeded", "aborted", "cancelled")
"""What ``--status`` picks: procrastinate's job statuses, and ``paused`` (an invocation
waiting for a resume: it holds no job)."""
DEFAULT_STATUSES = ("todo", "doing", "paused", "failed")
"""What ``sanctum queue`` lists without ``--status``."""


@guarded
def queue(
    codex: Annotated[
        str, typer.Option("--codex", metavar="URL", help="The PostgreSQL Codex of the queue.")
    ],
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="todo, doing, paused, failed (the default four), succeeded, aborted or "
            "cancelled (repeat, or comma-separated).",
        ),
    ] = None,
) -> None:
    """List segment jobs: id, invocation, kind, queue, status, attempts, worker.

    Paused invocations (status paused) are listed too. Tab-separated under a header
    row. ATTEMPTS counts the runs of the segment (the one running included, and those
    of jobs it was handed back or taken over from); REASON is why a failed job failed,
    why an aborted one was taken over, or a paused invocation's question.
    """
    from sanctum import api
    from sanctum.cli._common import printable

    wanted = _statuses(status)
    jobs = api.queue_jobs(codex=codex, statuses=wanted)
    if jobs:
        typer.echo("\t".join(HEADER))
    for job in jobs:
        typer.echo(
            f"{job.job_id}\t{job.invocation_id}\t{job.kind}\t{job.queue}\t{job.status}\t"
            f"{job.attempts}\t{printable(job.worker or '-')}\t{printable(job.reason or '-')}"
        )
    if not jobs:
        shown = " or ".join(wanted) if status else "queued, running, paused or failed"
        typer.echo(f"nothing {shown}", err=True)


def _statuses(values: list[str] | None) -> tuple[str, ...]:
    """The statuses ``--status`` asked for (the default four when none).

    Raises:
        typer.BadParameter: For a status that is none of :data:`STATUSES` (exit 2).
    """
    from sanctum.cli._options import split_statuses

    return tuple(split_statuses(values, STATUSES)) or DEFAULT_STATUSES


def queue_resume(
    invocation: str,
    updates: dict[str, object],
    executor: str,
    codex: str | None,
    refused: dict[str, object],
    *,
    queue: str | None = None,
) -> None:
    """``sanctum resume --executor queue``: queue the resume; print its job id and queue.

    ``refused`` maps the options that only a resume run here takes to their values;
    ``queue`` None puts the resume in the invocation's own queue (the one it was
    submitted to).

    Raises:
        typer.BadParameter: For an unknown executor, no ``--codex`` or a refused option.
        typer.Exit: With status 1 when a segment of the invocation is queued or running.
        SealError: When the invocation is unknown or done (status 2, through
            ``guarded``): nothing was queued.
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
    queued = api.queue_resume(invocation, updates, codex=codex, queue=queue)
    if queued.already:
        typer.echo(
            f"not queued: a start or resume of invocation {invocation} is already queued or "
            "running; wait for it (sanctum queue), then resume again",
            err=True,
        )
        raise typer.Exit(EXIT_FAILED)
    typer.echo(
        f"queued a resume of invocation {invocation} (job {queued.job_id}, queue "
        f"{queued.queue}); a worker serving that queue runs it"
    )


def register(app: typer.Typer) -> None:
    """Attach ``sanctum queue`` to the root app."""
    app.command("queue", epilog=QUEUE_EPILOG)(queue)


HEADER = ("JOB", "INVOCATION", "KIND", "QUEUE", "STATUS", "ATTEMPTS", "WORKER", "REASON")
"""The header row of ``sanctum queue``."""

QUEUE_STATUS_HELP = """\
Exit status:
  0    listed (an empty list says so on stderr)
  1    the codex's PostgreSQL server cannot be reached
  2    bad usage: an unknown --status, a codex that is not PostgreSQL"""
"""The exit statuses of ``sanctum queue``."""

QUEUE_EPILOG = f"""\
Examples:
  sanctum queue --codex postgresql://sanctum@db/sanctum
  sanctum queue --codex postgresql://sanctum@db/sanctum --status failed,aborted
  sanctum queue --codex postgresql://sanctum@db/sanctum --status paused

{QUEUE_STATUS_HELP}"""
"""The ``sanctum queue --help`` epilog."""
