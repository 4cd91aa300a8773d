"""`sanctum resume --executor queue`: the answer to a pause, queued for any worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.queue.harness import RITUAL, fresh_database, wait_all, workers


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
