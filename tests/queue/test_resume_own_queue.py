"""A queued resume goes to the invocation's own queue (`--queue` moves it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.queue.harness import RITUAL, fresh_database, query, wait_all, workers


def _queues(url: str, ident: str) -> list[tuple[str, str]]:
    rows = query(
        url,
        "SELECT queue_name, status::text FROM procrastinate_jobs WHERE lock = %s ORDER BY id",
        ident,
    )
    return [(str(name), str(status)) for name, status in rows]


@pytest.mark.postgres
@pytest.mark.slow
def test_the_printed_resume_goes_to_the_queue_the_invocation_was_submitted_to(
    tmp_path: Path,
) -> None:
    with fresh_database() as url, workers(url, tmp_path, 1, "--queue", "gpu"):
        submit = ["submit", str(RITUAL), "--codex", url, "--queue", "gpu"]
        first, second = (invoke([*submit, "-i", f"n={n}"], tmp_path) for n in (3, 4))
        assert first.exit_code == 0, first.output
        assert second.exit_code == 0, second.output
        ident, other = first.stdout.strip(), second.stdout.strip()
        wait_all(url, [ident, other], "paused", 30)
        waiting = invoke(["pending", "--codex", url, "--json"], tmp_path)
        entries = {
            entry["invocation_id"]: entry for entry in map(json.loads, waiting.stdout.splitlines())
        }
        words = entries[ident]["resume"].split()[1:]
        answered = invoke([*words, "-u", "approved=true", "-u", 'notes=["ok"]'], tmp_path)
        (head,) = wait_all(url, [ident], "done", 30).values()
        moved = invoke(
            [*entries[other]["resume"].split()[1:], "--queue", "cpu", "-u", "approved=true"],
            tmp_path,
        )
        jobs = _queues(url, other)
    assert answered.exit_code == 0, answered.output
    assert f"queued a resume of invocation {ident} (job " in answered.stdout
    assert ", queue gpu)" in answered.stdout
    assert head.aether["notes"] == ["ok"]
    assert moved.exit_code == 0, moved.output
    assert ", queue cpu)" in moved.stdout
    assert jobs == [("gpu", "succeeded"), ("cpu", "todo")]


def test_queue_goes_only_with_a_queued_resume(tmp_path: Path) -> None:
    result = invoke(["resume", "--invocation", "x", "--queue", "gpu"], tmp_path)
    assert result.exit_code == 2
    assert "--queue goes with --executor queue" in result.output
