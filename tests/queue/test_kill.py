"""Three real `sanctum worker` processes, one SIGKILLed while it holds work (PostgreSQL)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.codex.pg import postgres_url

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.slow,
    pytest.mark.skip(reason="unfinished: worker 0 logs no segment within 20 s (issue 21)"),
]

ROOT = Path(__file__).resolve().parents[2]
RITUAL = Path(__file__).with_name("ten.yaml")
FAST = ["--heartbeat", "0.3", "--stale", "1.5", "--sweep", "0.25", "--poll", "0.2"]


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh database on the test server, dropped afterwards."""
    pytest.importorskip("procrastinate")
    import psycopg

    base = postgres_url()
    name = f"sanctum_queue_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = base.rsplit("/", 1)[0] + "/" + name
    try:
        yield url
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _worker(url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "sanctum", "worker", "--codex", url, "-c", "4", *FAST],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env=env,
    )


async def _heads(url: str, ids: list[str]) -> dict[str, object]:
    from sanctum.codex.postgres import PostgresCodex

    codex = PostgresCodex(url)
    try:
        return {ident: await codex.get(ident) for ident in ids}
    finally:
        await codex.aclose()


def _status(seal: object) -> str:
    from sanctum.codex.claims import seal_status

    if seal is None:
        return "new"
    return seal_status(seal.metadata, seal.frontier)  # type: ignore[attr-defined]


def _wait(url: str, ids: list[str], wanted: str, seconds: float) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    while True:
        heads = asyncio.run(_heads(url, ids))
        if all(_status(seal) == wanted for seal in heads.values()):
            return heads
        assert time.monotonic() < deadline, sorted({_status(s) for s in heads.values()})
        time.sleep(0.2)


async def _one_process(n: int) -> tuple[dict[str, object], list[int]]:
    from sanctum.codex.memory import MemoryCodex
    from sanctum.errors import Interrupt
    from sanctum.ritualfile import load

    codex = MemoryCodex()
    rite = load(RITUAL).compile(codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({"n": n}, invocation_id="one")
    final = await rite.ainvoke(
        invocation_id="one", updates={"approved": True, "notes": ["approved"]}
    )
    return final, [seal.superstep for seal in await codex.list("one")]


async def _chain(url: str, ident: str) -> list[object]:
    from sanctum.codex.postgres import PostgresCodex

    codex = PostgresCodex(url)
    try:
        seals = {seal.seal_id: seal for seal in await codex.list(ident)}
        head = await codex.get(ident)
    finally:
        await codex.aclose()
    chain = []
    while head is not None:
        chain.append(head)
        head = seals.get(head.parent) if head.parent else None
    return chain[::-1]


def test_a_killed_worker_loses_nothing(database: str, tmp_path: Path) -> None:
    from sanctum import api

    url = database
    workers = [_worker(url, tmp_path / f"w{i}.log") for i in range(3)]
    try:
        ids = api.submit(RITUAL, [{"n": n} for n in range(30)], codex=url)
        assert len(ids) == 30
        victim = workers[0]
        deadline = time.monotonic() + 20
        while b"segment" not in (tmp_path / "w0.log").read_bytes():  # it holds work
            assert time.monotonic() < deadline, (tmp_path / "w0.log").read_text()[-800:]
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        _wait(url, ids, "paused", 40)
        for ident in ids:
            queued = api.queue_resume(ident, {"approved": True, "notes": ["approved"]}, codex=url)
            assert not queued.already
        heads = _wait(url, ids, "done", 40)
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in workers:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    for ident, n in zip(ids, range(30), strict=True):
        expected, steps = asyncio.run(_one_process(n))
        assert dict(heads[ident].aether) == {**expected}  # type: ignore[attr-defined]
        chain = asyncio.run(_chain(url, ident))
        assert [seal.superstep for seal in chain] == steps  # type: ignore[attr-defined]
        assert heads[ident].aether["notes"] == ["approved"]  # type: ignore[attr-defined]
        epochs = [seal.metadata["lease"]["epoch"] for seal in chain]  # type: ignore[attr-defined]
        assert epochs == sorted(epochs)
