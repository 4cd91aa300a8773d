"""One sweep at a time: a worker that finds another sweeping skips its round."""

from __future__ import annotations

import asyncio

import pytest

from sanctum.queue._sweep import SWEEP_LOCK, Swept, sweep
from tests.queue.harness import fresh_database, query

pytestmark = [pytest.mark.postgres]


async def _sweep_twice(url: str) -> tuple[list[Swept], list[Swept]]:
    """A sweep while another session holds the sweep lock, and one after it let go."""
    import psycopg

    from sanctum.queue._app import make_app, open_app

    app = make_app(url)
    await open_app(app, url)
    try:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as other:
            await other.execute("SELECT pg_advisory_lock(%s)", (SWEEP_LOCK,))
            skipped = await sweep(app, 2.0)
            await other.execute("SELECT pg_advisory_unlock(%s)", (SWEEP_LOCK,))
        taken = await sweep(app, 2.0)
    finally:
        await app.close_async()
    return list(skipped), list(taken)


async def _stalled_job(url: str) -> int:
    """A running segment job whose worker row is gone (as after a SIGKILL)."""
    from sanctum.queue._app import make_app, open_app
    from sanctum.queue._jobs import defer_segment

    app = make_app(url)
    await open_app(app, url)
    try:
        job_id = await defer_segment(app, "inv-1", "sanctum", {"digest": "d", "kind": "start"})
    finally:
        await app.close_async()
    return job_id


def test_a_sweep_skips_its_round_while_another_sweeps() -> None:
    with fresh_database() as url:
        job_id = asyncio.run(_stalled_job(url))
        running = "UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s RETURNING id"
        assert query(url, running, job_id) == [(job_id,)]
        skipped, taken = asyncio.run(_sweep_twice(url))
        rows = query(url, "SELECT id, status::text FROM procrastinate_jobs ORDER BY id")
    assert skipped == []  # the stalled job was left to the sweep holding the lock
    ((old, again),) = taken
    assert old == job_id
    assert rows == [(job_id, "aborted"), (again, "todo")]
