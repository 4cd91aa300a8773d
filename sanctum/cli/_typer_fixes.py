"""Two adjustments to Typer's rich output, applied once when the app first runs.

* Help: Typer (0.2x) prints a type placeholder after every option, ``<bool>`` even for
  a flag that takes no value (``--json <bool>``). A flag is shown bare.
* Usage errors (an unknown option, a bad value): Typer draws a framed panel under the
  usage line. sanctum prints one line on stderr instead, like its other errors:
  ``error: No such option: --bogus (see `sanctum run --help`)``.

Both wrap Typer's own functions and fall back to them for anything else; if a future
Typer renames them, nothing is patched and its default output remains.

The usage-error wrapper is installed only when a usage error actually escapes (see
:class:`SanctumGroup`): ``typer.rich_utils`` pulls in most of rich (markdown, syntax,
tracebacks), and a command that succeeds must not pay for importing it.
"""

from __future__ import annotations

from typing import Any

import typer
import typer.core

__all__ = ["SanctumGroup", "apply", "usage_error_line"]

_applied = {"done": False}

# click's ClickException, found through Typer's public BadParameter: Typer 0.2x vendors
# click as ``typer._click``, earlier Typers use click itself.
_CLICK_EXCEPTION: type[Exception] = next(
    kind for kind in typer.BadParameter.__mro__ if kind.__name__ == "ClickException"
)


def apply() -> None:
    """Install the adjustments (idempotent)."""
    if _applied["done"]:
        return
    _applied["done"] = True
    _bare_flags()


class SanctumGroup(typer.core.TyperGroup):
    """The root command group: installs the one-line usage errors when one escapes.

    Typer formats a usage error with ``typer.rich_utils.rich_format_error`` after it
    has left the group's parsing (:meth:`make_context`) or a subcommand's
    (:meth:`invoke`); the wrapper is put in place right then, so that a run without a
    usage error never imports ``typer.rich_utils``. The exception itself is re-raised
    untouched.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Any = None,
        **extra: Any,
    ) -> Any:
        """Parse the root's arguments (a usage error installs the one-line wrapper).

        The help adjustments are applied here, when the app runs, never at import.
        """
        apply()
        try:
            return super().make_context(info_name, args, parent, **extra)
        except _CLICK_EXCEPTION:
            _one_line_usage_errors()
            raise

    def invoke(self, ctx: Any) -> Any:
        """Run the chosen subcommand (a usage error installs the one-line wrapper)."""
        try:
            return super().invoke(ctx)
        except _CLICK_EXCEPTION:
            _one_line_usage_errors()
            raise


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
    # Typer's value adapters word a converter's ValueError as "Value error, <text>"
    message = message.replace(": Value error, ", ": ")
    ctx: Any = getattr(error, "ctx", None)
    root_hint = _root_option_hint(error, ctx)
    if root_hint:  # click's "Possible options" would point at the wrong ones
        return f"error: No such option: {error.option_name}; {root_hint}"
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        names = ctx.help_option_names
        flag = "--help" if "--help" in names else names[0]
        return f"error: {message} (see `{ctx.command_path} {flag}`)"
    return f"error: {message}"


_ROOT_OPTIONS = ("--debug", "--version")
"""Options of ``sanctum`` itself, which a user may put after the command by mistake."""


def _root_option_hint(error: Any, ctx: Any) -> str:
    """Where a root option given to a subcommand belongs, or "" (any other error).

    ``sanctum run --debug x.yaml`` is refused by click as an unknown option of ``run``;
    the hint names the form that works: ``sanctum --debug run …``.
    """
    name = getattr(error, "option_name", None)
    if name not in _ROOT_OPTIONS or ctx is None or ctx.parent is None:
        return ""
    words = str(ctx.command_path).split()
    root, command = words[0], " ".join(words[1:])
    if name == "--version":
        return f"it is an option of `{root}` itself: `{root} --version`"
    return (
        f"it is an option of `{root}` itself: put it before the command "
        f"(`{root} {name} {command} …`)"
    )


def _one_line_usage_errors() -> None:
    if _applied.get("errors"):
        return
    _applied["errors"] = True
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
