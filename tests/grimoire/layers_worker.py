"""A child process for the prompt-layer kill drill: one summon run on a SQLite Codex.

``python -m tests.grimoire.layers_worker DB LOG fresh [--die-at N]`` starts the
Invocation ``drill``; ``... resume`` continues it from its latest Seal. Every request
the Oracle receives is appended to LOG as one JSON line (flushed and fsynced before the
answer), so the test sees the requests of a process it killed. ``--die-at N`` sends
SIGKILL to this very process at the N-th consultation (0-based), after logging it.
The ``context`` layer names this process's id, so a second rendering would show.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from sanctum.codex.sqlite import SqliteCodex
from sanctum.grimoire import PromptLayers, Tome, spell, summon
from sanctum.oracle import Oracle, OracleResponse, SpellCall
from sanctum.oracle.base import Message

ASK = {"messages": [{"role": "user", "content": "Note three things, then say done."}]}
NOTES = 3


@spell
def note(text: str) -> str:
    """Write one note down."""
    return f"noted {text}"


class LoggingOracle(Oracle):
    """Casts ``note`` until three notes are written (counted in the request), then answers."""

    arcana = "logging"

    def __init__(self, log: str, die_at: int | None) -> None:
        self.log = log
        self.die_at = die_at
        self.seen = 0

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        self._log(messages)
        if self.die_at is not None and self.seen == self.die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        self.seen += 1
        done = sum(1 for m in messages if m.get("role") == "assistant")
        if done < NOTES:
            return OracleResponse("", [SpellCall("note", {"text": f"n{done}"}, f"c{done}")])
        return OracleResponse("Done.")

    def _log(self, messages: Sequence[Message]) -> None:
        with open(self.log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"pid": os.getpid(), "messages": list(messages)}) + "\n")
            out.flush()
            os.fsync(out.fileno())

    def stream_generate(self, messages: Any, spells: Any = None) -> Any:
        raise NotImplementedError("the drill consults with generate()")


async def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("log")
    parser.add_argument("mode", choices=["fresh", "resume"])
    parser.add_argument("--die-at", type=int, default=None)
    args = parser.parse_args(argv)
    layers = PromptLayers(
        "You keep notes for the user.",
        context=lambda aether: f"This run was started by process {os.getpid()}.",
        volatile=lambda aether: f"Messages so far: {len(aether['messages'])}.",
    )
    codex = SqliteCodex(args.db)
    rite = summon(LoggingOracle(args.log, args.die_at), Tome([note]), layers, codex=codex)
    try:
        if args.mode == "fresh":
            final = await rite.ainvoke(ASK, invocation_id="drill")
        else:
            final = await rite.ainvoke(invocation_id="drill")
    finally:
        await codex.aclose()
    print("FINAL " + json.dumps(final), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
