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

import asyncio
import builtins
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from types import ModuleType
from typing import Any, TypeVar

from sanctum.codex._layout import Held, HeldCache, Step, map_body, row_digest
from sanctum.codex._serial import EncodedSeal, encode_seal
from sanctum.codex._stored import (
    Values,
    aether_column,
    child_ids,
    decode_refs,
    referenced_rows,
    row_refs,
    thaw_each,
    thaw_seal,
    value_ids,
)
from sanctum.codex.base import InvocationSummary, LedgerCodex, Seal, concurrent_write
from sanctum.codex.claims import LEDGER_PREFIX
from sanctum.errors import CodexUnavailableError, SealError

__all__ = ["PostgresCodex"]

_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_SEAL_COLUMNS = 'seal_id, superstep, "timestamp", frontier, metadata, aether'
_MIGRATION_LOCK = 0x5A4E_C700_DEC0
_PAUSES = (0.05, 0.2, 0.5, 1.0)
"""Seconds between reconnect attempts (the last one repeats until the budget is spent)."""
_REFUSALS = (
    "password",
    "authentication",
    "does not exist",
    "pg_hba.conf",
    "permission denied",
    "role ",
)
"""Words of a connection failure that no retry can fix (a wrong login or database)."""
_T = TypeVar("_T")


def _quiet_pool_logger() -> None:
    """Keep psycopg_pool's warnings (its reconnect attempts) off stderr.

    With no handler anywhere, Python prints warnings through its last-resort handler;
    a NullHandler on the pool's logger stops that, while an application that set up
    logging still receives the records through the root logger.
    """
    logger = logging.getLogger("psycopg.pool")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


def _import_psycopg() -> tuple[ModuleType, ModuleType]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise SealError(
            f"PostgresCodex needs psycopg 3 and psycopg_pool ({exc.name} is missing); install "
            "the postgres extra: pip install 'sanctum-rituals[postgres]'"
        ) from None
    return psycopg, psycopg_pool


def _migrations(s: str) -> list[tuple[str, list[str]]]:
    """Named schema steps, in order, for schema ``s`` (already quoted)."""
    return [
        (
            "m001_seals_and_values",
            [
                f"CREATE TABLE {s}.sanctum_values (id bigserial PRIMARY KEY, "
                "digest bytea NOT NULL UNIQUE, "
                f"prev bigint REFERENCES {s}.sanctum_values(id), body text NOT NULL)",
                f"CREATE TABLE {s}.sanctum_seals (seq bigserial PRIMARY KEY, "
                "invocation_id text NOT NULL, seal_id text NOT NULL, superstep bigint NOT NULL, "
                '"timestamp" double precision NOT NULL, frontier text NOT NULL, '
                "metadata text NOT NULL, aether text NOT NULL, UNIQUE (invocation_id, seal_id))",
                f"CREATE TABLE {s}.sanctum_invocations (invocation_id text PRIMARY KEY, "
                "latest_seq bigint NOT NULL, latest_seal_id text NOT NULL, seals bigint NOT NULL)",
                f"CREATE INDEX sanctum_invocations_recent ON {s}.sanctum_invocations(latest_seq)",
            ],
        )
    ]


class PostgresCodex(LedgerCodex):
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
        self._psycopg, self._psycopg_pool = _import_psycopg()
        _quiet_pool_logger()
        try:
            params = self._psycopg.conninfo.conninfo_to_dict(conninfo)
        except self._psycopg.ProgrammingError:
            raise SealError(
                "the PostgreSQL connection string could not be parsed (not shown: it may hold "
                "a password); write postgresql://user@host:port/dbname",
            ) from None
        host = str(params.get("host") or params.get("hostaddr") or "localhost")
        port = str(params.get("port") or 5432)
        dbname = str(params.get("dbname") or params.get("user") or "postgres")
        self.location = f"{host}:{port}/{dbname}"
        self._password = str(params.get("password") or "")
        if not _SCHEMA_NAME.match(schema):
            raise SealError(
                f"schema {schema!r} is not a plain PostgreSQL identifier (letters, digits, _)",
                location=self.location,
            )
        self.schema = schema
        self._s = f'"{schema}"'
        self._conninfo = conninfo
        self._max_size = max_size
        self._timeout = connect_timeout
        self._reconnect_for = max(0.0, float(reconnect_for))
        self._down_until = 0.0  # time.monotonic() before which a give-up is recent
        self._kwargs: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, round(connect_timeout)),
        }
        if not params.get("application_name"):
            self._kwargs["application_name"] = "sanctum"
        self._pool: Any = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        self._ready = False
        self._open_lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._helds = HeldCache()

    def __repr__(self) -> str:
        return f"PostgresCodex({self.location!r}, schema={self.schema!r})"

    # ------------------------------------------------------------------ connections

    def _scrub(self, text: str) -> str:
        if self._password:
            text = text.replace(self._password, "***")
        return " ".join(text.split())

    def _unreachable(
        self, exc: BaseException, invocation_id: str | None = None, *, waited: float = 0.0
    ) -> SealError:
        detail = self._scrub(str(exc)) or type(exc).__name__
        lowered = detail.lower()
        if "password" in lowered or "authentication" in lowered:
            fix = (
                "Check the user and password (in the URL, PGPASSWORD or ~/.pgpass) and the "
                "server's pg_hba.conf."
            )
        elif "does not exist" in lowered:
            fix = "Create the database or user, or point the URL at an existing one."
        elif not isinstance(exc, self._psycopg.OperationalError | self._psycopg_pool.PoolTimeout):
            fix = "The server refused the statement; check the schema, or report a sanctum bug."
        else:
            fix = (
                "Start the server (e.g. pg_ctlcluster <version> main start) or fix the host "
                "and port in the URL."
            )
        if not self._transient(exc):
            return SealError(
                f"cannot use the PostgreSQL codex at {self.location}: "
                f"{detail.rstrip('.?! ')}. {fix}",
                invocation_id=invocation_id,
                location=self.location,
            )
        tried = f" (retried for {waited:.0f} s)" if waited >= 1 else ""
        kept = (
            f" Nothing was lost: every Seal written before stays; resume invocation "
            f"{invocation_id!r} once the server is back."
            if invocation_id
            else ""
        )
        return CodexUnavailableError(
            f"cannot use the PostgreSQL codex at {self.location}: {detail.rstrip('.?! ')}"
            f"{tried}. {fix}{kept}",
            invocation_id=invocation_id,
            location=self.location,
        )

    def _transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` is a dropped or unreachable connection a retry may fix."""
        if isinstance(exc, self._psycopg_pool.PoolTimeout | OSError):
            return True
        if not isinstance(exc, self._psycopg.OperationalError):
            return False
        state = getattr(exc, "sqlstate", None)
        if state is not None:
            return str(state).startswith(("08", "57"))
        lowered = str(exc).lower()
        return not any(word in lowered for word in _REFUSALS)

    async def _retrying(
        self,
        invocation_id: str | None,
        work: Callable[[Any, int], Awaitable[_T]],
        *,
        transaction: bool = True,
    ) -> _T:
        """Run ``work(conn, attempt)`` on a pooled connection, retrying dropped ones.

        ``attempt`` counts from 0; ``work`` runs inside one transaction unless
        ``transaction`` is False. A dropped or unreachable connection is retried with
        backoff (:data:`_PAUSES`) until ``reconnect_for`` seconds have passed; the
        pool's idle connections are checked before each retry, so a restarted server's
        dead connections are replaced at once.

        Raises:
            CodexUnavailableError: If the server stayed unreachable past the budget.
            SealError: For anything no retry can fix (a refused login, a damaged row),
                or what ``work`` raised.
        """
        loop = asyncio.get_running_loop()
        started = loop.time()
        # Right after an operation gave up, the next one retries for a second at most
        # instead of waiting out the whole budget again (a failed run's clean-up read,
        # say); later ones retry as usual, so a long-lived codex recovers when the
        # server is back.
        recent = time.monotonic() < self._down_until
        give_up = started + (min(1.0, self._reconnect_for) if recent else self._reconnect_for)
        attempt = 0
        while True:
            try:
                pool = await self._open()
                wait = max(1.0, min(self._timeout, give_up - loop.time()))
                async with pool.connection(timeout=wait) as conn:
                    if not transaction:
                        result = await work(conn, attempt)
                    else:
                        async with conn.transaction():
                            result = await work(conn, attempt)
                self._down_until = 0.0
                return result
            except self._psycopg.IntegrityError:
                raise  # the caller knows what a duplicate means
            except (self._psycopg.Error, self._psycopg_pool.PoolTimeout, OSError) as exc:
                now = loop.time()
                if not self._transient(exc) or now >= give_up:
                    if self._transient(exc):
                        self._down_until = time.monotonic() + self._reconnect_for
                    raise self._unreachable(exc, invocation_id, waited=now - started) from None
                pause = _PAUSES[min(attempt, len(_PAUSES) - 1)]
                await asyncio.sleep(min(pause, give_up - now))
                attempt += 1
                await self._check_pool()

    async def _check_pool(self) -> None:
        """Replace the pool's dead idle connections (after a drop); never raises."""
        pool = self._pool
        if pool is None or self._pool_loop is not asyncio.get_running_loop():
            return
        try:
            await pool.check()
        except Exception:
            pass  # the next attempt reports what is wrong

    async def _open(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._pool_loop is loop:
            return self._pool
        if self._open_lock is None or self._lock_loop is not loop:
            self._open_lock, self._lock_loop = asyncio.Lock(), loop
        async with self._open_lock:
            if self._pool is not None and self._pool_loop is loop:
                return self._pool
            return await self._connect(loop)

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> Any:
        """Migrate (once per object) and open the pool.

        Raises:
            psycopg.Error: If the server cannot be reached (the caller retries).
            SealError: If the schema was written by a newer sanctum.
        """
        psycopg = self._psycopg
        conn = await psycopg.AsyncConnection.connect(self._conninfo, **self._kwargs)
        try:
            if not self._ready:
                await self._migrate(conn)
                self._ready = True
        finally:
            await conn.close()
        pool = self._psycopg_pool.AsyncConnectionPool(
            self._conninfo,
            min_size=1,
            max_size=self._max_size,
            kwargs=dict(self._kwargs),
            timeout=self._timeout,
            open=False,
        )
        await pool.open()
        old, self._pool, self._pool_loop = self._pool, pool, loop
        if old is not None:
            try:
                await old.close()
            except Exception:
                pass  # its loop is gone; nothing more to release
        return pool

    async def _migrate(self, conn: Any) -> None:
        s = self._s
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {s}.sanctum_migrations "
                "(name text PRIMARY KEY, applied_at double precision NOT NULL)"
            )
            cursor = await conn.execute(f"SELECT name FROM {s}.sanctum_migrations")
            applied = {row[0] for row in await cursor.fetchall()}
            steps = _migrations(s)
            unknown = sorted(applied - {name for name, _ in steps})
            if unknown:
                raise SealError(
                    f"the PostgreSQL codex at {self.location} (schema {self.schema}) was "
                    f"written by a newer sanctum (unknown schema steps: {', '.join(unknown)}). "
                    "Upgrade sanctum to use it.",
                    location=self.location,
                )
            for name, statements in steps:
                if name in applied:
                    continue
                for statement in statements:
                    await conn.execute(statement)
                await conn.execute(
                    f"INSERT INTO {s}.sanctum_migrations (name, applied_at) VALUES (%s, %s)",
                    (name, time.time()),
                )

    async def aclose(self) -> None:
        """Close the pool; a later call reconnects. Idempotent."""
        pool, self._pool, self._pool_loop = self._pool, None, None
        self._helds.clear()
        if pool is not None:
            await pool.close()

    # ------------------------------------------------------------------ reading

    async def _rows(self, conn: Any, ids: Iterable[int]) -> builtins.list[tuple[Any, Any, Any]]:
        """The value rows behind ``ids``: their chains, and a map row's children's."""
        s = self._s
        rows: builtins.list[tuple[Any, Any, Any]] = []
        seen: set[int] = set()
        pending = set(ids)
        while pending:
            cursor = await conn.execute(
                f"WITH RECURSIVE chain(id) AS (SELECT unnest(%s::bigint[]) UNION "
                f"SELECT v.prev FROM {s}.sanctum_values AS v JOIN chain AS c ON v.id = c.id "
                "WHERE v.prev IS NOT NULL) "
                f"SELECT v.id, v.prev, v.body FROM {s}.sanctum_values AS v "
                "JOIN chain AS c ON v.id = c.id",
                (sorted(pending),),
            )
            fetched = await cursor.fetchall()
            seen.update(pending)
            pending = set()
            for row in fetched:
                seen.add(row[0])
                pending.update(child_ids(row[2]))
            rows.extend(fetched)
            pending -= seen
        return rows

    async def _read(
        self, invocation_id: str, where: str, params: tuple[Any, ...], remember: bool = False
    ) -> builtins.list[Seal]:

        async def fetch(conn: Any, _attempt: int) -> tuple[builtins.list[Any], Values]:
            cursor = await conn.execute(
                f"SELECT {_SEAL_COLUMNS} FROM {self._s}.sanctum_seals {where}", params
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
            columns = _SEAL_COLUMNS if values else _SEAL_COLUMNS.replace("aether", "'{}'")
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
            f"INSERT INTO {s}.sanctum_seals (invocation_id, {_SEAL_COLUMNS}) "
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
