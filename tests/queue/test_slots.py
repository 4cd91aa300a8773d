"""Endpoint slots as PostgreSQL advisory locks: N holders at most, a killed one freed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from typing import Any

import pytest

from tests.codex.pg import postgres_url
from tests.queue.harness import ROOT, wait_for

pytestmark = [pytest.mark.postgres]

HOLDER = """\
import asyncio, sys
from sanctum.queue import PostgresSlots

async def main():
    slots = PostgresSlots(sys.argv[1])
    async with slots.hold(sys.argv[2], 1) as index:
        print(f"held {index}", flush=True)
        await asyncio.sleep(120)

asyncio.run(main())
"""


def _endpoint() -> str:
    return f"test http://gpu-{uuid.uuid4().hex[:8]}:8080 m"


async def _until(check: Any) -> None:
    for _ in range(400):  # 40 s at most
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the condition never held")


def test_n_slots_admit_n_holders_across_sessions_and_the_next_waits() -> None:
    from sanctum.queue import PostgresSlots

    url = postgres_url()
    endpoint = _endpoint()

    async def main() -> tuple[set[int], int, int]:
        first, second, third = (PostgresSlots(url) for _ in range(3))
        try:
            async with first.hold(endpoint, 2) as one, second.hold(endpoint, 2) as two:

                async def later() -> int:
                    async with third.hold(endpoint, 2) as index:
                        return index

                waiting = asyncio.create_task(later())
                await _until(lambda: third.waits >= 2)  # two rounds found both taken
                assert not waiting.done()
            index = await waiting
            return {one, two}, index, third.waits
        finally:
            for slots in (first, second, third):
                await slots.aclose()

    taken, index, waits = asyncio.run(main())
    assert taken == {0, 1}
    assert index in (0, 1)
    assert waits >= 2


def test_one_process_never_holds_a_slot_twice() -> None:
    """A session holds an advisory lock re-entrantly; the process must not ask twice."""
    from sanctum.queue import PostgresSlots

    url = postgres_url()
    endpoint = _endpoint()

    async def main() -> tuple[bool, int]:
        slots = PostgresSlots(url)
        try:
            async with slots.hold(endpoint, 1):

                async def again() -> None:
                    async with slots.hold(endpoint, 1):
                        pass

                second = asyncio.create_task(again())
                await _until(lambda: slots.waits >= 2)
                during = second.done()
            await second
            return during, slots.waits
        finally:
            await slots.aclose()

    during, waits = asyncio.run(main())
    assert during is False
    assert waits >= 2


def test_a_cancelled_waiter_leaves_no_slot_taken() -> None:
    from sanctum.queue import PostgresSlots

    url = postgres_url()
    endpoint = _endpoint()

    async def main() -> int:
        holder, waiter, fresh = PostgresSlots(url), PostgresSlots(url), PostgresSlots(url)
        try:
            async with holder.hold(endpoint, 1):

                async def wait() -> None:
                    async with waiter.hold(endpoint, 1):
                        raise AssertionError("the waiter got a slot it should wait for")

                task = asyncio.create_task(wait())
                await _until(lambda: waiter.waits >= 1)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            async with fresh.hold(endpoint, 1):  # free at once: nobody kept it
                return fresh.waits
        finally:
            for slots in (holder, waiter, fresh):
                await slots.aclose()

    assert asyncio.run(main()) == 0


def test_a_holder_killed_with_sigkill_frees_its_slot() -> None:
    import psycopg

    from sanctum.queue._slots import slot_key

    url = postgres_url()
    endpoint = _endpoint()
    key = slot_key(endpoint, 0)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url, endpoint],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stderr is not None
        assert holder.stdout.readline().strip() == "held 0", holder.stderr.read()
        with psycopg.connect(url, autocommit=True) as conn:

            def free() -> bool:
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                return bool(row and row[0])

            assert not free()  # the live holder has it
            holder.send_signal(signal.SIGKILL)
            holder.wait()
            assert wait_for(free, 20, lambda: "the killed holder's slot stayed taken")
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        for stream in (holder.stdout, holder.stderr):
            if stream is not None:
                stream.close()
