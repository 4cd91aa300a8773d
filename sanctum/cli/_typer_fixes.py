"""Two adjustments to Typer's rich output, applied once when the app is built.

* Help: Typer (0.2x) prints a type placeholder after every option, ``<bool>`` even for
  a flag that takes no value (``--json <bool>``). A flag is shown bare.
* Usage errors (an unknown option, a bad value): Typer draws a framed panel under the
  usage line. sanctum prints one line on stderr instead, like its other errors:
  ``error: No such option: --bogus (see `sanctum run --help`)``.

Both wrap Typer's own functions and fall back to them for anything else; if a future
Typer renames them, nothing is patched and its default output remains.
"""

from __future__ import annotations

from typing import Any

import typer
import typer.core

__all__ = ["apply"]

_applied = {"done": False}


def apply() -> None:
    """Install the adjustments (idempotent)."""
    if _applied["done"]:
        return
    _applied["done"] = True
    _bare_flags()
    _one_line_usage_errors()


def _bare_flags() -> None:
    option_class: Any = getattr(typer.core, "TyperOption", None)
    original = getattr(option_class, "display_type_rich", None)
    if original is None:
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and getattr(self, "metavar", None) is None:
            return None
        result: str | None = original(self, ctx)
        return result

    option_class.display_type_rich = display_type_rich


def usage_error_line(error: Any) -> str:
    """One line for a usage error (a click ``ClickException``): the message and where help is."""
    message = " ".join(str(error.format_message()).split())
    ctx: Any = getattr(error, "ctx", None)
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        names = ctx.help_option_names
        flag = "--help" if "--help" in names else names[0]
        return f"error: {message} (see `{ctx.command_path} {flag}`)"
    return f"error: {message}"


def _one_line_usage_errors() -> None:
    try:
        from typer import rich_utils
    except ImportError:  # pragma: no cover - rich is a dependency of the CLI
        return
    original = getattr(rich_utils, "rich_format_error", None)
    if original is None:
        return

    def rich_format_error(self: Any) -> None:
        if type(self).__name__ == "NoArgsIsHelpError":
            original(self)
            return
        typer.echo(usage_error_line(self), err=True)

    setattr(rich_utils, "rich_format_error", rich_format_error)  # noqa: B010
