"""The spec's import path sanctum.ritual.scheduler keeps working."""

from sanctum.ritual import scheduler
from sanctum.ritual.loop import perform_invocation
from tests.ritual.helpers import counter_cycle


async def test_scheduler_exports_the_loop() -> None:
    assert scheduler.perform_invocation is perform_invocation
    rite = counter_cycle(2)
    assert await scheduler.perform_invocation(rite._setup, {"i": 0}) == {"i": 2}
