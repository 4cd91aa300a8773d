"""Endpoint slots shared by every process on one PostgreSQL: advisory locks.

:class:`PostgresSlots` implements :class:`sanctum.oracle.limits.EndpointSlots` for an
Oracle's ``max_concurrency_global``: an endpoint bounded to N has N slots, slot ``i``
being the session advisory lock :func:`slot_key` ``(endpoint, i)``. A holder tries the
slots in turn with ``pg_try_advisory_lock`` on one dedicated connection of its process
(opened on first use, autocommit), and when all are taken waits and tries again, the
wait growing with the attempt count (:func:`backoff`). A slot is released with
``pg_advisory_unlock`` after the call. A process that dies (even SIGKILL) frees its
slots at once: PostgreSQL ends its session and with it the session's locks.

A session holds an advisory lock re-entrantly, so the process keeps the set of keys its
session holds (or is asking for) and never asks for one of them twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

__all__ = ["PostgresSlots", "backoff", "slot_key"]

_T = TypeVar("_T")


def slot_key(endpoint: str, index: int) -> int:
    """The advisory-lock key (a signed 64-bit int) of slot ``index`` of ``endpoint``."""
    digest = hashlib.sha256(f"sanctum endpoint slot\0{endpoint}\0{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def backoff(attempt: int) -> float:
    """Seconds to wait after the ``attempt``-th round found every slot taken (>= 1).

    20 ms doubling per attempt up to 0.2 s, with up to 25 % jitter so waiters of many
    processes do not ask in step.
    """
    base = min(0.02 * float(2 ** min(attempt - 1, 10)), 0.2)
    return base * (1.0 + random.uniform(0.0, 0.25))


async def _finished(work: Awaitable[_T]) -> _T:
    """Await ``work`` to its end even when the caller is cancelled meanwhile.

    The caller's cancellation is raised once ``work`` is over, so a lock taken on the
    server is always known (and given back) on this side.
    """
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await task
        raise


class PostgresSlots:
    """Slots of bounded endpoints, as advisory locks of one PostgreSQL database.

    Args:
        conninfo: A libpq URL or key=value string of the database every sharing
            process uses (the Codex's).

    Every :meth:`hold` of this object uses its one connection; :meth:`aclose` closes it
    (and so frees every slot it held).
    """

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._conn: Any = None
        self._connecting = asyncio.Lock()
        self._mine: set[int] = set()
        """Keys this process's session holds, or is asking for right now."""
        self.waits = 0
        """Rounds that found every slot taken, in this process (for the benchmarks)."""

    async def _connection(self) -> Any:
        async with self._connecting:
            if self._conn is None or self._conn.closed:
                import psycopg

                self._conn = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
            return self._conn

    async def _try(self, key: int) -> bool:
        conn = await self._connection()
        try:
            cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))
            row = await cursor.fetchone()
        except Exception:
            await self._drop(conn)
            raise
        return bool(row and row[0])

    async def _unlock(self, key: int) -> None:
        conn = self._conn
        if conn is None or conn.closed:
            return  # the session is gone, and its locks with it
        try:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except Exception:
            await self._drop(conn)

    async def _drop(self, conn: Any) -> None:
        with contextlib.suppress(Exception):
            await conn.close()

    async def _take(self, endpoint: str, slots: int) -> tuple[int, int] | None:
        """One round over the slots: ``(index, key)`` of the one taken, or None."""
        for index in range(slots):
            key = slot_key(endpoint, index)
            if key in self._mine:
                continue
            self._mine.add(key)
            asking = asyncio.ensure_future(self._try(key))
            try:
                got = await asyncio.shield(asking)
            except asyncio.CancelledError:  # the lock may be taken on the server by now
                with contextlib.suppress(BaseException):
                    if await asking:
                        await self._unlock(key)
                self._mine.discard(key)
                raise
            except BaseException:
                self._mine.discard(key)
                raise
            if got:
                return index, key
            self._mine.discard(key)
        return None

    @contextlib.asynccontextmanager
    async def hold(self, endpoint: str, slots: int) -> AsyncIterator[int]:
        """Wait for one of ``slots`` slots of ``endpoint``; hold it inside the block.

        Waits without a deadline: round after round, with :func:`backoff` between
        them. A cancellation while waiting leaves no slot taken.

        Args:
            endpoint: The endpoint's key (see ``sanctum.oracle.limits.endpoint_key``).
            slots: The endpoint's global bound (>= 1).

        Yields:
            The index of the slot held.

        Raises:
            psycopg.Error: If the database cannot be reached (the call is not made).
        """
        attempt = 0
        while True:
            taken = await self._take(endpoint, slots)
            if taken is not None:
                break
            attempt += 1
            self.waits += 1
            await asyncio.sleep(backoff(attempt))
        index, key = taken
        try:
            yield index
        finally:
            try:
                await _finished(self._unlock(key))
            finally:
                self._mine.discard(key)

    async def aclose(self) -> None:
        """Close the connection: every slot it held is free."""
        if self._conn is not None:
            await self._drop(self._conn)
            self._conn = None
            self._mine.clear()
