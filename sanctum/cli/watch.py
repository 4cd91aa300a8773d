"""``sanctum watch`` — re-validate (and optionally re-run) a ritual on every save."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sanctum.cli._common import EXIT_CTRL_C, guarded
from sanctum.cli._options import CodexOpt, OracleOpt, check_codex, file_path, view_modes

if TYPE_CHECKING:
    from sanctum.api import OracleOverride

__all__ = ["register", "watch"]


@guarded
def watch(
    ritual: Annotated[
        Path,
        typer.Argument(metavar="RITUAL.yaml", parser=file_path, help="The ritual file to watch."),
    ],
    rerun: Annotated[
        bool, typer.Option("--run", help="Also run the ritual after every valid save.")
    ] = False,
    inputs: Annotated[
        list[str] | None,
        typer.Option(
            "--input", "-i", metavar="KEY=VALUE", help="Inputs for --run (the last inputs)."
        ),
    ] = None,
    input_file: Annotated[
        str | None,
        typer.Option("--input-file", metavar="FILE", help="Inputs for --run from a file."),
    ] = None,
    codex: CodexOpt = None,
    oracle: OracleOpt = None,
    resolve: Annotated[
        bool, typer.Option("--resolve", help="Also import the Python code the ritual names.")
    ] = False,
) -> None:
    """Re-validate a ritual on every save; with --run, re-run it too (Ctrl-C stops)."""
    from sanctum import api
    from sanctum.cli._parsing import parse_input_pairs, parse_oracle_overrides
    from sanctum.cli.validate import validate_files

    values: dict[str, object] = {}
    if input_file is not None:
        values.update(api.load_input_file(input_file))
    values.update(parse_input_pairs(inputs or []))
    overrides = parse_oracle_overrides(oracle or [])
    check_codex(codex)
    saves = api.watch(ritual)
    try:
        for number, _saved in enumerate(saves):
            if number:
                typer.echo(f"{ritual} changed")
            bad = validate_files([ritual], resolve=resolve)
            if rerun and not bad:
                _run_once(ritual, values, codex, overrides)
            if not number:
                typer.echo(f"watching {ritual} (Ctrl-C to stop)")
    except KeyboardInterrupt:
        pass
    finally:
        close = getattr(saves, "close", None)
        if callable(close):
            close()
    typer.echo("stopped watching")


def _run_once(
    ritual: Path, values: dict[str, object], codex: str | None, oracles: dict[str, OracleOverride]
) -> None:
    """One run inside the watch loop; its exit status is reported, not raised."""
    from sanctum import api
    from sanctum.cli._perform import perform

    performance = api.run(
        ritual,
        values,
        codex=codex,
        modes=view_modes([], json_lines=False),
        oracles=oracles,
    )
    try:
        perform(performance, modes=[], json_lines=False)
    except typer.Exit as ended:
        if ended.exit_code == EXIT_CTRL_C:
            raise KeyboardInterrupt from None
        typer.echo(f"run ended with exit status {ended.exit_code}")
    except Exception as exc:
        from sanctum.cli._common import describe_error, exit_code_for

        if exit_code_for(exc) is None:
            raise
        typer.echo(describe_error(exc), err=True)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum watch`` to the root app."""
    app.command("watch")(watch)
