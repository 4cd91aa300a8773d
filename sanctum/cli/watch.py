"""``sanctum watch`` — re-validate (and optionally re-run) a ritual on every save."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from sanctum.cli._common import EXIT_CTRL_C, guarded
from sanctum.cli._options import CodexOpt, OracleOpt, check_codex, file_path

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
    from watchfiles import watch as changes_of

    from sanctum import api
    from sanctum.api._files import check_regular_file
    from sanctum.cli.validate import validate_files

    values: dict[str, object] = {}
    if input_file is not None:
        values.update(api.load_input_file(input_file))
    values.update(api.parse_input_pairs(inputs or [], raw=True))
    overrides = api.parse_oracle_overrides(oracle or [])
    check_codex(codex)
    check_regular_file(ritual)  # a named pipe: reading it (to fingerprint it) never ends
    target = os.path.realpath(ritual)

    def fingerprint() -> tuple[int, str] | None:
        try:
            return ritual.stat().st_mtime_ns, api.ritual_digest(ritual)
        except OSError:
            return None

    seen = {"digest": fingerprint()}

    def check_and_run() -> None:
        bad = validate_files([ritual], resolve=resolve)
        if rerun and not bad:
            _run_once(ritual, values, codex, overrides)

    try:
        check_and_run()
        typer.echo(f"watching {ritual} (Ctrl-C to stop)")
        # The file's state, not the events, decides: a save (or a touch) between the
        # first check and the watcher starting is still seen.
        for _changes in changes_of(
            ritual.resolve().parent,
            watch_filter=lambda _change, path: os.path.realpath(path) == target,
            debounce=400,
            step=50,
            rust_timeout=500,
            yield_on_timeout=True,
        ):
            digest = fingerprint()
            if digest == seen["digest"]:
                continue
            seen["digest"] = digest
            typer.echo(f"{ritual} changed")
            check_and_run()
    except KeyboardInterrupt:
        pass
    typer.echo("stopped watching")


def _run_once(
    ritual: Path, values: dict[str, object], codex: str | None, oracles: dict[str, dict[str, str]]
) -> None:
    """One run inside the watch loop; its exit status is reported, not raised."""
    from sanctum import api
    from sanctum.cli._perform import perform

    performance = api.run(
        ritual,
        values,
        codex=codex,
        modes=["omens", "tokens", "values"],
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
