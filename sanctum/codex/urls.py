"""Where a Codex lives: the URL forms that name a Seal store, parsed in one place.

The command line (``--codex``), the ritual file (``codex:``) and the facade all accept
the same forms, so a typo never becomes a new SQLite file:

* ``memory:`` (or ``memory``) — an ephemeral MemoryCodex;
* ``sqlite:///relative/path.db`` and ``sqlite:////absolute/path.db`` (SQLAlchemy's
  convention), or a plain file path ending in ``.db``, ``.sqlite`` or ``.sqlite3`` —
  a SqliteCodex;
* ``postgresql://…`` (or ``postgres://…``) — a PostgresCodex (the ``postgres`` extra).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sanctum.errors import SealError

__all__ = ["CODEX_FORMS", "CodexAddress", "parse_codex_url"]

CODEX_FORMS = (
    "sqlite:///relative/path.db",
    "sqlite:////absolute/path.db",
    "postgresql://user@host/db",
    "memory:",
    "a file path ending in .db, .sqlite or .sqlite3",
)
"""The accepted Codex URL forms, for messages and help."""

_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


@dataclass(frozen=True, slots=True)
class CodexAddress:
    """A parsed Codex URL.

    ``kind`` is ``"memory"``, ``"sqlite"`` or ``"postgres"``; ``path`` the SQLite file
    (relative paths resolved against the ``base`` given to :func:`parse_codex_url`);
    ``url`` the URL as given (for PostgreSQL, normalised to ``postgresql://``).
    """

    kind: Literal["memory", "sqlite", "postgres"]
    url: str
    path: Path | None = None


def _refuse(url: str, why: str) -> SealError:
    return SealError(f"{why}; a codex is one of: {', '.join(CODEX_FORMS)}", location=url)


def _is_drive(url: str) -> bool:
    """``C:\\codex.db``: a Windows drive letter, not a URL scheme."""
    return len(url) > 2 and url[0].isalpha() and url[1] == ":" and url[2] in "/\\"


def parse_codex_url(url: str, *, base: Path | None = None) -> CodexAddress:
    """Parse a Codex URL into its kind and, for SQLite, its file.

    Args:
        url: One of :data:`CODEX_FORMS`.
        base: Folder that relative SQLite paths are resolved against (default: left
            relative, i.e. the working directory when opened).

    Returns:
        The parsed address.

    Raises:
        SealError: If the URL is none of the accepted forms (the message lists them).
    """
    text = url.strip()
    if text in ("memory:", "memory"):
        return CodexAddress("memory", text)
    if text.startswith(("postgresql://", "postgres://")):
        return CodexAddress("postgres", text.replace("postgres://", "postgresql://", 1))
    rest: str
    if text.startswith("sqlite:"):
        if not text.startswith("sqlite:///"):
            raise _refuse(url, f"codex URL {url!r} is malformed (three slashes after sqlite:)")
        rest = text.removeprefix("sqlite:///")
        if rest in ("", "/") or rest.endswith("/"):
            raise _refuse(url, f"codex URL {url!r} names no file")
        if rest.strip("/") in (":memory:", "memory:"):
            raise _refuse(url, f"codex URL {url!r} would be a file named {rest!r}; write memory:")
    else:
        if "://" in text or (_SCHEME.match(text) and not _is_drive(text)):
            raise _refuse(url, f"unknown codex URL {url!r}")
        if not text.lower().endswith(_SQLITE_SUFFIXES):
            raise _refuse(
                url, f"unknown codex {url!r} (a plain path must end in .db, .sqlite or .sqlite3)"
            )
        rest = text
    path = Path(rest).expanduser()
    if base is not None and not path.is_absolute():
        path = base / path
    return CodexAddress("sqlite", text, path)
