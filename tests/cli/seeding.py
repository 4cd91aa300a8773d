"""Seed a real SQLite codex with Seals, as a run would have left them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sanctum.codex.base import Seal
from sanctum.codex.sqlite import SqliteCodex

__all__ = ["seed"]


def seed(directory: Path) -> Path:
    """Write two invocations into ``directory/.sanctum/codex.db``: one done, one paused."""
    path = directory / ".sanctum" / "codex.db"
    path.parent.mkdir(parents=True, exist_ok=True)

    async def write() -> None:
        codex = SqliteCodex(path)
        ritual = {"ritual": {"path": str(directory / "r.yaml"), "sha256": "sha256:00"}}
        await codex.put(
            "inv-done",
            Seal("s1", {"n": 1}, ("b",), 1, timestamp=1_700_000_000.0, metadata=ritual),
        )
        await codex.put(
            "inv-done",
            Seal(
                "s2",
                {"n": 2},
                (),
                2,
                timestamp=1_700_000_001.0,
                metadata={**ritual, "parent": "s1"},
            ),
        )
        await codex.put(
            "inv-paused",
            Seal(
                "p1",
                {"q": "?"},
                ("ask",),
                0,
                timestamp=1_700_000_002.0,
                metadata={**ritual, "interrupt": {"reason": "Approve?", "sigil": "ask"}},
            ),
        )
        await codex.aclose()

    asyncio.run(write())
    return path
