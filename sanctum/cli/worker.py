"""``sanctum worker`` — run queued invocations from a PostgreSQL Codex's queue."""

from __future__ import annotations

from typing import Annotated

import typer

from sanctum.cli._common import EXIT_STATUS_HELP, guarded

__all__ = ["register", "worker"]


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
            help="A worker silent this long is dead; its invocations are taken over.",
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
    """Run queued invocations until stopped (Ctrl-C or SIGTERM); one line per segment."""
    from sanctum import api

    api.work(
        codex,
        queues=queue or None,
        concurrency=concurrency,
        name=name,
        timings=(heartbeat, stale, sweep, poll),
        project_dir=project_dir,
    )


def register(app: typer.Typer) -> None:
    """Attach ``sanctum worker`` to the root app."""
    app.command("worker", epilog=WORKER_EPILOG)(worker)


WORKER_EPILOG = f"""\
Examples:
  sanctum worker --codex postgresql://sanctum@db/sanctum
  sanctum worker --codex postgresql://sanctum@db/sanctum --queue gpu-box-3 --concurrency 8
  sanctum worker --codex postgresql://sanctum@db/sanctum --project-dir ~/src/our-rituals

{EXIT_STATUS_HELP}"""
"""The ``sanctum worker --help`` epilog."""
