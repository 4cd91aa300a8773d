"""The one-line usage error: the message, tidied, and where help is."""

from __future__ import annotations

from typing import Any

from sanctum.cli._typer_fixes import usage_error_line


class _Error:
    def __init__(self, message: str, ctx: Any = None) -> None:
        self.message = message
        self.ctx = ctx

    def format_message(self) -> str:
        return self.message


def test_a_usage_error_is_one_tidy_line() -> None:
    line = usage_error_line(
        _Error("Invalid value for '--format':\n  Value error, 'svg' is not one of 'dot'.")
    )
    assert line == "error: Invalid value for '--format': 'svg' is not one of 'dot'."
