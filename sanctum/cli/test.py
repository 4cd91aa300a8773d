"""``sanctum test`` — run rituals' test cases (``NAME.test.yaml``) for CI."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
) -> None:
    """Run the test cases beside each ritual (NAME.test.yaml); exit 1 on any failure."""
    from sanctum import api
    from sanctum.cli._common import make_console
    from sanctum.cli._tables import print_table, test_table

    outcomes = api.run_tests(paths or [Path(".")])
    if not outcomes:
        typer.echo("no ritual tests found (a ritual's cases live in NAME.test.yaml)", err=True)
        raise typer.Exit(EXIT_USAGE)
    console = make_console()
    print_table(console, test_table(outcomes))
    if junit_xml is not None:
        junit_xml.write_text(api.junit_xml(outcomes), encoding="utf-8")
        typer.echo(f"wrote {junit_xml}", err=True)
    failed = sum(1 for outcome in outcomes if not outcome.passed)
    total = len(outcomes)
    if failed:
        console.print(f"[bold red]{failed} of {total} failed[/]")
        raise typer.Exit(EXIT_FAILED)
    console.print(f"[bold green]{total} passed[/]")


def register(app: typer.Typer) -> None:
    """Attach ``sanctum test`` to the root app."""
    app.command("test")(run_tests)
