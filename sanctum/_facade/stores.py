"""Codex URLs and the history they keep: open a store, list invocations and Seals."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING

from sanctum.errors import SealError

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, InvocationSummary, Seal

__all__ = ["DEFAULT_CODEX_PATH", "list_invocations", "list_seals", "open_codex"]


DEFAULT_CODEX_PATH = Path(".sanctum") / "codex.db"
"""Where the embedded default Codex lives, relative to the working directory."""


def open_codex(url: str | None = None, *, cwd: str | Path | None = None) -> Codex:
    """Open the Codex — the Seal store — a URL names.

    ``None`` opens the embedded default, a SQLite file ``.sanctum/codex.db`` under the
    working directory (created on first use). ``memory:`` gives an ephemeral
    MemoryCodex. ``sqlite:///relative/path.db`` and ``sqlite:////absolute/path.db``
    (SQLAlchemy's convention) or a bare file path give a SqliteCodex.
    ``postgresql://…`` gives a PostgresCodex (needs the ``postgres`` extra).

    Args:
        url: The store's URL, or None for the default.
        cwd: Directory relative paths are resolved against (default: the working one).

    Returns:
        An open Codex; the caller closes it with ``await codex.aclose()``.

    Raises:
        SealError: If the URL's scheme is unknown or the store cannot be opened.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    if url is None or url == "":
        return _sqlite(base / DEFAULT_CODEX_PATH)
    if url in ("memory:", "memory://", ":memory:"):
        from sanctum.codex.memory import MemoryCodex

        return MemoryCodex()
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        from sanctum.codex.postgres import PostgresCodex

        return PostgresCodex(url.replace("postgresql+psycopg://", "postgresql://", 1))
    if url.startswith("sqlite:"):
        rest = url.removeprefix("sqlite:")
        if rest.startswith("//"):
            rest = rest[2:]
            rest = rest[1:] if rest.startswith("/") else rest
        if not rest:
            raise SealError(
                f"codex URL {url!r} names no file; write sqlite:///path/to/codex.db",
                location=url,
            )
        path = Path(rest)
        return _sqlite(path if path.is_absolute() else base / path)
    if "://" in url:
        raise SealError(
            f"unknown codex URL {url!r}; use sqlite:///path.db, postgresql://host/db or memory:",
            location=url,
        )
    path = Path(url)
    return _sqlite(path if path.is_absolute() else base / path)


def _sqlite(path: Path) -> Codex:
    from sanctum.codex.sqlite import SqliteCodex

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SealError(
            f"cannot create the codex directory {path.parent}: {exc.strerror or exc}",
            location=str(path),
        ) from exc
    return SqliteCodex(path)


def _describe_codex(url: str | None) -> str:
    return url if url else str(DEFAULT_CODEX_PATH)


async def list_invocations(
    codex: Codex | str | None = None, *, limit: int = 50
) -> builtins.list[InvocationSummary]:
    """The most recently updated invocations in a Codex, newest first.

    Raises:
        SealError: If the store cannot be opened or enumerated.
    """
    store, owned = _store(codex)
    try:
        try:
            return await store.invocations(limit)
        except NotImplementedError as exc:
            raise SealError(str(exc)) from exc
    finally:
        if owned:
            await store.aclose()


async def list_seals(invocation_id: str, codex: Codex | str | None = None) -> builtins.list[Seal]:
    """An invocation's Seal history, oldest first.

    Raises:
        SealError: If the invocation is unknown.
    """
    store, owned = _store(codex)
    try:
        seals = await store.list(invocation_id)
    finally:
        if owned:
            await store.aclose()
    if not seals:
        raise SealError(
            f"unknown invocation {invocation_id!r} in the codex "
            f"{_describe_codex(codex if isinstance(codex, str) else None)}; list them with "
            "`sanctum invocations`",
            invocation_id=invocation_id,
        )
    return seals


def _store(codex: Codex | str | None) -> tuple[Codex, bool]:
    from sanctum.codex.base import Codex

    if isinstance(codex, Codex):
        return codex, False
    return open_codex(codex), True
