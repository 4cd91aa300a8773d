"""Python steps used by the example rituals (``call: steps:<function>``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def longest(current: Any, update: Any) -> Any:
    """Reducer: keep the longer of two texts."""
    return update if len(str(update)) > len(str(current)) else current


def draft_reply(aether: Mapping[str, Any]) -> dict[str, Any]:
    """Draft a reply from the order the agent looked up."""
    return {"reply": f"Dear customer, about your {aether['category']} question: we are on it."}


def flaky_ledger(aether: Mapping[str, Any]) -> dict[str, Any]:
    """A ledger that is always down (so the policy's on_error fallback runs)."""
    raise ConnectionError("the ledger service is down")


async def collatz(aether: Mapping[str, Any], writer: Any) -> dict[str, Any]:
    """One Collatz step, streaming the value it reached."""
    n = int(aether["n"])
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    writer({"n": n})
    return {"n": n, "path": [n], "steps": 1, "longest_note": f"reached {n}"}
