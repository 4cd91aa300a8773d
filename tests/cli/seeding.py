"""Seed a real SQLite codex with Seals, as a run would have left them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sanctum.codex.base import Seal
from sanctum.codex.sqlite import SqliteCodex

__all__ = ["LONG_ID", "LONG_SEAL", "seed", "seed_long"]


def seed(directory: Path) -> Path:
    """Write two invocations into ``directory/.sanctum/codex.db``: one done, one paused."""
    path = directory / ".sanctum" / "codex.db"
    path.parent.mkdir(parents=True, exist_ok=True)

    async def write() -> None:
        codex = SqliteCodex(path)
        ritual = {"ritual": {"path": str(directory / "r.yaml"), "sha256": "sha256:00"}}
        await codex.put(
            "inv-done",
            Seal({"n": 1}, ("b",), 1, timestamp=1_700_000_000.0, metadata=ritual, seal_id="s1"),
        )
        await codex.put(
            "inv-done",
            Seal(
                seal_id="s2",
                aether={"n": 2},
                frontier=(),
                superstep=2,
                timestamp=1_700_000_001.0,
                metadata={**ritual, "parent": "s1"},
            ),
        )
        await codex.put(
            "inv-paused",
            Seal(
                seal_id="p1",
                aether={"q": "?"},
                frontier=("ask",),
                superstep=0,
                timestamp=1_700_000_002.0,
                metadata={**ritual, "interrupt": {"reason": "Approve?", "sigil": "ask"}},
            ),
        )
        await codex.aclose()

    asyncio.run(write())
    return path


LONG_ID = "0123456789abcdef0123456789abcdef"
"""A uuid4-hex long invocation id, as ``sanctum run`` makes them."""
LONG_SEAL = "fedcba9876543210fedcba9876543210"


def seed_long(directory: Path) -> Path:
    """Write one paused invocation with full-length ids, a deep ritual path and a long reason."""
    path = directory / ".sanctum" / "codex.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    ritual_path = directory / "rituals" / "departments" / "support" / "triage-and-escalate.yaml"
    ritual = {"ritual": {"path": str(ritual_path), "sha256": "sha256:00"}}
    reason = "Approve the refund of 420 EUR for the customer whose parcel went missing?"

    async def write() -> None:
        codex = SqliteCodex(path)
        await codex.put(
            LONG_ID,
            Seal(
                seal_id=LONG_SEAL,
                aether={"q": "?"},
                frontier=("approve_refund", "notify_customer"),
                superstep=12,
                timestamp=1_700_000_002.0,
                metadata={**ritual, "interrupt": {"reason": reason, "sigil": "approve_refund"}},
            ),
        )
        await codex.aclose()

    asyncio.run(write())
    return path
