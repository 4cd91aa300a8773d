"""``sanctum resume`` — continue a paused or stopped invocation."""

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

__all__ = ["register", "resume"]


@guarded
def resume(
    invocation: Annotated[
        str,
        typer.Option(
            "--invocation",
            metavar="ID",
            help="The invocation to continue (or a unique prefix of 8+ characters).",
        ),
    ],
    updates: Annotated[
        list[str] | None,
        typer.Option(
            "--update",
            "-u",
            metavar="KEY=VALUE",
            help=(
                "A value merged into the Aether before continuing; the name must be a "
                "conduit or input of the ritual (text for type: string, else JSON when "
                "it parses)."
            ),
        ),
    ] = None,
    update_file: Annotated[
        str | None,
        typer.Option(
            "--update-file", metavar="FILE", help="Updates from a JSON or YAML file; - for stdin."
        ),
    ] = None,
    seal: Annotated[
        str | None,
        typer.Option("--seal", metavar="SEAL_ID", help="Continue from this historic Seal."),
    ] = None,
    ritual: Annotated[
        Path | None,
        typer.Option(
            "--ritual",
            metavar="PATH",
            parser=file_path,
            help=(
                "The ritual file, when it is no longer where the run found it (found "
                "otherwise from the Seal; still checked against the version that ran)."
            ),
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help=(
                "Resume even though the ritual file (a circle file, a Python module it "
                "calls) changed since the run; let --trace replace a file holding "
                "another invocation's trace."
            ),
        ),
    ] = False,
    stream: StreamOpt = None,
    json_lines: JsonOpt = False,
    codex: CodexOpt = None,
    trace: TraceOpt = None,
    oracle: OracleOpt = None,
    record: RecordOpt = None,
    replay: ReplayOpt = None,
    quiet: QuietOpt = False,
    approve: Annotated[
        bool,
        typer.Option("--approve", help="Approve every call the agent paused on."),
    ] = False,
    reject: Annotated[
        bool,
        typer.Option("--reject", help="Reject every call the agent paused on."),
    ] = False,
    reason: Annotated[
        str | None,
        typer.Option("--reason", metavar="TEXT", help="Why (with --reject or --approve)."),
    ] = None,
    principal: AsOpt = None,
    role: RoleOpt = None,
    mandate_file: MandateFileOpt = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            metavar="local|queue",
            help="local: here, now; queue: queue it for a `sanctum worker` (--codex URL).",
        ),
    ] = "local",
    queue: Annotated[
        str | None,
        typer.Option(
            "--queue",
            metavar="NAME",
            help="With --executor queue: the queue to put the resume in (default: the one "
            "the invocation was submitted to).",
        ),
    ] = None,
) -> None:
    """Continue an invocation from its latest Seal; the ritual is found from the Seal."""
    from sanctum import api
    from sanctum.cli._parsing import parse_input_pairs, parse_oracle_overrides
    from sanctum.cli._perform import perform

    with json_errors(json_lines):
        modes = split_modes(stream)
        check_codex(codex)
        values: dict[str, object] = {}
        if update_file is not None:
            values.update(api.load_input_file(update_file))
        warn_repeated_keys(updates or [], "--update")
        values.update(parse_input_pairs(updates or [], option="--update"))
        if approve and reject:
            raise typer.BadParameter("give --approve or --reject, not both")
        if reason is not None and not (approve or reject):
            raise typer.BadParameter("--reason goes with --approve or --reject")
        if queue is not None and executor != "queue":
            raise typer.BadParameter("--queue goes with --executor queue", param_hint="--queue")
        if executor == "local" or (executor == "queue" and codex):
            invocation = _whole_id(invocation, codex)
        if executor != "local":
            from sanctum.cli.queue import queue_resume

            here: dict[str, object] = {"--seal": seal, "--ritual": ritual, "--trace": trace}
            here |= {"--stream": stream, "--approve": approve, "--reject": reject}
            here |= {"--record": record, "--replay": replay}
            queue_resume(invocation, values, executor, codex, here, queue=queue)
            return
        performance = api.resume(
            invocation,
            updates=values,
            seal_id=seal,
            force=force,
            codex=codex,
            trace_path=trace,
            modes=view_modes(modes, json_lines),
            oracles=parse_oracle_overrides(oracle or []),
            record=record,
            replay=replay,
            mandate=mandate_of(principal, role, mandate_file),
            decision="approve" if approve else "reject" if reject else None,
            reason=reason,
            ritual=ritual,
        )
        perform(performance, modes=modes, json_lines=json_lines, quiet=quiet)


def _whole_id(invocation: str, codex: str | None) -> str:
    """The whole id a unique prefix names (``invocation`` itself when it names none).

    Raises:
        SealError: If the prefix begins several ids, or the codex cannot be read.
    """
    import asyncio

    from sanctum import api

    return asyncio.run(api.resolve_invocation(invocation, codex))


def register(app: typer.Typer) -> None:
    """Attach ``sanctum resume`` to the root app."""
    app.command("resume", epilog=RESUME_EPILOG)(resume)


RESUME_EPILOG = f"""\
Examples:
  sanctum resume --invocation t-1 --update approved=true
  sanctum resume --invocation t-1 --update-file answers.yaml --quiet
  sanctum resume --invocation t-1 --seal 9c34e93a      (a unique prefix of a seal id)
  sanctum resume --invocation 3f0c9a51 --update approved=true   (8+ characters of an id)
  sanctum resume --invocation t-1 --force              (the ritual file changed since)
  sanctum resume --invocation t-1 --ritual moved/rituals/triage.yaml
  sanctum resume --invocation t-1 --approve --as carol --role support
  sanctum resume --invocation t-1 --reject --reason "wrong address"
  sanctum resume --invocation t-1 --update approved=true --executor queue --codex $URL
  sanctum resume --invocation t-1 --executor queue --queue gpu --codex $URL   (move it)

{EXIT_STATUS_HELP}"""
"""The ``sanctum resume --help`` epilog: examples, then the exit statuses."""
