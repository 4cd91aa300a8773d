"""A Codex kept in a PostgreSQL server, shared by many machines.

PostgresCodex — a checkpoint store on PostgreSQL through psycopg 3 and its connection
pool (the ``postgres`` extra: ``pip install 'sanctum-rituals[postgres]'``). Both are
imported when a PostgresCodex is created, never by ``import sanctum``.

The layout is the SqliteCodex one (:mod:`sanctum.codex._layout`): values stored once,
content-addressed; a list or string that extends the parent Seal's stored as its new
part chained to the stored prefix, a large dict key by key; Seal rows point at values.
Tables are created on first use inside ``schema`` (created when missing), with named,
recorded migrations serialised by an advisory lock.

``put_next`` holds a row lock on the Invocation's index row for the check and the
append, so two machines resuming one Invocation can never both append after the same
Seal.

Queue workers (``sanctum.queue``) also *fence* their writes: :meth:`PostgresCodex.lease`
bumps the Invocation's lease epoch (table ``sanctum_leases``) and remembers it, and from
then on every Seal this object writes for that Invocation re-reads the epoch ``FOR
UPDATE`` in the same transaction as the head check and the append, and records it in
the Seal's metadata (key ``lease``). A worker that was frozen while another took the
Invocation over meets :class:`~sanctum.errors.LeaseLost` and writes nothing.

Dropped connections (``pg_terminate_backend``, a server restart, a broken network) are
retried with backoff for up to ``reconnect_for`` seconds: reads are safe to repeat, and
a Seal write is keyed by its ``seal_id`` — a retry first checks whether the lost
attempt committed, so a retry never writes a Seal twice. A server that stays down past
the budget gives a :class:`~sanctum.errors.CodexUnavailableError`; one that refuses the
login gives a SealError; both name ``host:port/dbname`` — never the password — and the
likely fix. psycopg_pool's own log lines (its reconnect attempts) are not printed
unless the application configures logging.
"""

from __future__ import annotations

import builtins
import dataclasses
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from sanctum.codex._layout import Held, HeldCache, Step, map_body, row_digest
from sanctum.codex._postgres_link import SEAL_COLUMNS, PostgresLink
from sanctum.codex._serial import EncodedSeal, encode_seal
from sanctum.codex._stored import (
    RowWalk,
    Values,
    aether_column,
    decode_refs,
    referenced_rows,
    row_refs,
    thaw_each,
    thaw_seal,
    value_ids,
)
from sanctum.codex.base import InvocationSummary, LedgerCodex, Seal, concurrent_write
from sanctum.codex.claims import LEDGER_PREFIX, ledger_id
from sanctum.errors import LeaseLost, SealError

__all__ = ["PostgresCodex"]


class PostgresCodex(PostgresLink, LedgerCodex):
    """A ledger of Seals kept by a PostgreSQL server.

    PostgresCodex — a shared checkpoint store. Same contract and JSON rule as
    SqliteCodex; many processes and machines may use one database at once.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str = "public",
        max_size: int = 4,
        connect_timeout: float = 5.0,
        reconnect_for: float = 10.0,
    ) -> None:
        """Bind the ledger to a database; nothing connects until first use.

        Args:
            conninfo: A libpq URL or key=value string, e.g.
                ``postgresql://user:secret@db.example:5432/sanctum``.
            schema: The PostgreSQL schema holding the tables (created when missing).
            max_size: Most pooled connections.
            connect_timeout: Seconds to wait for one connection.
            reconnect_for: Seconds an operation keeps retrying, with backoff, after the
                connection dropped or the server could not be reached (0: no retry).

        Raises:
            SealError: If psycopg is not installed (naming the ``postgres`` extra), the
                conninfo cannot be parsed, or ``schema`` is not a plain identifier.
        """
        self._bind(
            conninfo,
            schema=schema,
            max_size=max_size,
            connect_timeout=connect_timeout,
            reconnect_for=reconnect_for,
        )
        self._helds = HeldCache()
        self._leases: dict[str, tuple[int, str]] = {}

    def __repr__(self) -> str:
        return f"PostgresCodex({self.location!r}, schema={self.schema!r})"

    async def aclose(self) -> None:
        """Close the pool; a later call reconnects. Idempotent."""
        pool, self._pool, self._pool_loop = self._pool, None, None
        self._helds.clear()
        if pool is not None:
            await pool.close()

    # ------------------------------------------------------------------ reading

    async def _rows(self, conn: Any, ids: Iterable[int]) -> builtins.list[tuple[Any, Any, Any]]:
        """The value rows behind ``ids`` (see :class:`RowWalk`)."""
        s = self._s
        walk = RowWalk(ids)
        while (wanted := walk.wanted()) is not None:
            cursor = await conn.execute(
                f"WITH RECURSIVE chain(id) AS (SELECT unnest(%s::bigint[]) UNION "
                f"SELECT v.prev FROM {s}.sanctum_values AS v JOIN chain AS c ON v.id = c.id "
                "WHERE v.prev IS NOT NULL) "
                f"SELECT v.id, v.prev, v.body FROM {s}.sanctum_values AS v "
                "JOIN chain AS c ON v.id = c.id",
                (wanted,),
            )
            walk.took(await cursor.fetchall())
        return walk.rows

    async def _read(
        self, invocation_id: str, where: str, params: tuple[Any, ...], remember: bool = False
    ) -> builtins.list[Seal]:

        async def fetch(conn: Any, _attempt: int) -> tuple[builtins.list[Any], Values]:
            cursor = await conn.execute(
                f"SELECT {SEAL_COLUMNS} FROM {self._s}.sanctum_seals {where}", params
            )
            rows = await cursor.fetchall()
            refs = [decode_refs(invocation_id, row[0], self.location, row[5]) for row in rows]
            ids: set[int] = set()
            for ref in refs:
                ids.update(value_ids(ref))
            once = row_refs(refs[0]) if len(refs) == 1 else None  # one Seal
            return rows, Values(await self._rows(conn, ids), once)

        rows, values = await self._retrying(invocation_id, fetch)
        seals = []
        for row in rows:
            held: dict[str, Held] | None = {} if remember else None
            seal = thaw_seal(invocation_id, self.location, row, values, held)
            if held is not None:
                self._helds.put(invocation_id, seal.seal_id, held)
            seals.append(seal)
        return seals

    async def get(self, invocation_id: str) -> Seal | None:
        """Return the Invocation's most recently written Seal, or None.

        Raises:
            SealError: If the server cannot be used or the Seal row was damaged.
        """
        seals = await self._read(
            invocation_id,
            "WHERE invocation_id = %s ORDER BY seq DESC LIMIT 1",
            (invocation_id,),
            remember=True,
        )
        return seals[0] if seals else None

    async def list(self, invocation_id: str) -> builtins.list[Seal]:
        """Return the Invocation's full Seal history, oldest first.

        Raises:
            SealError: If the server cannot be used or a Seal row was damaged.
        """
        return [seal async for seal in self.history(invocation_id)]

    async def history(
        self, invocation_id: str, *, values: bool = True, on_damage: str = "raise"
    ) -> AsyncIterator[Seal]:
        """Yield the Invocation's Seals one at a time, oldest first (none when unknown).

        One transaction reads the Seal rows and, with ``values``, the value rows the
        history points at (each stored once); each Seal's values are rebuilt when it
        is yielded. ``values=False`` reads and decodes no value (``aether`` is empty).

        Raises:
            SealError: If the server cannot be used or a Seal row was damaged.
        """

        async def fetch(conn: Any, _attempt: int) -> tuple[builtins.list[Any], Values]:
            columns = SEAL_COLUMNS if values else SEAL_COLUMNS.replace("aether", "'{}'")
            cursor = await conn.execute(
                f"SELECT {columns} FROM {self._s}.sanctum_seals "
                "WHERE invocation_id = %s ORDER BY seq",
                (invocation_id,),
            )
            rows = await cursor.fetchall()
            if not values:
                return rows, Values(())
            ids = referenced_rows(invocation_id, self.location, rows)
            return rows, Values(await self._rows(conn, ids))

        rows, table = await self._retrying(invocation_id, fetch)
        for seal in thaw_each(invocation_id, self.location, rows, table, on_damage):
            yield seal

    async def latest_seal_id(self, invocation_id: str) -> str | None:
        """Return the seal_id of the Invocation's latest Seal, or None; reads no value.

        Raises:
            SealError: If the server cannot be used.
        """

        async def fetch(conn: Any, _attempt: int) -> Any:
            cursor = await conn.execute(
                f"SELECT latest_seal_id, seals FROM {self._s}.sanctum_invocations "
                "WHERE invocation_id = %s",
                (invocation_id,),
            )
            return await cursor.fetchone()

        row = await self._retrying(invocation_id, fetch, transaction=False)
        return str(row[0]) if row is not None and row[1] > 0 else None

    async def get_seal(self, invocation_id: str, seal_id: str) -> Seal | None:
        """Return the Seal ``seal_id`` of the Invocation, or None when unknown.

        Raises:
            SealError: If the server cannot be used or the Seal row was damaged.
        """
        seals = await self._read(
            invocation_id,
            "WHERE invocation_id = %s AND seal_id = %s",
            (invocation_id, seal_id),
            remember=True,
        )
        return seals[0] if seals else None

    async def invocations(self, limit: int = 50) -> builtins.list[InvocationSummary]:
        """Return the most recently written Invocations, newest first (at most ``limit``).

        Raises:
            SealError: If the server cannot be used.
        """
        s = self._s

        async def fetch(conn: Any, _attempt: int) -> builtins.list[Any]:
            cursor = await conn.execute(
                'SELECT i.invocation_id, i.seals, s.seal_id, s.superstep, s."timestamp", '
                f"s.frontier, s.metadata FROM {s}.sanctum_invocations AS i "
                f"JOIN {s}.sanctum_seals AS s ON s.seq = i.latest_seq "
                "WHERE left(i.invocation_id, %s) <> %s "  # not a claim ledger
                "ORDER BY i.latest_seq DESC LIMIT %s",
                (len(LEDGER_PREFIX), LEDGER_PREFIX, max(limit, 0)),
            )
            found: builtins.list[Any] = await cursor.fetchall()
            return found

        rows = await self._retrying(None, fetch, transaction=False)
        out: builtins.list[InvocationSummary] = []
        for invocation_id, count, seal_id, superstep, timestamp, frontier, metadata in rows:
            seal = thaw_seal(
                invocation_id,
                self.location,
                (seal_id, superstep, timestamp, frontier, metadata, "{}"),
                Values(()),
            )
            out.append(
                InvocationSummary(
                    invocation_id=invocation_id,
                    seals=int(count),
                    superstep=seal.superstep,
                    frontier=seal.frontier,
                    updated=seal.timestamp,
                    metadata=seal.metadata,
                )
            )
        return out

    # ------------------------------------------------------------------ leases

    async def lease(self, invocation_id: str, holder: str) -> int:
        """Claim the Invocation for a queue worker: bump its lease epoch and fence on it.

        The epoch (1 for an Invocation never leased) is kept in ``sanctum_leases`` with
        ``holder`` (a worker name) and the time; this object remembers it, and every Seal
        it writes for the Invocation afterwards checks, in the write's own transaction,
        that the epoch is still this one. The engine's claim (:meth:`claim`) then defers
        to the lease: the queue's job lock already keeps a second live job away.

        Args:
            invocation_id: The Invocation to own.
            holder: Who owns it (a unique worker name), recorded for listings.

        Returns:
            The new epoch.

        Raises:
            SealError: If the server cannot be used.
        """
        s = self._s

        async def bump(conn: Any, _attempt: int) -> int:
            cursor = await conn.execute(
                f"INSERT INTO {s}.sanctum_leases (invocation_id, epoch, holder, since) "
                "VALUES (%s, 1, %s, %s) ON CONFLICT (invocation_id) DO UPDATE SET "
                f"epoch = {s}.sanctum_leases.epoch + 1, holder = EXCLUDED.holder, "
                "since = EXCLUDED.since RETURNING epoch",
                (invocation_id, holder, time.time()),
            )
            return int((await cursor.fetchone())[0])

        epoch = await self._retrying(invocation_id, bump)
        self._leases[invocation_id] = (epoch, holder)
        return epoch

    def end_lease(self, invocation_id: str) -> None:
        """Stop fencing this object's writes for the Invocation (the row stays)."""
        self._leases.pop(invocation_id, None)

    async def lease_of(self, invocation_id: str) -> tuple[int, str, float] | None:
        """The Invocation's lease in the Codex: ``(epoch, holder, since)`` or None.

        ``since`` is epoch seconds of the latest :meth:`lease`.

        Raises:
            SealError: If the server cannot be used.
        """

        async def fetch(conn: Any, _attempt: int) -> Any:
            cursor = await conn.execute(
                f"SELECT epoch, holder, since FROM {self._s}.sanctum_leases "
                "WHERE invocation_id = %s",
                (invocation_id,),
            )
            return await cursor.fetchone()

        row = await self._retrying(invocation_id, fetch, transaction=False)
        return (int(row[0]), str(row[1]), float(row[2])) if row is not None else None

    async def _fence(self, conn: Any, invocation_id: str, epoch: int, lock: bool) -> None:
        """Raise LeaseLost unless the Invocation's epoch is still ``epoch``."""
        cursor = await conn.execute(
            f"SELECT epoch FROM {self._s}.sanctum_leases WHERE invocation_id = %s"
            + (" FOR UPDATE" if lock else ""),
            (invocation_id,),
        )
        row = await cursor.fetchone()
        current = int(row[0]) if row is not None else None
        if current != epoch:
            raise LeaseLost(
                invocation_id=invocation_id, epoch=epoch, current=current, location=self.location
            )

    async def claim(
        self, invocation_id: str, holder: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """Claim as :meth:`LedgerCodex.claim` does, unless this object leases the
        Invocation (:meth:`lease`): then the lease is the claim, checked here.

        Raises:
            LeaseLost: If the leased Invocation was taken over since.
            SealError: If the server cannot be used.
        """
        held = self._leases.get(invocation_id)
        if held is None:
            return await super().claim(invocation_id, holder)

        async def check(conn: Any, _attempt: int) -> None:
            await self._fence(conn, invocation_id, held[0], False)

        await self._retrying(invocation_id, check, transaction=False)
        return None

    async def release(self, invocation_id: str, holder: Mapping[str, Any]) -> None:
        """End a claim (see :meth:`claim`); a leased Invocation keeps its lease row."""
        if invocation_id not in self._leases:
            await super().release(invocation_id, holder)

    # ------------------------------------------------------------------ writing

    async def _held(self, invocation_id: str, parent: str | None) -> dict[str, Held]:
        """What the Seal ``parent`` holds, remembered or loaded (a hint: {} on trouble)."""
        if parent is None:
            return {}
        held = self._helds.get(invocation_id, parent)
        if held is not None:
            return held
        try:
            await self._read(
                invocation_id,
                "WHERE invocation_id = %s AND seal_id = %s",
                (invocation_id, parent),
                remember=True,
            )
        except SealError:
            return {}  # only a hint: the put itself reports real trouble
        return self._helds.get(invocation_id, parent) or {}

    async def _store_value(self, conn: Any, digest: bytes, prev: int | None, body: str) -> int:
        s = self._s
        cursor = await conn.execute(
            f"INSERT INTO {s}.sanctum_values (digest, prev, body) VALUES (%s, %s, %s) "
            "ON CONFLICT (digest) DO NOTHING RETURNING id",
            (digest, prev, body),
        )
        row = await cursor.fetchone()
        if row is None:
            cursor = await conn.execute(
                f"SELECT id FROM {s}.sanctum_values WHERE digest = %s", (digest,)
            )
            row = await cursor.fetchone()
        return int(row[0])

    async def _write_step(self, conn: Any, step: Step) -> None:
        """Insert the rows ``step`` needs, children first, filling each ``held.ref``."""
        if step.children is not None:
            for _key, child in step.children:
                await self._write_step(conn, child)
            body = map_body(step.children)
            step.held.ref = await self._store_value(conn, row_digest(body, None), None, body)
        elif step.body is not None:
            digest = row_digest(step.body, step.prev)
            step.held.ref = await self._store_value(conn, digest, step.prev, step.body)

    async def _append(
        self, conn: Any, invocation_id: str, seal: Seal, encoded: EncodedSeal
    ) -> None:
        s = self._s
        for step in encoded.values.values():
            await self._write_step(conn, step)
        cursor = await conn.execute(
            f"INSERT INTO {s}.sanctum_seals (invocation_id, {SEAL_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING seq",
            (
                invocation_id,
                seal.seal_id,
                seal.superstep,
                float(seal.timestamp),
                encoded.frontier,
                encoded.metadata,
                aether_column(encoded.values),
            ),
        )
        seq = (await cursor.fetchone())[0]
        await conn.execute(
            f"UPDATE {s}.sanctum_invocations SET latest_seq = %s, latest_seal_id = %s, "
            "seals = seals + 1 WHERE invocation_id = %s",
            (seq, seal.seal_id, invocation_id),
        )

    async def _write(
        self, invocation_id: str, seal: Seal, check: bool, expected: str | None
    ) -> None:
        lease = self._leases.get(invocation_id)
        if lease is not None:  # fenced: the Seal records the epoch it was written under
            stamp = {"epoch": lease[0], "holder": lease[1]}
            seal = dataclasses.replace(seal, metadata={**seal.metadata, "lease": stamp})
        encoded = encode_seal(invocation_id, seal, await self._held(invocation_id, seal.parent))
        psycopg = self._psycopg
        s = self._s

        async def append(conn: Any, attempt: int) -> None:
            await conn.execute(
                f"INSERT INTO {s}.sanctum_invocations "
                "(invocation_id, latest_seq, latest_seal_id, seals) VALUES (%s, 0, '', 0) "
                "ON CONFLICT (invocation_id) DO NOTHING",
                (invocation_id,),
            )
            cursor = await conn.execute(
                f"SELECT latest_seal_id, seals FROM {s}.sanctum_invocations "
                "WHERE invocation_id = %s FOR UPDATE",
                (invocation_id,),
            )
            row = await cursor.fetchone()
            if lease is not None:
                await self._fence(conn, invocation_id, lease[0], True)
            if attempt > 0:
                # The connection dropped during an earlier attempt: if that attempt's
                # commit went through, the Seal is there and writing it again would
                # duplicate it (seal_ids are unique per invocation).
                cursor = await conn.execute(
                    f"SELECT 1 FROM {s}.sanctum_seals WHERE invocation_id = %s AND seal_id = %s",
                    (invocation_id, seal.seal_id),
                )
                if await cursor.fetchone() is not None:
                    return
            latest = row[0] if row is not None and row[1] > 0 else None
            if check and latest != expected:
                raise concurrent_write(invocation_id, expected, latest)
            await self._append(conn, invocation_id, seal, encoded)

        try:
            await self._retrying(invocation_id, append)
        except psycopg.errors.UniqueViolation:
            raise SealError(
                f"invocation {invocation_id!r} already holds seal {seal.seal_id!r} in "
                f"{self.location}; histories are append-only — write a new Seal with a fresh "
                "seal_id instead",
                invocation_id=invocation_id,
                seal_id=seal.seal_id,
                location=self.location,
            ) from None
        except psycopg.IntegrityError as exc:
            raise self._unreachable(exc, invocation_id) from None
        self._helds.put(
            invocation_id, seal.seal_id, {name: step.held for name, step in encoded.values.items()}
        )

    async def delete(self, invocation_id: str) -> bool:
        """Remove the Invocation's Seals, index row and claim ledger in one transaction.

        Value rows stay (shared between Invocations; see :meth:`Codex.delete`).

        Raises:
            SealError: If the server cannot be used.
        """
        s = self._s
        names = [invocation_id, ledger_id(invocation_id)]

        async def remove(conn: Any, _attempt: int) -> bool:
            await conn.execute(
                f"DELETE FROM {s}.sanctum_seals WHERE invocation_id = ANY(%s)", (names,)
            )
            cursor = await conn.execute(
                f"DELETE FROM {s}.sanctum_invocations WHERE invocation_id = ANY(%s) "
                "RETURNING invocation_id",
                (names,),
            )
            return bool(await cursor.fetchall())

        found = await self._retrying(invocation_id, remove)
        self._helds.clear()
        return found

    async def put(self, invocation_id: str, seal: Seal) -> None:
        """Append a Seal to the Invocation's history; committed before this returns.

        Raises:
            SealError: If the state is not strict JSON (naming the Sigil, key path and
                type), the history already holds the seal_id, or the server cannot be
                used. Nothing is written then.
        """
        await self._write(invocation_id, seal, False, None)

    async def put_next(
        self, invocation_id: str, seal: Seal, *, expected_latest: str | None
    ) -> None:
        """Append a Seal only if the history's latest Seal is still ``expected_latest``.

        The check and the append share one transaction holding the Invocation's row
        lock, so the check holds across processes and machines.

        Raises:
            SealError: If another writer appended first, or as for :meth:`put`;
                nothing is written.
        """
        await self._write(invocation_id, seal, True, expected_latest)
