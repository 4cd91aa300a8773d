"""Stopping a worker: the first SIGTERM or Ctrl-C hands its invocation back at the next
Seal, a second one stops it at once (PostgreSQL, real processes)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.queue import paced
from tests.queue.harness import (
    PACED,
    Worker,
    exit_status,
    fresh_database,
    holding,
    job_rows,
    query,
    seals,
    wait_all,
    wait_for,
    wait_for_line,
    workers,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

STAY = ["--stale", "60"]
"""No worker is counted dead within a test: only a hand-back (or a deleted worker row)
can move an invocation to the other worker."""
STEPS = ["p1", "p2", "p3", "p4", "p5", "p6"]


def _submit(url: str, folder: Path) -> tuple[str, Path, Path]:
    """One paced invocation held at its gate: its id, gate file and marks file."""
    from sanctum import api

    gate, marks = folder / "gate", folder / "marks"
    inputs = {"n": 3, "pace": 0.05, "marks": str(marks), "gate": str(gate)}
    (ident,) = api.submit(PACED, [inputs], codex=url)
    return ident, gate, marks


def _holder(url: str, crew: list[Worker]) -> Worker:
    found: Worker = wait_for(
        lambda: next((w for w in crew if holding(url, w.name)), None),
        30,
        lambda: "no worker took the invocation",
    )
    return found


def _began(marks: Path) -> list[tuple[int, int]]:
    return [(pid, step) for pid, step, _, what in paced.marks(marks) if what == "began"]


def _no_fork(url: str, ident: str) -> Any:
    every, chain = asyncio.run(seals(url, ident))
    assert len(every) == len(chain)  # no Seal off the head branch
    return chain


def test_a_stopped_worker_hands_its_invocation_back_at_the_next_seal(tmp_path: Path) -> None:
    with fresh_database() as url, workers(url, tmp_path, 2, *STAY) as crew:
        ident, gate, marks = _submit(url, tmp_path)
        holder = _holder(url, crew)
        other = next(w for w in crew if w is not holder)
        paced.open_gate(gate, 1)
        wait_for(lambda: (holder.proc.pid, 2) in _began(marks), 30, holder.text)
        holder.proc.send_signal(signal.SIGTERM)
        wait_for_line(holder, f"worker {holder.name} stopping: 1 running invocation(s) hand back")
        assert holder.proc.poll() is None  # superstep 2 is still running: it waits for it
        paced.open_gate(gate, 2)  # superstep 2 ends and is sealed; the worker hands back
        assert exit_status(holder, 30) == 0
        paced.open_gate(gate, 99)
        (head,) = wait_all(url, [ident], "done", 30).values()
        rows = job_rows(url, ident)
        chain = _no_fork(url, ident)
    (handed,) = holder.lines(ident)
    assert "outcome=handed-back" in handed
    assert f"requeued={rows[1][0]}" in handed
    assert "lease-lost" not in holder.text()
    assert f"worker {holder.name} stopped (1 invocation(s) handed back)" in holder.text()
    (went_on,) = other.lines(ident)
    assert "epoch=2 outcome=done" in went_on
    assert [status for _, status in rows] == ["succeeded", "succeeded"]  # nothing swept
    began = _began(marks)
    assert [step for _, step in began] == [1, 2, 3, 4, 5, 6]  # each superstep ran once
    assert [pid for pid, _ in began] == [holder.proc.pid] * 2 + [other.proc.pid] * 4
    assert head.aether["log"] == STEPS
    steps = [seal.superstep for seal in chain]
    assert steps == sorted(set(steps))
    assert steps[-1] == 6
    fenced = [(seal.superstep, seal.metadata["lease"]["epoch"]) for seal in chain]
    assert fenced == [(step, 1 if step <= 2 else 2) for step in steps]  # then the taker's


def test_a_second_ctrl_c_stops_at_once_and_another_worker_takes_over(tmp_path: Path) -> None:
    with fresh_database() as url, workers(url, tmp_path, 2, *STAY) as crew:
        ident, gate, marks = _submit(url, tmp_path)
        holder = _holder(url, crew)
        other = next(w for w in crew if w is not holder)
        wait_for(lambda: (holder.proc.pid, 1) in _began(marks), 30, holder.text)
        holder.proc.send_signal(signal.SIGINT)
        wait_for_line(holder, f"worker {holder.name} stopping: ")
        holder.proc.send_signal(signal.SIGINT)  # superstep 1 is held at its gate
        assert exit_status(holder, 15) == 130
        # its worker row is gone, so the sweep takes the invocation without --stale 60
        wait_for_line(other, "takeover ")
        paced.open_gate(gate, 99)
        (head,) = wait_all(url, [ident], "done", 30).values()
        rows = job_rows(url, ident)
        kept = "SELECT reason FROM sanctum_queue_failures WHERE job_id = %s"
        (reason,) = query(url, kept, rows[0][0])
        _no_fork(url, ident)
    assert f"worker {holder.name} stopped at once: 1 running invocation(s)" in holder.text()
    assert not holder.lines(ident)  # it ended no segment
    assert [status for _, status in rows] == ["aborted", "succeeded"]
    assert str(reason[0]).startswith("taken over: ")
    assert f"continued as job {rows[1][0]}" in str(reason[0])
    began = _began(marks)
    assert began[0] == (holder.proc.pid, 1)  # cut short, so the taker ran it again
    assert [step for pid, step in began if pid == other.proc.pid] == [1, 2, 3, 4, 5, 6]
    assert head.aether["log"] == STEPS


def test_an_idle_worker_stops_with_status_0(tmp_path: Path) -> None:
    with fresh_database() as url, workers(url, tmp_path, 1) as (worker,):
        worker.proc.send_signal(signal.SIGTERM)
        assert exit_status(worker, 15) == 0
        assert query(url, "SELECT count(*) FROM procrastinate_workers") == [(0,)]
    assert f"worker {worker.name} stopped (0 invocation(s) handed back)" in worker.text()
