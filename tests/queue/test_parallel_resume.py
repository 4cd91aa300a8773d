"""Two queued resumes of one paused Invocation, sent at once: one is refused (PostgreSQL)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.queue.harness import ANSWER, RITUAL, fresh_database, wait_all, wait_for, workers

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_two_parallel_resumes_apply_the_update_once(tmp_path: Path) -> None:
    from sanctum import api

    with fresh_database() as url, workers(url, tmp_path, 2) as crew:
        (ident,) = api.submit(RITUAL, [{"n": 3}], codex=url)
        wait_all(url, [ident], "paused", 30)
        with ThreadPoolExecutor(2) as pool:
            sent = list(
                pool.map(lambda _: api.queue_resume(ident, dict(ANSWER), codex=url), (1, 2))
            )
        # checked and deferred under one advisory lock: the second finds the first queued
        assert sorted(r.already for r in sent) == [False, True]
        (head,) = wait_all(url, [ident], "done", 30).values()
        lines = wait_for(
            lambda: len(every := [ln for w in crew for ln in w.lines(ident)]) == 2 and every,
            30,
            lambda: "".join(w.text() for w in crew),
        )
    assert head.aether["notes"] == ["approved"]  # not ["approved", "approved"]
    outcomes = sorted(line.split("outcome=")[1].split()[0] for line in lines)
    assert outcomes == ["done", "paused"]  # the start pauses; the one resume runs to the end
