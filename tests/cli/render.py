"""A deterministic console for golden transcripts: fixed width, no colour, no terminal."""

from __future__ import annotations

import io

from rich.console import Console

__all__ = ["console", "text_of"]


def console(width: int = 80) -> Console:
    """A Console writing to memory, 80 columns, no colour, no live updates."""
    return Console(
        file=io.StringIO(),
        width=width,
        color_system=None,
        force_terminal=False,
        legacy_windows=False,
        highlight=False,
        emoji=False,
    )


def text_of(target: Console) -> str:
    """Everything the console printed, trailing spaces trimmed per line."""
    stream = target.file
    assert isinstance(stream, io.StringIO)
    return "\n".join(line.rstrip() for line in stream.getvalue().splitlines()) + "\n"
