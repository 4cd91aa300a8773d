"""Shared plumbing of the command modules: exit statuses, error reporting, output.

Only the standard library and typer are imported here at module level, so that
``sanctum --help`` stays as quick as a one-command Typer app; rich is imported by the
functions that draw for people.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import typer

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EPHEMERAL_NOTE",
    "EXIT_BROKEN_PIPE",
    "EXIT_CTRL_C",
    "EXIT_DONE",
    "EXIT_FAILED",
    "EXIT_PAUSED",
    "EXIT_STATUS_HELP",
    "EXIT_USAGE",
    "ROOT_EPILOG",
    "describe_error",
    "error_exit",
    "exit_code_for",
    "guarded",
    "is_debug",
    "json_errors",
    "make_console",
    "print_json_line",
    "set_debug",
    "warn_repeated_keys",
]

EXIT_DONE = 0
"""The ritual reached END (or the command succeeded)."""
EXIT_FAILED = 1
"""The ritual failed (a Sigil raised, a recursion limit, a dead model server...)."""
EXIT_USAGE = 2
"""Bad usage, bad input or a bad ritual file."""
EXIT_PAUSED = 3
"""An interrupt paused the invocation; resume it."""
EXIT_CTRL_C = 130
"""Ctrl-C stopped the command (the invocation stays resumable)."""

EXIT_BROKEN_PIPE = 141
"""The reader of stdout went away (128 + SIGPIPE, as a shell reports it)."""

EXIT_STATUS_HELP = """\
Exit status:
  0    done (the ritual reached END; the command succeeded)
  1    the ritual failed (sanctum test: a case failed)
  2    bad usage, bad input or a bad ritual file; nothing ran
  3    paused by an interrupt: continue with sanctum resume
  130  stopped by Ctrl-C (the invocation stays resumable from its last Seal)
  141  the reader of a pipe went away (sanctum run ... | head)"""
"""The exit-status table shown at the end of ``--help`` (the scripting contract)."""

ROOT_EPILOG = f"""\
Examples:
  sanctum run rituals/hello.yaml --input name=Ada
  sanctum run rituals/triage.yaml --input ticket='charged twice' --invocation t-1
  sanctum resume --invocation t-1 --update approved=true
  sanctum invocations --status paused
  sanctum validate rituals/ && sanctum test rituals/
  sanctum --debug run x.yaml      (tracebacks: --debug goes before the command)

{EXIT_STATUS_HELP}"""
"""The root ``--help`` epilog: examples, then the exit statuses."""

EPHEMERAL_NOTE = (
    "not resumable: a memory: codex ends with this process; to resume later, run without "
    "--codex (the default .sanctum/codex.db) or with a sqlite:/// or postgresql:// codex"
)
"""What a pause in a ``memory:`` codex prints instead of a resume command."""

_P = ParamSpec("_P")
_R = TypeVar("_R")

_debug = {"on": False}


def set_debug(flag: bool) -> None:
    """Show tracebacks for expected errors too (the root ``--debug`` option)."""
    _debug["on"] = flag


def is_debug() -> bool:
    """Whether ``--debug`` (or ``SANCTUM_DEBUG=1``) asked for tracebacks."""
    return _debug["on"] or os.environ.get("SANCTUM_DEBUG", "") not in ("", "0")


def error_exit(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one clear message on stderr and leave with ``code``.

    Raises:
        typer.Exit: Always, carrying ``code``.
    """
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def exit_code_for(exc: BaseException) -> int | None:
    """The exit status an expected error maps to, or None for an unexpected one (a bug)."""
    from sanctum.api import RitualInputError, TraceFileError
    from sanctum.errors import (
        CodexUnavailableError,
        OracleError,
        RitualFileError,
        SanctumError,
        SealError,
    )

    if isinstance(exc, CodexUnavailableError):
        return EXIT_FAILED  # the store is down or busy: nothing about the input is wrong
    if isinstance(exc, RitualFileError | SealError | RitualInputError | TraceFileError):
        return EXIT_USAGE
    if isinstance(exc, OracleError | SanctumError):
        return EXIT_FAILED
    if isinstance(exc, OSError | UnicodeDecodeError):
        return EXIT_USAGE
    return None


_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Unicode bidirectional controls: they reorder what a terminal shows ("Trojan Source")."""
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL_BUT_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")


def printable(text: Any, *, lines: bool = False) -> str:
    """Text from a run, made safe to print: no control character reaches the terminal.

    Every C0 control (ESC, BEL, CR...), DEL, C1 control (U+0080-U+009F) and Unicode
    bidirectional control (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) is
    written as its JSON escape (``\\u001b``, ``\\n``, ``\\u202e``), the form values are
    shown in, so a key, a name, a reason or an error message cannot move the cursor,
    clear the screen, retitle the window or reorder the text it is shown in. Print the
    result as a rich ``Text`` (never as a markup string), so ``[bold]`` in it stays
    literal.

    Args:
        text: Anything; non-strings are converted with ``str`` first.
        lines: Keep newlines and tabs (for prose: reasons, messages, streamed tokens).

    Returns:
        The text with its control characters escaped.
    """
    raw = text if isinstance(text, str) else str(text)
    pattern = _CONTROL_BUT_LINES if lines else _CONTROL
    return pattern.sub(_escaped, raw)


def _escaped(match: re.Match[str]) -> str:
    return json.dumps(match.group(), ensure_ascii=True)[1:-1]


def describe_error(exc: BaseException) -> str:
    """A one-line-per-problem message for an expected error (control characters escaped).

    A failure a model server caused gets one more line, its likely fix (``hint: ...``).
    """
    from sanctum.api import oracle_hint

    hint = oracle_hint(exc)
    text = _describe(exc)
    return printable(text if hint is None else f"{text}\n{hint}", lines=True)


def _describe(exc: BaseException) -> str:
    from sanctum.errors import RitualFileError

    if isinstance(exc, RitualFileError) or isinstance(exc.__cause__, RitualFileError):
        return str(exc)  # path:line:column: message, one line per problem
    if isinstance(exc, FileNotFoundError):
        return f"error: no such file: {exc.filename or exc}"
    if isinstance(exc, IsADirectoryError):
        return f"error: is a directory, not a file: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"error: permission denied: {exc.filename or exc}"
    if isinstance(exc, OSError) and exc.filename:
        return f"error: cannot read {exc.filename}: {exc.strerror or exc}"
    return f"error: {exc}"


def warn_repeated_keys(pairs: list[str], option: str) -> None:
    """Warn on stderr, once per name, when ``KEY=VALUE`` pairs give a key twice.

    The last value wins (as before); the warning says which one was kept, so a
    ``--input n=3 --input n=4`` typo does not pass unnoticed.
    """
    seen: dict[str, int] = {}
    last: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            continue  # the parser refuses it with its own message
        seen[key] = seen.get(key, 0) + 1
        last[key] = value
    for key, count in seen.items():
        if count > 1:
            typer.echo(
                f"warning: {option} {printable(key)} was given {count} times; the last "
                f"value wins ({printable(key)}={printable(last[key])})",
                err=True,
            )


@contextlib.contextmanager
def json_errors(enabled: bool) -> Iterator[None]:
    """Under ``--json``, an expected error also prints one JSON line on stdout.

    A machine reading stdout then sees why nothing (or nothing more) came:
    ``{"kind": "error", "error": MESSAGE, "error_type": CLASS, "exit_status": N}``
    (N is the status the command leaves with: 2 for bad usage, input or ritual files,
    1 for a failure). The exception is re-raised untouched; :func:`guarded` still
    prints the message on stderr.
    """
    try:
        yield
    except Exception as exc:
        if enabled:
            _json_error(exc)
        raise


def _json_error(exc: Exception) -> None:
    """Print the ``{"kind": "error", ...}`` line of an expected error, once."""
    if getattr(exc, "_sanctum_json_reported", False):
        return
    code = exit_code_for(exc)
    if code is None and isinstance(exc, typer.BadParameter):
        code = EXIT_USAGE
    if code is None:
        return
    message = printable(_describe(exc), lines=True).removeprefix("error: ")
    print_json_line(
        {"kind": "error", "error": message, "error_type": type(exc).__name__, "exit_status": code}
    )
    try:
        exc._sanctum_json_reported = True  # type: ignore[attr-defined]
    except AttributeError:  # an exception with __slots__: printing twice is the lesser harm
        pass


def guarded(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Wrap a command so expected errors print one message instead of a traceback.

    Expected errors (sanctum's own, missing or unreadable files) are reported on stderr
    and mapped to an exit status (see :func:`exit_code_for`); with ``--debug`` the
    traceback is printed first. A command run with ``--json`` (its ``json_lines``
    parameter) also prints the error as one JSON line on stdout (see
    :func:`json_errors`). Ctrl-C leaves with status 130. Unexpected exceptions (bugs)
    propagate with their traceback.
    """

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:
            # the reader went away (`sanctum invocations --json | head -1`): stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(EXIT_BROKEN_PIPE) from None
        except KeyboardInterrupt:
            if is_debug():
                traceback.print_exc()
            typer.echo("interrupted (Ctrl-C)", err=True)
            raise typer.Exit(EXIT_CTRL_C) from None
        except SystemExit as escaped:
            # typer.Exit is no SystemExit: this one came from code the ritual names
            # (sys.exit() in a step module); never let it become our exit status.
            if is_debug():
                traceback.print_exc()
            typer.echo(
                f"error: the ritual's Python code called sys.exit({escaped.code!r}); sanctum "
                "stopped there (raise an exception instead of exiting the process)",
                err=True,
            )
            raise typer.Exit(EXIT_FAILED) from None
        except Exception as exc:
            code = exit_code_for(exc)
            if code is None:
                raise
            if kwargs.get("json_lines"):
                _json_error(exc)
            if is_debug():
                traceback.print_exception(exc)
            typer.echo(describe_error(exc), err=True)
            raise typer.Exit(code) from None

    return wrapper


class _TrimmedLines:
    """A text stream that drops the spaces ending each line (rich pads and wraps with them).

    Spaces at the end of a write are held back until the next write shows whether a
    line break follows, so text streamed in pieces (model tokens) keeps its spaces.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        text = self._pending + text
        body = text.rstrip(" ")
        self._pending = text[len(body) :]
        self._stream.write("\n".join(line.rstrip(" ") for line in body.split("\n")))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return int(self._stream.fileno())

    @property
    def encoding(self) -> str:
        return str(getattr(self._stream, "encoding", "utf-8") or "utf-8")


def make_console(*, stderr: bool = False, width: int | None = None) -> Console:
    """A rich Console for people: colour and live updates only on a terminal.

    rich honours ``NO_COLOR`` and ``TERM=dumb`` and draws plainly when the stream is
    not a terminal; ``COLUMNS`` fixes the width. Off a terminal, lines carry no
    trailing spaces (a pipe or a file gets clean lines).
    """
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        console = Console(stderr=stderr, width=width, highlight=False, soft_wrap=False)
    else:
        console = Console(
            file=_TrimmedLines(stream),  # type: ignore[arg-type]
            width=width,
            highlight=False,
            soft_wrap=False,
        )
    # rich answers a closed pipe with SystemExit(1); `guarded` handles BrokenPipeError
    console.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]
    return console


def _broken_pipe() -> None:
    raise BrokenPipeError(32, "the reader of the output went away")


def _json_default(value: Any) -> Any:
    """Fallback for values strict JSON cannot carry: containers become lists, the rest repr."""
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return repr(value)


_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_BIDI}]")
"""What JSON leaves raw but a terminal acts on: DEL, C1 and bidirectional controls."""


def print_json_line(obj: Any) -> None:
    """Write one JSON object on its own line to stdout and flush.

    Non-ASCII text stays readable; DEL, C1 and bidirectional controls are written as
    ``\\uXXXX`` escapes (the same JSON value), so the line is safe on a terminal too.
    """
    text = json.dumps(obj, ensure_ascii=False, default=_json_default)
    sys.stdout.write(_JSON_UNSAFE.sub(_escaped, text) + "\n")
    sys.stdout.flush()
