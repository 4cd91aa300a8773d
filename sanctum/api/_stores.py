"""Codex URLs and the history they keep: open a store, list invocations and Seals."""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from sanctum.api._results import without_password
from sanctum.codex.urls import CODEX_FORMS, parse_codex_url
from sanctum.errors import SealError

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, InvocationSummary, Seal
    from sanctum.wards.secrets import Secrets

__all__ = [
    "CODEX_FORMS",
    "DEFAULT_CODEX_PATH",
    "MIN_PREFIX",
    "OpenedStore",
    "codex_path",
    "list_invocations",
    "list_seals",
    "open_codex",
    "open_store",
    "resolve_invocation",
    "seal_history",
]


DEFAULT_CODEX_PATH = Path(".sanctum") / "codex.db"
"""Where the embedded default Codex lives, relative to the working directory."""


def codex_path(url: str | None, *, cwd: str | Path | None = None) -> Path | None:
    """The SQLite file a Codex URL names, or None for ``memory:`` and PostgreSQL.

    Args:
        url: The URL (None or "" for the default ``.sanctum/codex.db``).
        cwd: Directory relative paths are resolved against (default: the working one).

    Returns:
        The file's path (absolute when ``cwd`` is), or None when the store is no file.

    Raises:
        SealError: If the URL is none of the accepted forms (:data:`CODEX_FORMS`).
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    if url is None or url == "":
        return base / DEFAULT_CODEX_PATH
    return parse_codex_url(url, base=base).path


def open_codex(
    url: str | None = None, *, cwd: str | Path | None = None, must_exist: bool = False
) -> Codex:
    """Open the Codex — the Seal store — a URL names.

    ``None`` opens the embedded default, a SQLite file ``.sanctum/codex.db`` under the
    working directory (created on first use). ``memory:`` gives an ephemeral
    MemoryCodex. ``sqlite:///relative/path.db`` and ``sqlite:////absolute/path.db``
    (SQLAlchemy's convention) or a plain file path ending in ``.db``, ``.sqlite`` or
    ``.sqlite3`` give a SqliteCodex. ``postgresql://…`` (or ``postgres://…``) gives a
    PostgresCodex (needs the ``postgres`` extra). Anything else is refused, so a typo
    never becomes a new file — nor a new folder: a SQLite file whose folder is
    missing is refused, unless that folder is ``.sanctum`` (the default's), which is
    created.

    Args:
        url: The store's URL, or None for the default.
        cwd: Directory relative paths are resolved against (default: the working one).
        must_exist: For commands that only read: refuse a SQLite file that does not
            exist (instead of creating it), and ``memory:`` (empty in a new process).

    Returns:
        An open Codex; the caller closes it with ``await codex.aclose()``.

    Raises:
        SealError: If the URL is none of the accepted forms, the store does not exist
            (with ``must_exist``), a SQLite file's folder is missing (other than
            ``.sanctum``), or the store cannot be opened.
    """
    path = codex_path(url, cwd=cwd)
    if path is not None:
        if must_exist and not path.is_file():
            raise _missing(url, path)
        return _sqlite(path)
    assert url is not None
    address = parse_codex_url(url)
    if address.kind == "memory":
        if must_exist:
            raise SealError(
                "a memory: codex lives only as long as the process that ran the ritual, so "
                "it holds nothing here; name the SQLite or PostgreSQL codex the run used "
                "(--codex), or run with the default .sanctum/codex.db",
                location=url,
            )
        from sanctum.codex.memory import MemoryCodex

        return MemoryCodex()
    from sanctum.codex.postgres import PostgresCodex

    return PostgresCodex(address.url)


def _missing(url: str | None, path: Path) -> SealError:
    if not url:
        return SealError(
            f"no codex here yet: {DEFAULT_CODEX_PATH} does not exist in {path.parent.parent} "
            "(`sanctum run RITUAL.yaml` creates it; or name another with --codex)",
            location=str(path),
        )
    return SealError(
        f"the codex {url} does not exist (no file {path}); check the path, or name the "
        "codex the run used with --codex",
        location=str(path),
    )


def _sqlite(path: Path) -> Codex:
    from sanctum.codex.sqlite import SqliteCodex

    if path.is_dir():
        raise SealError(
            f"the codex {path} is a directory; name a file such as {path / 'codex.db'}",
            location=str(path),
        )
    if not path.parent.is_dir() and path.parent.name != DEFAULT_CODEX_PATH.parent.name:
        raise SealError(
            f"the folder of the codex {path} does not exist ({path.parent}); check the path, "
            "or create the folder first — a typo never becomes a new folder (only the "
            f"default {DEFAULT_CODEX_PATH.parent}/ is created when missing)",
            location=str(path),
        )
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
            found = await store.invocations(limit)
        except NotImplementedError as exc:
            raise SealError(str(exc)) from exc
        out = []
        for summary in found:  # one that stopped without a record may still be running
            if summary.status == "incomplete" and await store.holder(summary.invocation_id):
                summary = dataclasses.replace(summary, running=True)
            out.append(summary)
        return out
    finally:
        if owned:
            await store.aclose()


MIN_PREFIX = 8
"""The fewest characters of an invocation id that name it (as a prefix)."""

_ALL = 2**31 - 1
"""The limit that lists every invocation (a prefix is looked for among them all)."""


async def resolve_invocation(invocation_id: str, codex: Codex | str | None = None) -> str:
    """The whole id of the invocation ``invocation_id`` names: itself, or a unique prefix.

    An id the Codex holds is its own answer. Otherwise a text of at least
    :data:`MIN_PREFIX` characters that begins exactly one stored id names that one (as
    git takes a commit's prefix). A text that names nothing is returned unchanged, so
    the caller reports the unknown invocation in its own words.

    Args:
        invocation_id: An invocation id, or a prefix of one.
        codex: A Codex, its URL, or None for the default ``.sanctum/codex.db``.

    Returns:
        The whole invocation id (``invocation_id`` itself when nothing else fits).

    Raises:
        SealError: If the prefix begins several ids (the message names them, newest
            first, and asks for more of the id), or the store cannot be opened or read.
    """
    store, owned = _store(codex)
    try:
        return await _resolved(store, invocation_id)
    finally:
        if owned:
            await store.aclose()


async def _resolved(store: Codex, invocation_id: str) -> str:
    if len(invocation_id) < MIN_PREFIX or await store.latest_seal_id(invocation_id):
        return invocation_id
    try:
        every = await store.invocations(_ALL)
    except NotImplementedError:
        return invocation_id
    found = [s.invocation_id for s in every if s.invocation_id.startswith(invocation_id)]
    if len(found) > 1:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        raise SealError(
            f"{invocation_id!r} is the start of {len(found)} invocations ({shown}); give "
            "more of the id",
            invocation_id=invocation_id,
        )
    return found[0] if found else invocation_id


async def list_seals(
    invocation_id: str,
    codex: Codex | str | None = None,
    *,
    values: bool = True,
    on_damage: str = "raise",
) -> builtins.list[Seal]:
    """An invocation's Seal history, oldest first.

    ``invocation_id`` may be a unique prefix of the id (see :func:`resolve_invocation`).
    ``values=False`` reads no value: each Seal's ``aether`` is empty (what a table of
    the history needs, however long the transcript). ``on_damage="mark"`` lists a
    damaged Seal as a stand-in with ``metadata["damaged"]`` (see ``Codex.history``).

    Raises:
        SealError: If the invocation is unknown, or a prefix begins several ids.
    """
    return [
        seal
        async for seal in seal_history(invocation_id, codex, values=values, on_damage=on_damage)
    ]


async def seal_history(
    invocation_id: str,
    codex: Codex | str | None = None,
    *,
    values: bool = True,
    on_damage: str = "raise",
) -> AsyncIterator[Seal]:
    """Yield an invocation's Seals one at a time, oldest first.

    The streaming form of :func:`list_seals`: memory holds one Seal's values at a time
    (plus the stored rows of the history), however long it is. ``values=False`` reads
    no value (each ``aether`` is empty). ``invocation_id`` may be a unique prefix of the
    id (see :func:`resolve_invocation`).

    Raises:
        SealError: If the invocation is unknown, or a prefix begins several ids (before
            anything is yielded).
    """
    store, owned = _store(codex)
    try:
        invocation_id = await _resolved(store, invocation_id)
        found = False
        async for seal in store.history(invocation_id, values=values, on_damage=on_damage):
            found = True
            yield seal
        if not found:
            raise SealError(
                f"unknown invocation {invocation_id!r} in the codex "
                f"{_describe_codex(codex if isinstance(codex, str) else None)}; list them "
                "with `sanctum invocations`",
                invocation_id=invocation_id,
            )
    finally:
        if owned:
            await store.aclose()


def _store(codex: Codex | str | None) -> tuple[Codex, bool]:
    from sanctum.codex.base import Codex

    if isinstance(codex, Codex):
        return codex, False
    return open_codex(codex, must_exist=True), True


@dataclasses.dataclass(frozen=True, slots=True)
class OpenedStore:
    """The Codex a performance writes to, and how a resume names it.

    Attributes:
        codex: The open store.
        owned: Whether the performance opened it (and closes it at the end); a Codex
            object passed in by the caller is not closed.
        url: The URL a resume must name, without its password; None for the default
            ``.sanctum/codex.db`` or a Codex object.
        secrets: The URL's password, masked everywhere (None when it has none).
    """

    codex: Codex
    owned: bool
    url: str | None = None
    secrets: Secrets | None = None

    async def close(self) -> None:
        """Close the store if the performance opened it."""
        if self.owned:
            await self.codex.aclose()


def open_store(
    given: Codex | str | None, *, fallback: str | None = None, must_exist: bool = False
) -> OpenedStore:
    """The Codex of a performance: ``given`` wins, then ``fallback``, then the default.

    Args:
        given: A Codex object (used as it is), a URL, or None.
        fallback: The ritual file's ``codex:`` URL, or None.
        must_exist: Refuse a store that does not exist (a resume reads one).

    Returns:
        The :class:`OpenedStore`.

    Raises:
        SealError: See :func:`open_codex`.
    """
    from sanctum.codex.base import Codex
    from sanctum.wards.secrets import Secrets

    if isinstance(given, Codex):
        return OpenedStore(given, owned=False)
    if fallback in ("memory", ":memory:"):
        fallback = "memory:"  # the ritual file's spellings of an ephemeral store
    url = given or fallback
    if url == "memory":
        url = "memory:"  # one spelling, so a pause knows it cannot be resumed
    store = open_codex(url, must_exist=must_exist)
    if not url or _is_default_store(store):
        return OpenedStore(store, owned=True)
    return OpenedStore(store, owned=True, url=without_password(url), secrets=Secrets(urls=[url]))


def _is_default_store(store: Codex) -> bool:
    """Whether ``store`` is the embedded default ``.sanctum/codex.db`` of the working dir."""
    path = getattr(store, "path", None)
    if not isinstance(path, Path):
        return False
    return path.resolve() == (Path.cwd() / DEFAULT_CODEX_PATH).resolve()
