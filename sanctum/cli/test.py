"""``sanctum test`` — run rituals' test cases (``NAME.test.yaml``) for CI."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

import typer

from sanctum.cli._common import EXIT_FAILED, EXIT_USAGE, guarded

__all__ = ["register", "run_tests"]


@guarded
def run_tests(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[PATH...]",
            help="Ritual files, test files or folders to search (default: the working directory).",
        ),
    ] = None,
    junit_xml: Annotated[
        Path | None,
        typer.Option("--junit-xml", metavar="FILE", help="Also write a JUnit XML report."),
    ] = None,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="(Re-)record the cassette of every `cassette:` case against the real oracles.",
        ),
    ] = False,
    record_missing: Annotated[
        bool,
        typer.Option(
            "--record-missing", help="Record only the `cassette:` cases whose cassette is missing."
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Record even when the CI environment variable is set."),
    ] = False,
) -> None:
    """Run the test cases beside each ritual (NAME.test.yaml); exit 1 on any failure."""
    from sanctum import api
    from sanctum.cli._common import make_console
    from sanctum.cli._tables import test_table

    mode = _record_mode(record, record_missing, force)
    outcomes = api.run_tests(paths or [Path(".")], record=mode)
    if not outcomes:
        typer.echo("no ritual tests found (a ritual's cases live in NAME.test.yaml)", err=True)
        raise typer.Exit(EXIT_USAGE)
    console = make_console()
    console.print(test_table(outcomes), soft_wrap=True)
    if junit_xml is not None:
        junit_xml.write_text(api.junit_xml(outcomes), encoding="utf-8")
        typer.echo(f"wrote {junit_xml}", err=True)
    failed = sum(1 for outcome in outcomes if not outcome.passed)
    total = len(outcomes)
    if failed:
        console.print(f"[bold red]{failed} of {total} failed[/]")
        raise typer.Exit(EXIT_FAILED)
    console.print(f"[bold green]{total} passed[/]")


def _record_mode(
    record: bool, record_missing: bool, force: bool
) -> Literal["all", "missing"] | None:
    """What ``--record`` / ``--record-missing`` ask for; refused in CI without ``--force``.

    Raises:
        typer.Exit: With status 2 when both are given, or ``CI`` is set (a CI job must
            replay what was recorded, never call the real oracles) and ``--force`` is not.
    """
    if record and record_missing:
        typer.echo("error: --record and --record-missing exclude each other", err=True)
        raise typer.Exit(EXIT_USAGE)
    if not (record or record_missing):
        return None
    ci = os.environ.get("CI", "")
    if ci and ci.lower() not in ("0", "false", "no") and not force:
        option = "--record" if record else "--record-missing"
        typer.echo(
            f"error: {option} refused: CI={ci} is set, and a CI job replays the cassettes it "
            "was given instead of calling the real oracles; record on your machine and "
            "commit the cassettes (or pass --force)",
            err=True,
        )
        raise typer.Exit(EXIT_USAGE)
    return "all" if record else "missing"


def register(app: typer.Typer) -> None:
    """Attach ``sanctum test`` to the root app."""
    app.command("test")(run_tests)
