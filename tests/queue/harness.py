"""Real `sanctum worker` processes on a fresh database, and what the tests read back."""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from tests.codex.pg import postgres_url

ROOT = Path(__file__).resolve().parents[2]
RITUAL = Path(__file__).with_name("ten.yaml")
PACED = Path(__file__).with_name("paced.yaml")
"""Six supersteps held at a gate file the test opens (``tests/queue/paced.py``)."""
PACED_PAUSE = Path(__file__).with_name("paced_pause.yaml")
"""Two paced supersteps, a pause (answered with :data:`ANSWER`), two more."""
ANSWER = {"approved": True, "notes": ["approved"]}
"""The updates that answer the ritual's one interrupt (``notes`` is an ``append``)."""
FAST = ["--heartbeat", "0.3", "--stale", "2", "--sweep", "0.25", "--poll", "0.2"]


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new database on the test server (its URL), dropped afterwards."""
    pytest.importorskip("procrastinate")
    import psycopg

    base = postgres_url()
    name = f"sanctum_queue_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Worker:
    """One `sanctum worker` process, its name and its stderr log file."""

    name: str
    log: Path
    proc: subprocess.Popen[bytes]
    stream: IO[bytes] = field(repr=False)

    def text(self) -> str:
        """Everything the worker logged so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def lines(self, invocation_id: str) -> list[str]:
        """The worker's segment lines about ``invocation_id``."""
        return [
            line
            for line in self.text().splitlines()
            if line.startswith("segment ") and f"invocation={invocation_id} " in line
        ]


def _ready(worker: Worker) -> bool:
    return " ready:" in worker.text()


def wait_for(what: Callable[[], Any], seconds: float, why: Callable[[], str]) -> Any:
    """Poll ``what`` every 50 ms until it is truthy (its value); fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = what()
        if value:
            return value
        assert time.monotonic() < deadline, why()
        time.sleep(0.05)


@contextmanager
def workers(url: str, folder: Path, count: int, *extra: str) -> Iterator[list[Worker]]:
    """``count`` ready worker processes (stopped with SIGTERM, or SIGKILL, at the end)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started: list[Worker] = []
    try:
        for i in range(count):
            name = f"w{i}-{uuid.uuid4().hex[:6]}"
            log = folder / f"{name}.log"
            stream = log.open("wb")
            command = [sys.executable, "-m", "sanctum", "worker", "--codex", url, "--name", name]
            proc = subprocess.Popen(
                [*command, "-c", "4", *FAST, *extra],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stream,
                env=env,
            )
            started.append(Worker(name, log, proc, stream))
        for worker in started:
            wait_for(functools.partial(_ready, worker), 30, worker.text)
        yield started
    finally:
        for worker in started:
            if worker.proc.poll() is None:
                worker.proc.send_signal(signal.SIGCONT)
                worker.proc.send_signal(signal.SIGTERM)
        for worker in started:
            try:
                worker.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                worker.proc.wait()
            worker.stream.close()


def query(url: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """The rows of one SQL query on the test database."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return list(conn.execute(sql, params).fetchall())


def holding(url: str, worker: str) -> list[str]:
    """The invocations whose segment ``worker`` runs right now (lease and job agree)."""
    rows = query(
        url,
        "SELECT l.invocation_id FROM sanctum_leases AS l JOIN procrastinate_jobs AS j "
        "ON j.lock = l.invocation_id WHERE l.holder = %s AND j.status = 'doing'",
        worker,
    )
    return [str(row[0]) for row in rows]


async def _heads(url: str, ids: list[str]) -> dict[str, Any]:
    from sanctum.codex.postgres import PostgresCodex

    codex = PostgresCodex(url)
    try:
        return {ident: await codex.get(ident) for ident in ids}
    finally:
        await codex.aclose()


def status(seal: Any) -> str:
    """``new``, ``running``, ``paused``, ``done`` or ``failed`` of a head Seal."""
    from sanctum.codex.claims import seal_status

    return "new" if seal is None else str(seal_status(seal.metadata, seal.frontier))


def wait_all(url: str, ids: list[str], wanted: str, seconds: float) -> dict[str, Any]:
    """The head Seals, once every invocation is ``wanted``; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        heads = asyncio.run(_heads(url, ids))
        if all(status(seal) == wanted for seal in heads.values()):
            return heads
        seen = sorted(status(seal) for seal in heads.values())
        assert time.monotonic() < deadline, f"wanted all {wanted}, have {seen}"
        time.sleep(0.2)


async def _one_process(n: int) -> tuple[dict[str, Any], list[int]]:
    from sanctum.codex.memory import MemoryCodex
    from sanctum.errors import Interrupt
    from sanctum.ritualfile import load

    codex = MemoryCodex()
    rite = load(RITUAL).compile(codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({"n": n}, invocation_id="one")
    final = await rite.ainvoke(invocation_id="one", updates=dict(ANSWER))
    return dict(final), [seal.superstep for seal in await codex.list("one")]


def one_process(ns: list[int]) -> list[tuple[dict[str, Any], list[int]]]:
    """For each input ``n``: the final Aether and the Seal supersteps of an in-process
    run answered the same way (all run at once, on one event loop)."""

    async def every() -> list[tuple[dict[str, Any], list[int]]]:
        return list(await asyncio.gather(*(_one_process(n) for n in ns)))

    return asyncio.run(every())


async def seals(url: str, ident: str) -> tuple[list[Any], list[Any]]:
    """Every Seal of ``ident``, and the head branch's Seals (root first)."""
    from sanctum.codex.postgres import PostgresCodex

    codex = PostgresCodex(url)
    try:
        every = await codex.list(ident)
        head = await codex.get(ident)
    finally:
        await codex.aclose()
    by_id = {seal.seal_id: seal for seal in every}
    chain = []
    while head is not None:
        chain.append(head)
        head = by_id.get(head.parent) if head.parent else None
    return every, chain[::-1]


def lease_epochs(url: str) -> dict[str, int]:
    """Every invocation's current lease epoch."""
    return {
        str(i): int(e) for i, e in query(url, "SELECT invocation_id, epoch FROM sanctum_leases")
    }


def exit_status(worker: Worker, seconds: float) -> int:
    """The worker's exit status, once it has exited; fails after ``seconds``."""
    try:
        return worker.proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"worker {worker.name} still runs:\n{worker.text()}") from None


def job_rows(url: str, ident: str) -> list[tuple[int, str]]:
    """``(job id, status)`` of every segment job of ``ident``, oldest first."""
    rows = query(
        url, "SELECT id, status::text FROM procrastinate_jobs WHERE lock = %s ORDER BY id", ident
    )
    return [(int(row[0]), str(row[1])) for row in rows]


def wait_for_line(worker: Worker, text: str, seconds: float = 30) -> str:
    """The first line of the worker's log holding ``text``, once there is one."""
    return str(
        wait_for(
            lambda: next((ln for ln in worker.text().splitlines() if text in ln), None),
            seconds,
            worker.text,
        )
    )
