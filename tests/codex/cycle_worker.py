"""A conversation cycle run in a child process by the crash and race tests.

Usage::

    python -m tests.codex.cycle_worker STORE INVOCATION [--turns N] [--go FILE] [--slow S]

``STORE`` is a SQLite path or ``postgresql://...#schema``. The worker starts the
Invocation fresh when the store holds no Seal for it, resumes it otherwise, prints
``SEAL <superstep>`` after each Seal is committed, and finally ``FINAL <json>`` with
the final Aether. A lost race prints ``SEALERROR <message>`` and exits with status 3.
``--go FILE`` waits until FILE exists before touching the store; ``--slow S`` makes
the first Sigil the worker runs sleep S seconds (so two racers overlap).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from sanctum import END, AetherSchema, Conduit, Ritual, SealError
from sanctum.aether.reducers import add, append
from sanctum.codex.base import Codex
from sanctum.omens.events import RiteManifested, SealWritten

__all__ = ["build_cycle", "expected_final", "open_store"]


def build_cycle(turns: int, codex: Codex | None, slow: float = 0.0) -> Any:
    """think -> act -> observe, ``turns`` times; each turn appends two messages."""
    first_call = {"pending": slow > 0}

    async def think(aether: dict[str, Any]) -> dict[str, Any]:
        if first_call["pending"]:
            first_call["pending"] = False
            await asyncio.sleep(slow)
        await asyncio.sleep(0.002)
        turn = aether["turn"]
        return {"messages": [{"role": "assistant", "content": f"thought {turn} " + "t" * 64}]}

    def act(aether: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [{"role": "tool", "content": f"result {len(aether['messages'])}"}]}

    def observe(aether: dict[str, Any]) -> dict[str, Any]:
        return {"turn": 1, "total": aether["turn"] * 3}

    schema = AetherSchema(
        {
            "messages": Conduit(reducer=append),
            "turn": Conduit(reducer=add),
            "total": Conduit(),
        }
    )
    ritual = Ritual(schema)
    ritual.add_sigil("think", think)
    ritual.add_sigil("act", act)
    ritual.add_sigil("observe", observe)
    ritual.set_entry_point("think")
    ritual.add_edge("think", "act")
    ritual.add_edge("act", "observe")
    ritual.add_conditional_edge("observe", lambda a: "think" if a["turn"] < turns else END)
    return ritual.compile(codex=codex, recursion_limit=turns * 3 + 5)


def initial() -> dict[str, Any]:
    """The cycle's input."""
    return {"messages": [], "turn": 0, "total": 0}


async def expected_final(turns: int) -> dict[str, Any]:
    """The final Aether of an uninterrupted run (computed in memory, no store)."""
    return await build_cycle(turns, None).ainvoke(initial())  # type: ignore[no-any-return]


def open_store(store: str) -> Codex:
    """A SqliteCodex for a path, a PostgresCodex for ``postgresql://...#schema``."""
    if store.startswith("postgresql://"):
        from sanctum.codex.postgres import PostgresCodex

        url, _, schema = store.partition("#")
        return PostgresCodex(url, schema=schema or "public")
    from sanctum.codex.sqlite import SqliteCodex

    return SqliteCodex(store)


async def _main(args: argparse.Namespace) -> int:
    codex = open_store(args.store)
    rite = build_cycle(args.turns, codex, args.slow)
    resume = await codex.get(args.invocation) is not None
    stream = (
        rite.astream(invocation_id=args.invocation, mode="omens")
        if resume
        else rite.astream(initial(), invocation_id=args.invocation, mode="omens")
    )
    try:
        async for omen in stream:
            if isinstance(omen, SealWritten):
                print(f"SEAL {omen.superstep}", flush=True)
            elif isinstance(omen, RiteManifested):
                print("FINAL " + json.dumps(dict(omen.aether)), flush=True)
    except SealError as exc:
        print(f"SEALERROR {exc}", flush=True)
        return 3
    finally:
        await codex.aclose()
    return 0


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("invocation")
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--go", default="")
    parser.add_argument("--slow", type=float, default=0.0)
    args = parser.parse_args()
    while args.go and not Path(args.go).exists():
        time.sleep(0.005)
    started = time.perf_counter()
    code = asyncio.run(_main(args))
    print(f"TOOK {time.perf_counter() - started:.3f}", flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
