"""The PostgreSQL connection behind a PostgresCodex: pool, retries, migrations.

:class:`PostgresLink` holds what a :class:`~sanctum.codex.postgres.PostgresCodex` needs to
reach its server — the parsed connection string (its ``host:port/dbname`` location, the
password kept only to scrub it from messages), a psycopg pool bound to the running event
loop, the retry-with-backoff loop for dropped connections, and the named, recorded
schema migrations — so the codex module holds only the Seal layout's reads and writes.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, TypeVar

from sanctum.codex.claims import LEDGER_PREFIX
from sanctum.errors import CodexUnavailableError, SealError

__all__ = ["SEAL_COLUMNS", "PostgresLink"]

_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
SEAL_COLUMNS = 'seal_id, superstep, "timestamp", frontier, metadata, aether'
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
    "does not support ssl",
    "ssl was required",
    "sslmode",
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
        ),
        (
            "m002_leases",  # the epoch a queue worker's Seal writes are fenced with
            [
                f"CREATE TABLE {s}.sanctum_leases (invocation_id text PRIMARY KEY, "
                "epoch bigint NOT NULL, holder text NOT NULL, since double precision NOT NULL)",
            ],
        ),
    ]


class PostgresLink:
    """Connection handling shared by the PostgreSQL codex (a mixin: it owns ``self``'s
    connection attributes, the codex owns the tables' reads and writes)."""

    location: str
    schema: str

    def _bind(
        self,
        conninfo: str,
        *,
        schema: str,
        max_size: int,
        connect_timeout: float,
        reconnect_for: float,
    ) -> None:
        """Parse ``conninfo`` and keep the settings; nothing connects until first use.

        Raises:
            SealError: If psycopg is not installed, the conninfo cannot be parsed, or
                ``schema`` is not a plain identifier.
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

    def _scrub(self, text: str) -> str:
        if self._password:
            text = text.replace(self._password, "***")
        return " ".join(text.split())

    def _unreachable(
        self, exc: BaseException, invocation_id: str | None = None, *, waited: float = 0.0
    ) -> SealError:
        if invocation_id is not None and invocation_id.startswith(LEDGER_PREFIX):
            invocation_id = None  # a claim before anything ran: no run of the user's yet
        detail = self._scrub(str(exc)) or type(exc).__name__
        lowered = detail.lower()
        if "password" in lowered or "authentication" in lowered:
            fix = (
                "Check the user and password (in the URL, PGPASSWORD or ~/.pgpass) and the "
                "server's pg_hba.conf."
            )
        elif "ssl" in lowered:
            fix = (
                "The server and the URL disagree about SSL: add ?sslmode=disable for a "
                "server without SSL, or sslmode=require (and the server's certificate "
                "settings) for one that wants it."
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
