"""Sigils of the queue test ritual: each sleeps 50-100 ms and leaves a mark."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine, Mapping
from typing import Any


def _step(name: str) -> Callable[[Mapping[str, Any]], Coroutine[Any, Any, dict[str, Any]]]:
    async def step(aether: Mapping[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(random.uniform(0.05, 0.1))
        return {"log": [name], "total": int(aether["n"])}

    return step


s1, s2, s3, fa, fb, s5, s7, s8, s9, s10 = (
    _step(n) for n in ("s1", "s2", "s3", "fa", "fb", "s5", "s7", "s8", "s9", "s10")
)
