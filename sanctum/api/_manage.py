"""Keeping the codex tidy: show one invocation, delete it, prune old finished ones."""

from __future__ import annotations

import builtins
import dataclasses
import time
from typing import TYPE_CHECKING

from sanctum.errors import RitualInputError, SealError

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, InvocationSummary, Seal

__all__ = [
    "FINISHED",
    "InvocationDetail",
    "delete_invocation",
    "prune_invocations",
    "show_invocation",
]

FINISHED = frozenset({"done", "failed"})
"""The statuses ``prune`` may delete: nothing waits to be resumed from them."""

_ALL = 2**31 - 1
"""The limit that lists every invocation."""


@dataclasses.dataclass(frozen=True, slots=True)
class InvocationDetail:
    """One invocation as ``sanctum invocations show`` tells it.

    Attributes:
        summary: Its line of the index (status, supersteps, seals, last update).
        latest: Its most recently written Seal, with the Aether.
        created: When its first Seal was written (epoch seconds).
    """

    summary: InvocationSummary
    latest: Seal
    created: float


def _open(codex: Codex | str | None) -> tuple[Codex, bool]:
    from sanctum.api._stores import open_codex
    from sanctum.codex.base import Codex

    if isinstance(codex, Codex):
        return codex, False
    return open_codex(codex, must_exist=True), True


def _unknown(invocation_id: str, codex: Codex | str | None) -> SealError:
    from sanctum.api._stores import DEFAULT_CODEX_PATH

    where = codex if isinstance(codex, str) and codex else str(DEFAULT_CODEX_PATH)
    return SealError(
        f"unknown invocation {invocation_id!r} in the codex {where}; list them with "
        "`sanctum invocations`",
        invocation_id=invocation_id,
    )


async def show_invocation(invocation_id: str, codex: Codex | str | None = None) -> InvocationDetail:
    """One invocation's summary, its latest Seal (with the Aether) and when it began.

    Args:
        invocation_id: The invocation, or a unique prefix of its id of at least
            :data:`~sanctum.api.MIN_PREFIX` characters (see ``resolve_invocation``).
        codex: A Codex, its URL, or None for the default ``.sanctum/codex.db``.

    Raises:
        SealError: If the codex holds no such invocation, a prefix begins several ids,
            or the store cannot be opened or read.
    """
    from sanctum.api._stores import resolve_invocation
    from sanctum.codex.base import InvocationSummary

    store, owned = _open(codex)
    try:
        invocation_id = await resolve_invocation(invocation_id, store)
        first: float | None = None
        count = 0
        async for seal in store.history(invocation_id, values=False, on_damage="mark"):
            first = seal.timestamp if first is None else first
            count += 1
        latest = await store.get(invocation_id)
        if latest is None or first is None:
            raise _unknown(invocation_id, codex)
        summary = InvocationSummary(
            invocation_id=invocation_id,
            seals=count,
            superstep=latest.superstep,
            frontier=latest.frontier,
            updated=latest.timestamp,
            metadata=latest.metadata,
        )
        if summary.status == "incomplete" and await store.holder(invocation_id):
            summary = dataclasses.replace(summary, running=True)
        return InvocationDetail(summary=summary, latest=latest, created=first)
    finally:
        if owned:
            await store.aclose()


async def delete_invocation(
    invocation_id: str, codex: Codex | str | None = None, *, force: bool = False
) -> InvocationSummary:
    """Delete one invocation: its Seals and its index row (see ``Codex.delete``).

    A paused or incomplete invocation can still be resumed, so it is deleted only with
    ``force``; a running one (a live call holds it) never is.

    Args:
        invocation_id: The invocation, or a unique prefix of its id (as for
            :func:`show_invocation`).
        codex: A Codex, its URL, or None for the default ``.sanctum/codex.db``.
        force: Delete a paused or incomplete invocation too.

    Returns:
        The summary the invocation had before it was deleted.

    Raises:
        RitualInputError: If the invocation is running, or can be resumed and ``force``
            is False; nothing is deleted then.
        SealError: If there is no such invocation, a prefix begins several ids, or the
            store cannot be opened or written.
    """
    store, owned = _open(codex)
    try:
        summary = (await show_invocation(invocation_id, store)).summary
        invocation_id = summary.invocation_id  # the whole id, when a prefix was given
        if summary.status == "running":
            raise RitualInputError(
                f"invocation {invocation_id!r} is running right now; wait for it to end "
                "(or stop it), then delete it; nothing was deleted"
            )
        if summary.status not in FINISHED and not force:
            raise RitualInputError(
                f"invocation {invocation_id!r} is {summary.status} and can still be resumed; "
                "add --force to delete it anyway; nothing was deleted"
            )
        await _delete(store, invocation_id)
        return summary
    finally:
        if owned:
            await store.aclose()


async def prune_invocations(
    codex: Codex | str | None = None,
    *,
    older_than: float,
    dry_run: bool = False,
    now: float | None = None,
) -> builtins.list[InvocationSummary]:
    """Delete every finished invocation (done or failed) last updated before a cutoff.

    Whole invocations only: a paused, incomplete or running one is never touched,
    however old, and no Seal is removed from an invocation that stays.

    Args:
        codex: A Codex, its URL, or None for the default ``.sanctum/codex.db``.
        older_than: Age in seconds: invocations updated longer ago than this go.
        dry_run: Only say which would go; delete nothing.
        now: The current time (epoch seconds; default: the clock).

    Returns:
        The summaries of the invocations deleted (or, with ``dry_run``, that would be),
        oldest first.

    Raises:
        SealError: If the store cannot be opened, enumerated or written.
    """
    cutoff = (time.time() if now is None else now) - older_than
    store, owned = _open(codex)
    try:
        try:
            everything = await store.invocations(_ALL)
        except NotImplementedError as exc:
            raise SealError(str(exc)) from exc
        chosen = [s for s in everything if s.status in FINISHED and s.updated < cutoff]
        chosen.reverse()
        if not dry_run:
            for summary in chosen:
                await _delete(store, summary.invocation_id)
        return chosen
    finally:
        if owned:
            await store.aclose()


async def _delete(store: Codex, invocation_id: str) -> None:
    try:
        await store.delete(invocation_id)
    except NotImplementedError as exc:
        raise SealError(str(exc)) from exc
