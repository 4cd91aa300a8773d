"""Three real `sanctum worker` processes, one SIGKILLed while it holds work (PostgreSQL)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.queue.harness import (
    ANSWER,
    RITUAL,
    fresh_database,
    holding,
    lease_epochs,
    one_process,
    seals,
    wait_all,
    wait_for,
    workers,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_a_killed_worker_loses_nothing(tmp_path: Path) -> None:
    from sanctum import api

    with fresh_database() as url:
        with workers(url, tmp_path, 3) as crew:
            victim = crew[0]
            ids = api.submit(RITUAL, [{"n": n} for n in range(30)], codex=url)
            assert len(ids) == 30
            held = wait_for(lambda: holding(url, victim.name), 30, victim.text)
            victim.proc.send_signal(signal.SIGKILL)
            victim.proc.wait()
            wait_all(url, ids, "paused", 40)
            for ident in ids:
                assert not api.queue_resume(ident, dict(ANSWER), codex=url).already
            heads = wait_all(url, ids, "done", 40)
        survivors = "".join(worker.text() for worker in crew[1:])
        assert "Traceback" not in survivors, survivors[-2000:]
        epochs = lease_epochs(url)
        for ident in held:  # taken over: the sweep re-queued it, another worker leased it
            assert epochs[ident] >= 2
            assert f"invocation={ident} " in survivors
        for ident, (expected, steps) in zip(ids, one_process(list(range(30))), strict=True):
            assert dict(heads[ident].aether) == expected  # as one process computes it
            assert heads[ident].aether["notes"] == ["approved"]  # the update applied once
            every, chain = asyncio.run(seals(url, ident))
            assert [seal.superstep for seal in chain] == steps  # one Seal per superstep
            assert len(every) == len(chain)  # and none off the head branch
            fenced = [seal.metadata["lease"]["epoch"] for seal in chain]
            assert fenced == sorted(fenced)  # no Seal from a stale epoch
            assert fenced[-1] <= epochs[ident]
