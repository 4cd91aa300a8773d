"""``sanctum worker`` — run queued invocations from a PostgreSQL Codex's queue."""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import guarded

__all__ = ["WORKER_STATUS_HELP", "register", "worker"]


@guarded
def worker(
    codex: Annotated[
        str,
        typer.Option("--codex", metavar="URL", help="The PostgreSQL Codex whose queue to serve."),
    ],
    queue: Annotated[
        list[str] | None,
        typer.Option("--queue", "-q", metavar="NAME", help="A queue to serve (repeat); all."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", min=1, help="Invocations run at once.")
    ] = 4,
    name: Annotated[
        str | None,
        typer.Option("--name", metavar="NAME", help="A unique worker name (default: made)."),
    ] = None,
    heartbeat: Annotated[
        float, typer.Option("--heartbeat", metavar="SECONDS", help="Between heartbeats.")
    ] = 10.0,
    stale: Annotated[
        float,
        typer.Option(
            "--stale",
            metavar="SECONDS",
            help="Silent this long, this worker counts as dead and its invocations are taken "
            "over (more than twice --heartbeat; recorded, so every worker judges it by it).",
        ),
    ] = 60.0,
    sweep: Annotated[
        float,
        typer.Option("--sweep", metavar="SECONDS", help="Between sweeps for dead workers' jobs."),
    ] = 10.0,
    poll: Annotated[
        float,
        typer.Option("--poll", metavar="SECONDS", help="Between fetches when nothing was heard."),
    ] = 5.0,
    project_dir: Annotated[
        str | None,
        typer.Option(
            "--project-dir",
            metavar="DIR",
            help="The project checked out here: rituals submitted with --parts-from-worker "
            "run their files from it, once their sha256 match.",
        ),
    ] = None,
) -> None:
    """Run queued invocations until stopped (Ctrl-C or SIGTERM); one line per segment.

    The first Ctrl-C, SIGTERM or SIGHUP (its terminal closed) hands each running
    invocation back at its next Seal, for any worker to go on at once, then exits 0 (one
    before "ready" stops it before it takes any job); a second one stops at once.
    """
    from sanctum import api

    _check(heartbeat=heartbeat, stale=stale, sweep=sweep, poll=poll)
    api.work(
        codex,
        queues=queue or None,
        concurrency=concurrency,
        name=name,
        timings=(heartbeat, stale, sweep, poll),
        project_dir=project_dir,
    )


def _check(*, heartbeat: float, stale: float, sweep: float, poll: float) -> None:
    """Refuse timings a worker cannot keep, before connecting (queue names are
    refused by ``api.work``, before connecting too).

    Raises:
        typer.BadParameter: Naming the option (exit status 2).
    """
    import math

    for option, value in (
        ("--heartbeat", heartbeat),
        ("--stale", stale),
        ("--sweep", sweep),
        ("--poll", poll),
    ):
        if not math.isfinite(value) or value <= 0:
            raise typer.BadParameter(
                f"{value:g} is not a number of seconds above 0", param_hint=option
            )
    if stale <= 2 * heartbeat:
        raise typer.BadParameter(
            f"{stale:g} s must be more than twice --heartbeat ({heartbeat:g} s): a worker "
            f"that beats every {heartbeat:g} s and is late once would be counted dead "
            f"(six times the heartbeat, as the defaults, leaves room: --stale {6 * heartbeat:g})",
            param_hint="--stale",
        )


def register(app: typer.Typer) -> None:
    """Attach ``sanctum worker`` to the root app."""
    app.command("worker", epilog=WORKER_EPILOG)(worker)


WORKER_STATUS_HELP = """\
Exit status:
  0    stopped by Ctrl-C, SIGTERM or SIGHUP: each running invocation was handed back
       at its next Seal, and any worker goes on from there (a signal before "ready":
       stopped before it took any job)
  1    the codex's PostgreSQL server cannot be reached (at the start or later)
  2    bad usage: a bad option value, a codex that is not PostgreSQL
  130  a second Ctrl-C stopped it at once (143: a second SIGTERM, 129: SIGHUP); its
       running invocations are taken over by the other workers, from their last Seal"""
"""The exit statuses of ``sanctum worker`` (no invocation's status: it runs many)."""

WORKER_EPILOG = f"""\
Examples:
  sanctum worker --codex postgresql://sanctum@db/sanctum
  sanctum worker --codex postgresql://sanctum@db/sanctum --queue gpu-box-3 --concurrency 8
  sanctum worker --codex postgresql://sanctum@db/sanctum --project-dir ~/src/our-rituals

{WORKER_STATUS_HELP}"""
"""The ``sanctum worker --help`` epilog."""
