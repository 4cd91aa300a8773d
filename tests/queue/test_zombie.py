"""A worker frozen past the stall timeout comes back to a taken-over Invocation (PostgreSQL)."""

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


def _ids(found: list[object]) -> list[str]:
    return sorted(str(seal.seal_id) for seal in found)  # type: ignore[attr-defined]


def test_a_woken_zombie_meets_lease_lost_and_changes_nothing(tmp_path: Path) -> None:
    from sanctum import api

    with fresh_database() as url:
        with workers(url, tmp_path, 2) as crew:
            (ident,) = api.submit(RITUAL, [{"n": 7}], codex=url)
            zombie = wait_for(
                lambda: next((w for w in crew if holding(url, w.name)), None),
                30,
                lambda: "no worker took the invocation",
            )
            zombie.proc.send_signal(signal.SIGSTOP)
            taker = next(w for w in crew if w is not zombie)
            wait_all(url, [ident], "paused", 30)  # the other worker took it over
            assert lease_epochs(url)[ident] == 2
            assert taker.lines(ident), taker.text()
            before, _ = asyncio.run(seals(url, ident))
            zombie.proc.send_signal(signal.SIGCONT)
            lost = wait_for(
                lambda: [line for line in zombie.lines(ident) if "outcome=lease-lost" in line],
                20,
                zombie.text,
            )
            assert "epoch=1 " in lost[0]
            after, chain = asyncio.run(seals(url, ident))
            assert _ids(after) == _ids(before)  # the zombie wrote nothing
            assert lease_epochs(url)[ident] == 2
            assert not api.queue_resume(ident, dict(ANSWER), codex=url).already
            (head,) = wait_all(url, [ident], "done", 30).values()
            more = api.submit(RITUAL, [{"n": n} for n in range(8)], codex=url)
            wait_all(url, more, "paused", 30)
            # counted dead by the other worker, it rejoins under a new name when it fetches
            wait_for(lambda: "it rejoins as" in zombie.text(), 10, zombie.text)
            assert zombie.proc.poll() is None
        assert "Traceback" not in zombie.text(), zombie.text()
        ((expected, steps),) = one_process([7])
        assert dict(head.aether) == expected
        _, chain = asyncio.run(seals(url, ident))
        assert [seal.superstep for seal in chain] == steps
