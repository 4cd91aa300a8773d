"""SIGHUP stops a worker as SIGTERM does; a signal during start-up stops it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sanctum.queue._app import _SCHEMA_LOCK
from tests.queue import paced
from tests.queue.harness import (
    FAST,
    PACED,
    ROOT,
    exit_status,
    fresh_database,
    holding,
    query,
    wait_all,
    wait_for,
    wait_for_line,
    workers,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _private_folders(tmp: Path) -> list[str]:
    return sorted(path.name for path in tmp.glob("sanctum-queue-rituals-*"))


def test_a_closed_terminal_hands_the_invocation_back_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sanctum import api

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    gate, marks = tmp_path / "gate", tmp_path / "marks"
    inputs = {"n": 3, "pace": 0.05, "marks": str(marks), "gate": str(gate)}
    with fresh_database() as url, workers(url, tmp_path, 1, "--stale", "60") as (worker,):
        made = _private_folders(tmp)
        (ident,) = api.submit(PACED, [inputs], codex=url)
        wait_for(lambda: holding(url, worker.name), 30, worker.text)
        worker.proc.send_signal(signal.SIGHUP)
        wait_for_line(worker, f"worker {worker.name} stopping: 1 running invocation(s)")
        paced.open_gate(gate, 99)
        code = exit_status(worker, 30)
        rows = query(url, "SELECT status::text FROM procrastinate_jobs ORDER BY id")
        left = query(url, "SELECT count(*) FROM procrastinate_workers")
        with workers(url, tmp_path, 1):
            wait_all(url, [ident], "done", 30)
    assert code == 0, worker.text()
    assert len(made) == 1
    assert _private_folders(tmp) == []
    (line,) = worker.lines(ident)
    assert "outcome=handed-back" in line
    assert rows == [("succeeded",), ("todo",)]  # handed back: a fresh job, not swept
    assert left == [(0,)]  # it unregistered
    assert f"worker {worker.name} stopped (1 invocation(s) handed back)" in worker.text()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_before_ready_stops_the_worker_with_status_0(
    tmp_path: Path, signum: signal.Signals
) -> None:
    import psycopg

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
    log = tmp_path / "worker.log"
    with fresh_database() as url, psycopg.connect(url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))  # start-up waits
        with log.open("wb") as stream:
            command = [sys.executable, "-m", "sanctum", "worker", "--codex", url, *FAST]
            proc = subprocess.Popen(
                [*command, "--name", "early"], stdin=subprocess.DEVNULL, stderr=stream, env=env
            )
            try:
                waiting = (
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                )
                wait_for(lambda: query(url, waiting) != [(0,)], 30, log.read_text)
                made = _private_folders(tmp)
                proc.send_signal(signum)
                code = proc.wait(timeout=15)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    text = log.read_text(encoding="utf-8")
    assert code == 0, text
    assert len(made) == 1  # it had made its folder, and removed it
    assert _private_folders(tmp) == []
    assert text.splitlines() == [f"worker early stopped by {signum.name} before it took any job"]
