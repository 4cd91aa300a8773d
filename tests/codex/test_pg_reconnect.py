"""PostgresCodex survives dropped connections, and says so clearly when it cannot.

Against the real server (``SANCTUM_TEST_POSTGRES_URL``): the codex's own backends are
ended with ``pg_terminate_backend`` in the middle of a run; a relay in front of the
server (:mod:`tests.codex.pgproxy`) loses a COMMIT's answer, goes down and comes back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from sanctum.codex.postgres import PostgresCodex
from sanctum.errors import CodexUnavailableError, SealError
from sanctum.ritual import END, Ritual
from tests.codex.conformance import make_seal
from tests.codex.pg import drop_schema, fresh_schema, postgres_url
from tests.codex.pgproxy import Relay

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]


def _terminate(url: str, application_name: str) -> int:
    """End every backend of ``application_name``; how many were ended."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = %s AND pid <> pg_backend_pid()",
            (application_name,),
        ).fetchall()
    return sum(1 for (ended,) in rows if ended)


def _with_name(url: str, application_name: str) -> str:
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}application_name={application_name}"


async def test_terminated_backends_mid_run_are_reconnected_and_nothing_repeats() -> None:
    url = postgres_url()
    schema = fresh_schema()
    name = f"sanctum_drop_{uuid.uuid4().hex[:8]}"
    ended: list[int] = []

    def count(aether: dict[str, Any]) -> dict[str, Any]:
        if aether["n"] in (3, 6):  # twice, the second time after the reconnect
            ended.append(_terminate(url, name))
        return {"n": aether["n"] + 1, "log": [*aether["log"], aether["n"]]}

    def route(aether: dict[str, Any]) -> str:
        return "count" if aether["n"] < 10 else END

    def build() -> Ritual:
        ritual = Ritual()
        ritual.add_sigil("count", count)
        ritual.add_conditional_edge("count", route)
        ritual.set_entry_point("count")
        return ritual

    codex = PostgresCodex(_with_name(url, name), schema=schema)
    try:
        final = await build().compile(codex=codex).ainvoke({"n": 0, "log": []}, invocation_id="d")
        assert ended[0] >= 1, "the codex had no open connection to end"
        assert ended[1] >= 1
        plain = await build().compile().ainvoke({"n": 0, "log": []})
        assert final == plain
        history = await codex.list("d")
        ids = [seal.seal_id for seal in history]
        assert len(ids) == len(set(ids))
        steps = [seal.superstep for seal in history if seal.superstep > 0]
        assert steps == list(range(1, 11)), steps  # every superstep sealed exactly once
        assert history[-1].aether == plain
    finally:
        await codex.aclose()
        drop_schema(url, schema)


async def test_a_commit_whose_answer_was_lost_is_not_written_twice() -> None:
    url = postgres_url()
    schema = fresh_schema()
    relay = Relay(url)
    codex = PostgresCodex(relay.url("sanctum_commit"), schema=schema, reconnect_for=10)
    try:
        first = make_seal(1, {"n": 1})
        await codex.put_next("c", first, expected_latest=None)
        second = make_seal(2, {"n": 2}, parent=first.seal_id)
        relay.cut_next_commit()
        await codex.put_next("c", second, expected_latest=first.seal_id)  # retried
        assert relay.commits_cut == 1  # the first attempt did commit, unheard
        third = make_seal(3, {"n": 3}, parent=second.seal_id)
        relay.cut_next_commit()
        await codex.put("c", third)  # a plain put too
        assert relay.commits_cut == 2
        history = await codex.list("c")
        assert [seal.seal_id for seal in history] == [
            first.seal_id,
            second.seal_id,
            third.seal_id,
        ]
        assert await codex.latest_seal_id("c") == third.seal_id
    finally:
        await codex.aclose()
        relay.down()
        drop_schema(url, schema)


async def test_a_server_that_stays_down_is_one_clear_error_and_is_used_again_later() -> None:
    url = postgres_url()
    schema = fresh_schema()
    relay = Relay(url)
    codex = PostgresCodex(relay.url("sanctum_down"), schema=schema, reconnect_for=1.5)
    try:
        seal = make_seal(1, {"n": 1})
        await codex.put("x", seal)
        relay.down()
        began = time.monotonic()
        with pytest.raises(CodexUnavailableError) as caught:
            await codex.get("x")
        assert time.monotonic() - began < 15  # retried for its budget, then gave up
        message = str(caught.value)
        assert f"127.0.0.1:{relay.port}/postgres" in message
        assert "retried for" in message
        assert "Nothing was lost" in message
        assert "resume invocation 'x'" in message
        assert "\n" not in message
        assert isinstance(caught.value, SealError)
        with pytest.raises(CodexUnavailableError):
            await codex.invocations()
        relay.up()  # the server is back: the same object serves again
        again = await codex.get("x")
        assert again is not None
        assert again.seal_id == seal.seal_id
        later = make_seal(2, {"n": 2}, parent=seal.seal_id)
        await codex.put_next("x", later, expected_latest=seal.seal_id)
        assert [s.seal_id for s in await codex.list("x")] == [seal.seal_id, later.seal_id]
    finally:
        await codex.aclose()
        relay.down()
        drop_schema(url, schema)


def test_pool_log_lines_never_reach_stderr(tmp_path: Path) -> None:
    """In a fresh process with no logging set up, the pool's reconnect warnings (which
    Python would print through its last-resort handler) stay off stderr."""
    url = postgres_url()
    schema = fresh_schema()
    script = tmp_path / "down.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from sanctum.codex.postgres import PostgresCodex
            from sanctum.errors import CodexUnavailableError
            from tests.codex.conformance import make_seal
            from tests.codex.pgproxy import Relay

            async def main():
                relay = Relay({url!r})
                codex = PostgresCodex(
                    relay.url("sanctum_quiet"), schema={schema!r}, reconnect_for=2,
                    max_size=2,
                )
                await codex.put("q", make_seal(1))
                relay.down()
                await asyncio.sleep(1.5)  # the pool tries to reconnect meanwhile
                try:
                    await codex.get("q")
                except CodexUnavailableError:
                    print("unavailable")
                await codex.aclose()

            asyncio.run(main())
            """
        )
    )
    try:
        done = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=60
        )
    finally:
        drop_schema(url, schema)
    assert done.stdout.strip() == "unavailable", done.stderr
    assert done.stderr == ""


def test_cli_exits_1_with_one_line_when_the_server_is_down(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sanctum",
            "invocations",
            "--codex",
            f"postgresql://postgres:s3cretpassword@127.0.0.1:{port}/postgres",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot use the PostgreSQL codex at 127.0.0.1:")
    assert "s3cretpassword" not in done.stderr
    assert "pool" not in done.stderr.lower()
    assert "sanctum-claims" not in done.stderr  # an internal key, never a thing to resume
