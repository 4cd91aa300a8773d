"""What ``validate`` says besides errors: warnings that do not fail a ritual file."""

from __future__ import annotations

from pathlib import Path

from sanctum.errors import FileProblem, RitualFileError

__all__ = ["validate_warnings"]


def validate_warnings(path: str | Path) -> list[FileProblem]:
    """Warnings about a ritual file, which do not make it fail validation.

    Each is a FileProblem whose message starts ``warning:``. Today: spells an agent
    may cast whose ``spell.json`` gives no access label (they count as ``write``), and
    floats of an ``inputs:``/``aether:`` default that drop digits as written (``3.10``
    read as 3.1: a version meant as text; see ``LoadedFile.warnings``), and an agent
    role's ``context`` layer that reads an input into the system prompt.
    Nothing is imported or run; a file that does not load gives none (its errors come
    from :func:`validate`).

    Args:
        path: The ritual file.

    Returns:
        The warnings in file order, each printable as ``path:line:column: warning: ...``.
    """
    from sanctum.ritualfile import load
    from sanctum.ritualfile.kinds.agent import unlabeled_spells, untrusted_context

    try:
        ritual = load(Path(path))
    except (RitualFileError, OSError):
        return []
    found = [*unlabeled_spells(ritual), *untrusted_context(ritual), *ritual.loaded.warnings()]
    return sorted(found, key=lambda warning: (warning.line, warning.column))
