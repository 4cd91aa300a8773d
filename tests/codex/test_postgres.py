"""PostgresCodex passes the conformance suite against a real server, plus failures."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sanctum.codex import Codex, SealError
from sanctum.codex.postgres import PostgresCodex
from tests.codex.conformance import CodexConformance, Reopen, make_seal
from tests.codex.crash import kill_and_resume, partial_run, race
from tests.codex.cycle_worker import expected_final
from tests.codex.pg import drop_schema, fresh_schema, postgres_codex, postgres_url
from tests.codex.pgwire import RefusingServer

pytestmark = pytest.mark.postgres


@pytest.fixture
async def codex() -> AsyncIterator[Codex]:
    async with postgres_codex() as store:
        yield store


@pytest.fixture
def reopen() -> Reopen:
    def again(codex: Codex) -> Codex:
        assert isinstance(codex, PostgresCodex)
        return PostgresCodex(postgres_url(), schema=codex.schema)

    return again


class TestPostgresConformance(CodexConformance):
    """The shared suite, on PostgresCodex."""


async def test_schema_and_migrations_are_created_on_first_use() -> None:
    import psycopg

    url = postgres_url()
    schema = fresh_schema()
    codex = PostgresCodex(url, schema=schema)
    try:
        assert await codex.get("inv") is None
        with psycopg.connect(url) as conn:
            names = [
                row[0] for row in conn.execute(f'SELECT name FROM "{schema}".sanctum_migrations')
            ]
        assert names == ["m001_seals_and_values", "m002_leases"]
        await codex.put("inv", make_seal(1))
        again = PostgresCodex(url, schema=schema)
        assert len(await again.list("inv")) == 1
        await again.aclose()
    finally:
        await codex.aclose()
        drop_schema(url, schema)


async def test_conversation_storage_grows_linearly() -> None:
    import psycopg

    async with postgres_codex() as codex:
        messages: list[str] = []
        prev: str | None = None
        for step in range(1, 61):
            messages.append(f"{step:04d}" + "m" * 500)
            seal = make_seal(step, {"messages": messages}, parent=prev)
            await codex.put_next("inv", seal, expected_latest=prev)
            prev = seal.seal_id
        with psycopg.connect(postgres_url()) as conn:
            stored = conn.execute(
                f'SELECT sum(length(body)) FROM "{codex.schema}".sanctum_values'
            ).fetchone()
        assert stored is not None
        assert stored[0] < 1.2 * sum(len(m) for m in messages)
        history = await codex.list("inv")
        assert history[-1].aether["messages"] == messages


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_server_down_names_the_address_and_the_fix() -> None:
    port = _free_port()
    codex = PostgresCodex(
        f"postgresql://alice:hunter2secret@127.0.0.1:{port}/ledger",
        connect_timeout=1,
        reconnect_for=0.5,
    )
    with pytest.raises(SealError) as caught:
        await codex.put("inv", make_seal(1))
    message = str(caught.value)
    assert f"127.0.0.1:{port}/ledger" in message
    assert "running" in message
    assert "hunter2secret" not in message
    assert caught.value.location == f"127.0.0.1:{port}/ledger"
    await codex.aclose()


async def test_wrong_password_is_never_printed() -> None:
    server = RefusingServer()
    try:
        codex = PostgresCodex(
            f"postgresql://alice:s3cr3t-Pa55@127.0.0.1:{server.port}/ledger?sslmode=disable",
            connect_timeout=2,
        )
        with pytest.raises(SealError) as caught:
            await codex.get("inv")
        assert server.passwords
        assert server.passwords[0] == "s3cr3t-Pa55"
        message = str(caught.value)
        assert f"127.0.0.1:{server.port}/ledger" in message
        assert "password" in message
        assert "s3cr3t-Pa55" not in message
        assert "s3cr3t-Pa55" not in repr(caught.value.__dict__)
        assert caught.value.__cause__ is None
        assert "s3cr3t-Pa55" not in repr(codex)
    finally:
        server.close()


def test_unparseable_conninfo_is_not_echoed() -> None:
    with pytest.raises(SealError) as caught:
        PostgresCodex("host=x password='unterminated secret")
    assert "unterminated secret" not in str(caught.value)


def test_schema_must_be_an_identifier() -> None:
    with pytest.raises(SealError, match="identifier"):
        PostgresCodex("postgresql://u@127.0.0.1/db", schema='x"; DROP TABLE y; --')


# ---------------------------------------------------------------- crashes and races


async def test_sigkill_at_random_supersteps_then_resume_gives_the_same_aether() -> None:
    async with postgres_codex() as codex:
        store = f"{postgres_url()}#{codex.schema}"
        turns = 8
        final, killed_after = kill_and_resume(store, "crashy", turns, kills=3, seed=99)
        assert final == await expected_final(turns), f"killed after supersteps {killed_after}"
        assert killed_after == sorted(set(killed_after)), killed_after
        history = await codex.list("crashy")
        assert [s.parent for s in history] == [None] + [s.seal_id for s in history[:-1]]
        assert history[-1].aether == final


async def test_two_processes_resuming_at_once_exactly_one_continues(tmp_path: Path) -> None:
    async with postgres_codex() as codex:
        store = f"{postgres_url()}#{codex.schema}"
        turns = 5
        assert partial_run(store, "contested", turns, seals=2) == 2
        results = race(store, "contested", turns, tmp_path / "go")
        assert sorted(code for code, _, _ in results) == [0, 3], results
        loser = next(out for code, out, _ in results if code == 3)
        assert "SEALERROR" in loser
        assert "contested" in loser
        history = await codex.list("contested")
        assert [s.parent for s in history] == [None] + [s.seal_id for s in history[:-1]]
        assert [s.superstep for s in history] == list(range(1, turns * 3 + 1))
        assert history[-1].aether == await expected_final(turns)
