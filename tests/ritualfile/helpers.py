"""Shared helpers for the ritual-file tests: write a file, expect its problems."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sanctum.errors import RitualFileError
from sanctum.ritualfile import load_ritual


def write(folder: Path, text: str, name: str = "ritual.yaml") -> Path:
    """Write a dedented ritual file (with a .git marker so the folder is the project)."""
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems_of(path: Path, env: dict[str, str] | None = None) -> list[str]:
    """The ``line:column: message`` lines load_ritual reports (path stripped)."""
    with pytest.raises(RitualFileError) as caught:
        load_ritual(path, env=env or {})
    return [f"{p.line}:{p.column}: {p.message}" for p in caught.value.problems]


MINIMAL = """
sanctum: 1
name: tiny
aether:
  x: {}
entry: a
sigils:
  a:
    set: {x: "1"}
    next: END
"""
