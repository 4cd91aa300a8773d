"""An Entity with compaction and a fallback chain, run in a child process by the kill tests.

Usage::

    python -m tests.grimoire.agent_crash_worker STORE INVOCATION

``STORE`` is a SQLite path. The primary Oracle is an Ollama endpoint on a closed port
(a real connection refusal each time it is tried); the fallback answers from the last
message of the view it is shown, so a process that resumes the run mid-way answers
as the first would have. The window is small, so the transcript is compacted twice.
The worker starts the Invocation fresh when the store holds no Seal for it, resumes
it otherwise, prints ``SEAL <superstep>`` after each Seal, and ``FINAL <json>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

from sanctum.codex.sqlite import SqliteCodex
from sanctum.grimoire import Tome, spell, summon
from sanctum.grimoire.compaction import Compaction
from sanctum.omens.events import RiteManifested, SealWritten
from sanctum.oracle import Oracle, OracleResponse, SpellCall
from sanctum.oracle.fallback import FallbackOracle
from sanctum.oracle.ollama import OllamaOracle

__all__ = ["PAGES", "TASK"]

TASK = "Read pages 1 to 8 of the manual and tell me which page mentions the reset pin."
PAGES = 8
_PAGE = re.compile(r"^page (\d+):")


@spell
async def page(number: int) -> str:
    """Read one page of the manual."""
    await asyncio.sleep(0.05)  # a kill may land while a page is read
    return f"page {number}: " + "lorem ipsum dolor " * 90  # about 400 tokens


class Reader(Oracle):
    """Reads the next page after the last one shown; answers after the last page."""

    arcana = "reader"

    async def generate(
        self, messages: Sequence[Any], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        last = str(messages[-1].get("content") or "")
        found = _PAGE.match(last)
        read = int(found.group(1)) if found and messages[-1].get("role") == "spell" else 0
        if read >= PAGES:
            return OracleResponse("Page 5 mentions the reset pin.")
        return OracleResponse("", [SpellCall("page", {"number": read + 1})])

    async def stream_generate(
        self, messages: Sequence[Any], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        yield (await self.generate(messages, spells)).text


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def _main(store: str, invocation: str) -> int:
    codex = SqliteCodex(store)
    dead = OllamaOracle("qwen2.5:3b", base_url=f"http://127.0.0.1:{_closed_port()}")
    chain = FallbackOracle(dead, Reader(), names=["fast", "reader"], bench_for=3)
    rite = summon(chain, Tome([page]), compact=Compaction(window=2048), codex=codex)
    fresh = await codex.get(invocation) is None
    ask = {"messages": [{"role": "user", "content": TASK}]}
    stream = (
        rite.astream(ask, invocation_id=invocation, mode="omens")
        if fresh
        else rite.astream(invocation_id=invocation, mode="omens")
    )
    try:
        async for omen in stream:
            if isinstance(omen, SealWritten):
                print(f"SEAL {omen.superstep}", flush=True)
            elif isinstance(omen, RiteManifested):
                print("FINAL " + json.dumps(dict(omen.aether), sort_keys=True), flush=True)
    finally:
        await rite.aclose()
        await codex.aclose()
    return 0


def main() -> None:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("invocation")
    args = parser.parse_args()
    sys.exit(asyncio.run(_main(args.store, args.invocation)))


if __name__ == "__main__":
    main()
