"""`sanctum resume --executor queue`: the answer to a pause, queued for any worker."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from typer.testing import Result

from tests.cli.helpers import invoke
from tests.queue.harness import (
    PACED_PAUSE,
    RITUAL,
    exit_status,
    fresh_database,
    job_rows,
    wait_all,
    workers,
)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_queued_resume_answers_the_pause_on_a_worker(tmp_path: Path) -> None:
    from sanctum import api

    with fresh_database() as url, workers(url, tmp_path, 1):
        (ident,) = api.submit(RITUAL, [{"n": 4}], codex=url)
        wait_all(url, [ident], "paused", 30)
        args = ["resume", "--invocation", ident, "--executor", "queue", "--codex", url]
        result = invoke([*args, "-u", "approved=true", "-u", 'notes=["ok"]'], tmp_path)
        assert result.exit_code == 0, result.output
        assert f"queued a resume of invocation {ident} (job " in result.output
        (head,) = wait_all(url, [ident], "done", 30).values()
    assert head.aether["notes"] == ["ok"]
    assert head.aether["log"][-1] == "s10"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--codex", "postgresql://h/db", "--seal", "abc"], "--seal goes with a resume run here"),
        ([], "--executor queue needs --codex"),
        (["--executor", "ray"], "--executor is local or queue, not 'ray'"),
    ],
)
def test_a_queued_resume_refuses_what_only_a_run_here_takes(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    args = ["resume", "--invocation", "x", "--executor", "queue", *extra]
    result = invoke(args, tmp_path)
    assert result.exit_code == 2
    assert message in result.output


def _resume(url: str, ident: str, folder: Path, *updates: str) -> Result:
    args = ["resume", "--invocation", ident, "--executor", "queue", "--codex", url]
    return invoke([*args, *(f"-u{update}" for update in updates)], folder)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_second_resume_and_a_resume_of_a_done_invocation_are_refused(tmp_path: Path) -> None:
    from sanctum import api

    inputs = {"n": 5, "pace": 0.01, "marks": str(tmp_path / "marks")}
    with fresh_database() as url:
        with workers(url, tmp_path, 1) as (worker,):
            (ident,) = api.submit(PACED_PAUSE, [inputs], codex=url)
            wait_all(url, [ident], "paused", 30)
            listed = invoke(["queue", "--codex", url], tmp_path)
            worker.proc.send_signal(signal.SIGTERM)  # nobody runs the resumes for now
            assert exit_status(worker, 15) == 0
        first = _resume(url, ident, tmp_path, "approved=true", 'notes=["first"]')
        second = _resume(url, ident, tmp_path, "approved=true", 'notes=["second"]')
        waiting = job_rows(url, ident)
        with workers(url, tmp_path, 1):
            (head,) = wait_all(url, [ident], "done", 30).values()
        again = _resume(url, ident, tmp_path, "approved=true", 'notes=["third"]')
        after = job_rows(url, ident)
        close = _resume(url, ident[:-1] + ("0" if ident[-1] != "0" else "1"), tmp_path)
    _header, row = [line.split("\t") for line in listed.output.splitlines() if "\t" in line]
    shown = (row[1], row[2], row[4], row[6], row[7])
    assert shown == (ident, "start", "paused", "-", "Go on with 5?")
    assert first.exit_code == 0, first.output
    assert second.exit_code == 1, second.output
    assert "already queued or running" in second.output
    assert [status for _, status in waiting] == ["succeeded", "todo"]  # one resume queued
    assert head.aether["notes"] == ["first"]
    assert again.exit_code == 2, again.output
    assert f"error: invocation {ident!r} is done (its last seal " in again.output
    assert "nothing was queued" in again.output
    assert after == [waiting[0], (waiting[1][0], "succeeded")]  # nothing more was queued
    assert close.exit_code == 2, close.output
    assert "unknown invocation" in close.output
    assert f"did you mean {ident!r}?" in close.output
