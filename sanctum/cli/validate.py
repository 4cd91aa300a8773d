"""``sanctum validate`` — check ritual files without running them.

Kept light on purpose: it prints plain lines with typer (no rich), so a validation in
an editor hook or a CI step costs little more than loading the YAML layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sanctum.cli._common import EXIT_USAGE, guarded
from sanctum.cli._options import file_path

__all__ = ["register", "validate", "validate_files"]


def validate_files(paths: list[Path], *, resolve: bool = False, quiet: bool = False) -> int:
    """Check each file, print ``path:line:column: message`` per problem; return the count.

    Ritual files are checked fully; ``NAME.test.yaml`` files as test-case files. Good
    files print ``path: ok`` unless ``quiet``; without ``resolve``, a note on stderr
    says that the Python code they name was looked for but not imported. Warnings
    (``path:line:column: warning: ...``, e.g. spells without an access label) go to
    stderr and do not count as problems.
    """
    from sanctum import api

    bad = 0
    unimported = False
    for path in paths:
        problems = api.validate(path, resolve=resolve)
        if problems:
            bad += 1
            for problem in problems:
                typer.echo(str(problem))
        elif not quiet:
            typer.echo(f"{path}: ok")
            unimported = unimported or (not resolve and bool(api.code_references(path)))
        if not problems and not path.name.endswith(".test.yaml"):
            for warning in api.validate_warnings(path):  # they do not fail the file
                typer.echo(str(warning), err=True)
    if unimported:
        typer.echo(
            "note: the Python code the rituals name (module:function) was found but not "
            "imported; `sanctum validate --resolve` imports it and checks the functions",
            err=True,
        )
    return bad


@guarded
def validate(
    files: Annotated[
        list[Path],
        typer.Argument(metavar="FILE...", parser=file_path, help="Ritual files to check."),
    ],
    resolve: Annotated[
        bool,
        typer.Option(
            "--resolve",
            help="Also import the Python code the rituals name (module:function); off by "
            "default because importing runs code.",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only problems.")] = False,
) -> None:
    """Check ritual files: every problem as path:line:column: message (exit 2 if any)."""
    bad = validate_files(files, resolve=resolve, quiet=quiet)
    if bad:
        noun = "file" if bad == 1 else "files"
        typer.echo(f"{bad} {noun} with problems", err=True)
        raise typer.Exit(EXIT_USAGE)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum validate`` to the root app."""
    app.command("validate")(validate)
