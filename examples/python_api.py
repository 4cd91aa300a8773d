"""Run a ritual from Python: stream its Omens, then read the result.

    python examples/python_api.py

Runs ``rituals/hello.yaml`` with an in-memory codex (nothing is written to disk) and
prints each completed sigil, then the farewell and the status.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import sanctum.api

RITUAL = Path(__file__).resolve().parents[1] / "rituals" / "hello.yaml"


async def main() -> str:
    """Perform the ritual; return its status ("done")."""
    performance = sanctum.api.run(RITUAL, {"name": "Ada"}, codex="memory:")
    async for omen in performance:
        row = sanctum.api.omen_to_dict(omen)
        if row.get("type") == "SigilCompleted":
            print(f"superstep {row['superstep']}: {row['sigil']}")
    result = performance.result
    assert result is not None
    print(result.aether["farewell"])
    print(result.status)
    return str(result.status)


if __name__ == "__main__":
    asyncio.run(main())
