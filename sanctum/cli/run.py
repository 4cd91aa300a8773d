"""``sanctum run`` — perform a ritual file from the start."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sanctum.cli._cassette import RecordOpt, ReplayOpt
from sanctum.cli._common import EXIT_STATUS_HELP, guarded, json_errors, warn_repeated_keys
from sanctum.cli._mandate import AsOpt, MandateFileOpt, RoleOpt, mandate_of
from sanctum.cli._options import (
    CodexOpt,
    JsonOpt,
    OracleOpt,
    QuietOpt,
    StreamOpt,
    TraceOpt,
    check_codex,
    file_path,
    split_modes,
    view_modes,
)

__all__ = ["register", "run"]


@guarded
def run(
    ctx: typer.Context,
    ritual: Annotated[
        Path,
        typer.Argument(metavar="RITUAL.yaml", parser=file_path, help="The ritual file to perform."),
    ],
    inputs: Annotated[
        list[str] | None,
        typer.Option(
            "--input",
            "-i",
            metavar="KEY=VALUE",
            help=(
                "An input value: kept as text for an input declared type: string, else "
                "read as JSON when it parses (a string otherwise). Repeatable."
            ),
        ),
    ] = None,
    input_file: Annotated[
        str | None,
        typer.Option(
            "--input-file", metavar="FILE", help="Inputs from a JSON or YAML file; - for stdin."
        ),
    ] = None,
    stream: StreamOpt = None,
    json_lines: JsonOpt = False,
    codex: CodexOpt = None,
    invocation: Annotated[
        str | None,
        typer.Option(
            "--invocation", metavar="ID", help="The invocation id (default: a fresh one)."
        ),
    ] = None,
    trace: TraceOpt = None,
    oracle: OracleOpt = None,
    record: RecordOpt = None,
    replay: ReplayOpt = None,
    quiet: QuietOpt = False,
    principal: AsOpt = None,
    role: RoleOpt = None,
    mandate_file: MandateFileOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Let --trace replace a file holding another invocation's trace."
        ),
    ] = False,
    batch: Annotated[
        str | None,
        typer.Option(
            "--inputs",
            metavar="FILE",
            help="JSON Lines: one invocation per line, run here; prints ID and status each.",
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", metavar="N", min=1, help="With --inputs: invocations at once."
        ),
    ] = 4,
) -> None:
    """Perform a ritual from the start; an interrupt pauses it (exit status 3)."""
    from sanctum import api
    from sanctum.cli._parsing import parse_input_pairs, parse_oracle_overrides
    from sanctum.cli._perform import perform

    with json_errors(json_lines):
        modes = split_modes(stream)
        check_codex(codex)
        if batch is not None:
            one_run = {"--input": inputs, "--input-file": input_file, "--invocation": invocation}
            extra = {"--stream": stream, "--trace": trace, "--record": record, "--replay": replay}
            given = [name for name, value in {**one_run, **extra}.items() if value]
            if given:
                raise typer.BadParameter(
                    f"--inputs runs a batch; {', '.join(given)} is for one run"
                )
            from sanctum.cli.submit import run_batch

            run_batch(
                str(ritual), batch, codex=codex, concurrency=concurrency, json_lines=json_lines
            )
            return
        source = ctx.get_parameter_source("concurrency")
        if source is not None and source.name != "DEFAULT":
            raise typer.BadParameter("--concurrency goes with --inputs (a batch), not one run")
        values: dict[str, object] = {}
        if input_file is not None:
            values.update(api.load_input_file(input_file))
        warn_repeated_keys(inputs or [], "--input")
        values.update(parse_input_pairs(inputs or []))
        performance = api.run(
            ritual,
            values,
            codex=codex,
            invocation_id=invocation,
            trace_path=trace,
            modes=view_modes(modes, json_lines),
            oracles=parse_oracle_overrides(oracle or []),
            record=record,
            replay=replay,
            mandate=mandate_of(principal, role, mandate_file),
            replace_trace=force,
        )
        perform(performance, modes=modes, json_lines=json_lines, quiet=quiet)


def register(app: typer.Typer) -> None:
    """Attach ``sanctum run`` to the root app."""
    app.command("run", epilog=RUN_EPILOG)(run)


RUN_EPILOG = f"""\
Examples:
  sanctum run rituals/hello.yaml --input name=Ada
  sanctum run rituals/collatz.yaml --input n=27 --quiet
  sanctum run rituals/triage.yaml --input-file ticket.json --invocation t-1
  sanctum run rituals/hello.yaml --json --stream updates,tokens | jq .
  sanctum run rituals/triage.yaml --inputs tickets.jsonl --concurrency 8
  sanctum --debug run x.yaml      (tracebacks: --debug goes before the command)

{EXIT_STATUS_HELP}"""
"""The ``sanctum run --help`` epilog: examples, then the exit statuses."""
