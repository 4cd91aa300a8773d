"""Options shared by ``run`` and ``resume`` (typer annotations only; no heavy imports)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "CodexOpt",
    "JsonOpt",
    "OracleOpt",
    "QuietOpt",
    "StreamOpt",
    "TraceOpt",
    "check_codex",
    "file_path",
    "split_modes",
    "view_modes",
]

StreamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--stream",
        "-s",
        metavar="MODE",
        help=(
            "What to stream, one of sanctum.omens.STREAM_MODES: updates (each Sigil's "
            "delta), values (the Aether after each superstep), omens (lifecycle events: "
            "runs, supersteps begun, Sigils, Seals, repairs), tokens (model tokens as they "
            "arrive), agent (what an agent decided: oracle fallbacks, compactions, turn "
            "budgets, loop guards, approvals). Repeat or comma-separate to combine. "
            "Default: updates under --json; people see a line per superstep, tokens, "
            "retries, repairs and agent events."
        ),
    ),
]
JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print one JSON object per line (Omens, then a final result object).",
    ),
]
CodexOpt = Annotated[
    str | None,
    typer.Option(
        "--codex",
        metavar="URL",
        envvar="SANCTUM_CODEX",
        help=(
            "Where Seals are kept: sqlite:///relative/path.db, sqlite:////absolute/path.db, "
            "a path ending in .db/.sqlite/.sqlite3, postgresql://…, or memory: (gone when "
            "the process ends). Default: .sanctum/codex.db in the working directory."
        ),
    ),
]
TraceOpt = Annotated[
    Path | None,
    typer.Option("--trace", metavar="PATH", help="Record a trace of the run to PATH."),
]
OracleOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--oracle",
        metavar="NAME=PROVIDER:MODEL",
        help="Override one of the ritual's oracles, e.g. --oracle local=ollama:qwen2.5:0.5b.",
    ),
]


QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help=(
            "Leave out the final Aether tree: the superstep lines, the status and the "
            "invocation id remain (no effect with --json)."
        ),
    ),
]


def split_modes(values: list[str] | None) -> list[str]:
    """Flatten ``--stream`` values (repeated and/or comma-separated), checking each.

    The choices are the keys of :data:`sanctum.omens.STREAM_MODES` (imported here, not at
    module level, so ``--help`` stays fast), so a stream mode added to the engine can be
    chosen without touching the command line.

    Returns:
        The modes, each once, in the order given.

    Raises:
        typer.BadParameter: For an unknown mode, naming the choices.
    """
    from sanctum.omens import STREAM_MODES

    return split_choices(values, tuple(STREAM_MODES), what="stream mode", option="--stream")


def view_modes(modes: list[str], json_lines: bool) -> list[str]:
    """The modes to ask the façade for: the user's for JSON, all a person's view needs else.

    The human view listens to every mode of :data:`sanctum.omens.STREAM_MODES` (it draws
    a line per superstep, tokens, retries, repairs and the ``agent`` events whatever was
    chosen; the chosen ``modes`` only add detail), so a new mode's Omens reach it.

    Args:
        modes: The modes given with ``--stream`` (possibly none).
        json_lines: Whether ``--json`` was given.

    Returns:
        Mode names for ``sanctum.api.run``/``resume``: ``modes`` (default ``["updates"]``)
        under ``--json``, else every stream mode, sorted.
    """
    if json_lines:
        return modes or ["updates"]
    from sanctum.omens import STREAM_MODES

    return sorted({*modes, *STREAM_MODES})


def check_codex(url: str | None) -> str | None:
    """Refuse a ``--codex`` value that is none of the accepted forms, before any work.

    Returns:
        ``url`` unchanged.

    Raises:
        SealError: Naming the accepted forms (the command exits with status 2).
    """
    from sanctum.api import codex_path

    codex_path(url)
    return url


def file_path(text: str) -> Path:
    """Parse a file argument, refusing an empty one (``Path("")`` would be ``.``).

    Used as the ``parser=`` of file arguments (``sanctum run ''``).

    Raises:
        typer.BadParameter: For an empty or blank path (the command exits with status 2).
    """
    if not text.strip():
        raise typer.BadParameter("the path is empty; name a ritual file")
    return Path(text)


def split_statuses(values: list[str] | None, statuses: tuple[str, ...]) -> list[str]:
    """The ``--status`` values, repeated or comma-separated, each one of ``statuses``.

    Returns:
        The statuses asked for, lower-cased, each once, in the order given ([] for none).

    Raises:
        typer.BadParameter: For a status that is none of ``statuses`` (exit 2), with a
            did-you-mean.
    """
    return split_choices(values, statuses, what="status", option="--status", fold=True)


def split_choices(
    values: list[str] | None,
    choices: tuple[str, ...],
    *,
    what: str,
    option: str,
    fold: bool = False,
) -> list[str]:
    """Flatten an option given repeated and/or comma-separated, checking each word.

    Args:
        values: The option's values as typed (None when not given).
        choices: The words allowed.
        what: What a word is, for the message (``"status"``).
        option: The option, for the message (``"--status"``).
        fold: Lower-case each word first.

    Returns:
        The words, each once, in the order given ([] for none).

    Raises:
        typer.BadParameter: For a word that is none of ``choices`` (exit 2), with a
            did-you-mean when one is close, naming the choices.
    """
    import difflib

    wanted: list[str] = []
    for value in values or []:
        for part in value.split(","):
            word = part.strip().lower() if fold else part.strip()
            if not word:
                continue
            if word not in choices:
                close = difflib.get_close_matches(word, choices, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise typer.BadParameter(
                    f"unknown {what} {part.strip()!r}{hint} (choose from {', '.join(choices)})",
                    param_hint=option,
                )
            if word not in wanted:
                wanted.append(word)
    return wanted
