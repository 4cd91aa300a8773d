"""Workers with different timings: each is judged by its own stale limit (PostgreSQL)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.queue import paced
from tests.queue.harness import (
    PACED,
    fresh_database,
    holding,
    job_rows,
    lease_epochs,
    query,
    seals,
    wait_all,
    wait_for,
    workers,
)

DEAD = "postgresql://postgres@127.0.0.1:1/x"
SLOW = ["--heartbeat", "2", "--stale", "12"]
"""A healthy worker that beats every 2 s."""
HASTY = ["--heartbeat", "0.2", "--stale", "1", "--sweep", "0.2"]
"""A worker that counts its own self dead after 1 s of silence, and sweeps every 0.2 s."""


def _silence(url: str, name: str) -> float:
    """Seconds since the named worker's last heartbeat (0 before it recorded itself)."""
    rows = query(
        url,
        "SELECT extract(epoch FROM now() - w.last_heartbeat) FROM procrastinate_workers AS w "
        "JOIN sanctum_queue_workers AS s ON s.worker_id = w.id WHERE s.name = %s",
        name,
    )
    return float(rows[0][0]) if rows else 0.0


@pytest.mark.postgres
@pytest.mark.slow
def test_a_hasty_worker_never_counts_a_slow_healthy_one_dead(tmp_path: Path) -> None:
    from sanctum import api

    gate, marks = tmp_path / "gate", tmp_path / "marks"
    inputs = {"n": 1, "pace": 0.05, "marks": str(marks), "gate": str(gate)}
    with fresh_database() as url, workers(url, tmp_path, 1, *SLOW) as (slow,):
        (ident,) = api.submit(PACED, [inputs], codex=url)
        wait_for(lambda: holding(url, slow.name) == [ident], 30, slow.text)
        with workers(url, tmp_path, 1, *HASTY) as (hasty,):
            # the slow worker's silence passes the hasty one's limit of 1 s ...
            wait_for(lambda: _silence(url, slow.name) > 1.4, 30, slow.text)
            time.sleep(0.6)  # ... for at least two of the hasty worker's sweeps
            recorded = query(url, "SELECT name, heartbeat, stale FROM sanctum_queue_workers")
            assert lease_epochs(url)[ident] == 1
            assert job_rows(url, ident) == [(1, "doing")]
            paced.open_gate(gate, 99)
            (head,) = wait_all(url, [ident], "done", 30).values()
            every, chain = asyncio.run(seals(url, ident))
        assert sorted(recorded) == sorted([(slow.name, 2.0, 12.0), (hasty.name, 0.2, 1.0)])
        assert "takeover" not in hasty.text(), hasty.text()
        assert not hasty.lines(ident)
        assert head.aether["log"] == ["p1", "p2", "p3", "p4", "p5", "p6"]
        assert len(every) == len(chain)
        assert {seal.metadata["lease"]["epoch"] for seal in chain} == {1}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--stale", "0"], "Invalid value for --stale: 0 is not a number of seconds above 0"),
        (["--heartbeat", "-1"], "Invalid value for --heartbeat: -1 is not a number of seconds"),
        (["--sweep", "nan"], "Invalid value for --sweep: nan is not a number of seconds"),
        (["--poll", "0"], "Invalid value for --poll: 0 is not a number of seconds above 0"),
        (["--stale", "20"], "20 s must be more than twice --heartbeat (10 s)"),
        (["--heartbeat", "3", "--stale", "6"], "6 s must be more than twice --heartbeat (3 s)"),
        (["--queue", ""], "error: a queue name cannot be empty"),
    ],
)
def test_timings_a_worker_cannot_keep_are_refused(
    tmp_path: Path, options: list[str], message: str
) -> None:
    pytest.importorskip("procrastinate")
    result = invoke(["worker", "--codex", DEAD, *options], tmp_path)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert message in line
    assert "cannot use the PostgreSQL codex" not in line  # refused before connecting


def test_the_timings_are_checked_in_python_too() -> None:
    from sanctum.queue import WorkerTimings

    WorkerTimings().check()
    WorkerTimings(heartbeat=0.3, stale=2, sweep=0.25, poll=0.2).check()
    with pytest.raises(ValueError, match="heartbeat must be a number of seconds above 0"):
        WorkerTimings(heartbeat=-1).check()
    with pytest.raises(ValueError, match=r"stale \(3 s\) must be more than twice heartbeat"):
        WorkerTimings(heartbeat=10, stale=3).check()
    with pytest.raises(ValueError, match="poll must be a number of seconds above 0"):
        WorkerTimings(poll=float("inf")).check()
