"""A worker frozen past its stale limit comes back to a taken-over Invocation (PostgreSQL)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.queue import paced
from tests.queue.harness import (
    ANSWER,
    PACED,
    PACED_PAUSE,
    RITUAL,
    fresh_database,
    holding,
    job_rows,
    lease_epochs,
    one_process,
    seals,
    wait_all,
    wait_for,
    wait_for_line,
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
            stamp = {"epoch": 1, "holder": zombie.name}
            written = sum(1 for seal in before if seal.metadata.get("lease") == stamp)
            assert f" seals={written} " in lost[0]  # what it wrote before it froze
            assert "taken over; nothing after" in lost[0]
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


def test_a_zombie_woken_while_the_taker_runs_leaves_the_takers_job_alone(tmp_path: Path) -> None:
    from sanctum import api

    gate, marks = tmp_path / "gate", tmp_path / "marks"
    inputs = {"n": 5, "pace": 0.05, "marks": str(marks), "gate": str(gate)}
    with fresh_database() as url, workers(url, tmp_path, 2) as crew:
        (ident,) = api.submit(PACED_PAUSE, [inputs], codex=url)
        zombie = wait_for(
            lambda: next((w for w in crew if holding(url, w.name)), None),
            30,
            lambda: "no worker took the invocation",
        )
        zombie.proc.send_signal(signal.SIGSTOP)  # frozen inside superstep 1 (gate closed)
        taker = next(w for w in crew if w is not zombie)
        wait_for(lambda: holding(url, taker.name) == [ident], 30, taker.text)
        zombie.proc.send_signal(signal.SIGCONT)
        paced.open_gate(gate, 1)  # both end superstep 1; the taker then waits in superstep 2
        lost = wait_for_line(zombie, f"invocation={ident} epoch=1 outcome=lease-lost")
        wait_for_line(zombie, "was taken over by another (stalled); its job is the taker's now")
        # the zombie could not finish the taker's job: it is still running, and held
        listed = invoke(["queue", "--codex", url], tmp_path)
        args = ["resume", "--invocation", ident, "--executor", "queue", "--codex", url]
        early = invoke([*args, "-u", "approved=true", "-u", 'notes=["early"]'], tmp_path)
        assert holding(url, taker.name) == [ident]
        assert lease_epochs(url)[ident] == 2
        paced.open_gate(gate, 99)
        wait_all(url, [ident], "paused", 30)
        late = invoke([*args, "-u", "approved=true", "-u", 'notes=["approved"]'], tmp_path)
        (head,) = wait_all(url, [ident], "done", 30).values()
        statuses = [status for _, status in job_rows(url, ident)]
        every, chain = asyncio.run(seals(url, ident))
    assert " seals=0 " in lost
    assert lost.endswith(": wrote 0 Seal(s) before it was taken over; nothing after")
    _header, *rows = [line.split("\t") for line in listed.output.splitlines() if "\t" in line]
    (row,) = [row for row in rows if row[1] == ident]
    assert (row[4], row[5], row[6]) == ("doing", "2", taker.name)  # its second run, on the taker
    assert early.exit_code == 1, early.output
    assert "is already queued or running" in early.output
    assert late.exit_code == 0, late.output
    assert head.aether["notes"] == ["approved"]  # the update of the resume let in, once
    assert head.aether["log"] == ["p1", "p2", "p3", "p4"]
    # the zombie's row (swept), the taker's fresh one (paused), the resume's
    assert statuses == ["aborted", "succeeded", "succeeded"]
    assert len(every) == len(chain)
    assert all(seal.metadata["lease"]["holder"] != zombie.name for seal in chain)
    assert "Traceback" not in zombie.text(), zombie.text()


def test_a_zombie_counts_the_seals_it_wrote_before_the_takeover(tmp_path: Path) -> None:
    from sanctum import api

    gate, marks = tmp_path / "gate", tmp_path / "marks"
    inputs = {"n": 3, "pace": 0.05, "marks": str(marks), "gate": str(gate)}
    with fresh_database() as url, workers(url, tmp_path, 2) as crew:
        (ident,) = api.submit(PACED, [inputs], codex=url)
        zombie = wait_for(
            lambda: next((w for w in crew if holding(url, w.name)), None),
            30,
            lambda: "no worker took the invocation",
        )
        paced.open_gate(gate, 1)
        began = (zombie.proc.pid, 2, "p2", "began")
        wait_for(lambda: began in paced.marks(marks), 30, zombie.text)
        zombie.proc.send_signal(signal.SIGSTOP)  # frozen inside superstep 2, one Seal down
        taker = next(w for w in crew if w is not zombie)
        wait_for(lambda: holding(url, taker.name) == [ident], 30, taker.text)
        paced.open_gate(gate, 99)
        wait_all(url, [ident], "done", 30)
        zombie.proc.send_signal(signal.SIGCONT)
        lost = wait_for_line(zombie, f"invocation={ident} epoch=1 outcome=lease-lost")
        every, _chain = asyncio.run(seals(url, ident))
    stamp = {"epoch": 1, "holder": zombie.name}
    assert sum(1 for seal in every if seal.metadata["lease"] == stamp) == 1
    assert " seals=1 " in lost
    assert lost.endswith(": wrote 1 Seal(s) before it was taken over; nothing after")
