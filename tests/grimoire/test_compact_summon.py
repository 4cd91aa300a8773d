"""Compaction and fallback through summon: the view, the Omens, the Seals, a resume."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.errors import OracleConnectionError, OracleResponseError, RecursionLimitError
from sanctum.grimoire import Tome, spell, summon
from sanctum.grimoire._agentry import BUDGET_NOTE
from sanctum.grimoire.compaction import SUMMARY_OPEN, Compaction, estimate_tokens, thresholds
from sanctum.omens import CompactionStalled, Omen, OracleFellBack, TranscriptCompacted
from sanctum.oracle import OracleResponse, ScriptedOracle, SpellCall
from sanctum.oracle.fallback import FallbackOracle

TASK = "Read pages 1 to 8 of the manual and tell me which page mentions the reset pin."
ASK = {"messages": [{"role": "user", "content": TASK}]}


@spell
def page(number: int) -> str:
    """Read one page of the manual."""
    return f"page {number}: " + "lorem ipsum dolor " * 90  # about 400 tokens


def script(pages: int = 8) -> list[OracleResponse | str]:
    calls: list[OracleResponse | str] = [
        OracleResponse("", [SpellCall("page", {"number": n})]) for n in range(1, pages + 1)
    ]
    return [*calls, "Page 5 mentions the reset pin."]


class _Dead(ScriptedOracle):
    async def generate(self, messages: Any, spells: Any = None) -> OracleResponse:
        raise OracleConnectionError("nobody listens", endpoint="http://127.0.0.1:9")


async def run(rite: Any, **kwargs: Any) -> tuple[dict[str, Any], list[Omen]]:
    omens: list[Omen] = []
    final: dict[str, Any] = {}
    async for omen in rite.astream(ASK, mode={"omens", "agent"}, **kwargs):
        omens.append(omen)
        if type(omen).__name__ == "RiteManifested":
            final = dict(omen.aether)
    return final, omens


async def test_a_long_agent_run_is_compacted_in_the_view_and_stored_whole() -> None:
    oracle = ScriptedOracle(script())
    rite = summon(oracle, Tome([page]), compact=Compaction(window=2048))
    final, omens = await run(rite)
    compacted = [o for o in omens if isinstance(o, TranscriptCompacted)]
    assert compacted
    assert all(o.summarizer == "mechanical" for o in compacted)
    stored = final["messages"]
    assert len(stored) == 1 + 2 * 8 + 1  # every word kept in the Aether
    assert all("lorem ipsum" in m["content"] for m in stored if m["role"] == "spell")
    last_view = oracle.calls[-1][0]
    assert len(last_view) < len(stored)
    assert last_view[1]["content"].startswith(TASK)
    assert SUMMARY_OPEN in last_view[1]["content"]
    assert f"Task (verbatim): {TASK}" in last_view[1]["content"]
    assert final["compaction"]["covers_through"] > 1
    system = {call[0][0]["content"] for call in oracle.calls}
    assert len(system) == 1  # the system prompt is byte-identical on every consultation


async def test_prefixes_stay_byte_identical_except_once_per_compaction() -> None:
    oracle = ScriptedOracle(script())
    _, omens = await run(summon(oracle, Tome([page]), compact=Compaction(window=2048)))
    breaks = 0
    for (before, _), (after, _) in zip(oracle.calls, oracle.calls[1:], strict=False):
        if after[: len(before) - 1] != before[:-1]:
            breaks += 1
    assert breaks == len([o for o in omens if isinstance(o, TranscriptCompacted)])
    assert breaks >= 1


async def test_without_compact_the_loop_is_the_seed_s() -> None:
    oracle = ScriptedOracle(script(2))
    final, _ = await run(summon(oracle, Tome([page])))
    assert "compaction" not in final
    assert oracle.calls[-1][0][1:] == final["messages"][:-1]


async def test_a_fallback_in_the_loop_gives_an_omen_and_marks_the_answer() -> None:
    chain = FallbackOracle(_Dead([]), ScriptedOracle(script(1)), names=["fast", "tiny"])
    final, omens = await run(summon(chain, Tome([page])))
    fell = [o for o in omens if isinstance(o, OracleFellBack)]
    # the dead primary is benched after its first failure, then passed over: two answers
    # by tiny, the second naming the skip
    assert [(o.from_oracle, o.to_oracle, o.reason) for o in fell] == [
        ("fast", "tiny", "connection"),
        ("fast", "tiny", "benched"),
    ]
    answers = [m for m in final["messages"] if m["role"] == "assistant"]
    assert [m["oracle"] for m in answers] == ["tiny", "tiny"]


async def test_kill_and_resume_across_a_compaction_and_a_fallback_gives_the_same_aether() -> None:
    def rite(codex: MemoryCodex, oracle: Any, limit: int = 25) -> Any:
        chain = FallbackOracle(_Dead([]), oracle, names=["fast", "tiny"])
        return summon(
            chain, Tome([page]), compact=Compaction(window=2048), codex=codex, recursion_limit=limit
        )

    codex = MemoryCodex()
    whole = await rite(codex, ScriptedOracle(script())).ainvoke(ASK, invocation_id="whole")
    assert any(m.get("oracle") == "tiny" for m in whole["messages"])
    assert whole["compaction"]["count"] >= 1

    oracle = ScriptedOracle(script())
    with pytest.raises(RecursionLimitError):
        await rite(codex, oracle, limit=11).ainvoke(ASK, invocation_id="split")  # killed mid-run
    resumed = await rite(codex, oracle).ainvoke(invocation_id="split")
    assert resumed == whole


@spell
def chapter(number: int) -> str:
    """Read one chapter of the manual."""
    return f"chapter {number}: " + "lorem ipsum dolor " * 155  # about 700 tokens


class _Windowed(ScriptedOracle):
    """A scripted model with a real 2,048-token window: past it, llama-server's overflow."""

    async def generate(self, messages: Any, spells: Any = None) -> OracleResponse:
        size = estimate_tokens(messages) + len(json.dumps(spells or [])) // 4
        if size > 2048:
            self.calls.append((list(messages), spells))
            raise OracleResponseError(
                "overflow",
                status=400,
                body='{"error":{"code":400,"message":"the request exceeds the available '
                f'context size, try increasing it","type":"exceed_context_size_error",'
                f'"n_prompt_tokens":{size},"n_ctx":2048}}}}',
            )
        return await super().generate(messages, spells)


async def test_the_forced_final_answer_is_sent_the_compacted_view() -> None:
    calls = [OracleResponse("", [SpellCall("chapter", {"number": n})]) for n in range(1, 4)]
    oracle = _Windowed([*calls, "Chapter 2 names the reset pin."])
    rite = summon(oracle, Tome([chapter]), compact=Compaction(window=2048), max_turns=3)
    final, omens = await run(rite)
    assert final["messages"][-1]["content"] == "Chapter 2 names the reset pin."
    assert final["stop_reason"] == "budget"
    request = oracle.calls[-1][0]
    assert request[-1]["content"] == BUDGET_NOTE
    assert SUMMARY_OPEN in request[1]["content"]
    assert estimate_tokens(request) < thresholds(2048).trigger
    whole = estimate_tokens(final["messages"][:-1])
    assert whole > 2048  # what the final consultation was sent before: past the window
    compacted = [o for o in omens if isinstance(o, TranscriptCompacted)]
    assert [o.sigil for o in compacted] == ["oracle", "final"]
    assert final["compaction"]["count"] == 2  # the Conduit keeps the final compaction
    assert final["compaction"]["covers_through"] == len(final["messages"]) - 4


async def test_calls_numbered_per_answer_are_summarised_with_their_own_results() -> None:
    script_ = [OracleResponse("", [SpellCall("page", {"number": n}, "call_0")]) for n in (1, 2, 3)]
    oracle = ScriptedOracle([*script_, "Page 2."])
    final, _ = await run(summon(oracle, Tome([page]), compact=Compaction(window=2048)))
    assert {m["call_id"] for m in final["messages"] if m["role"] == "spell"} == {"call_0"}
    done = [line for line in final["compaction"]["summary"].splitlines() if line.startswith("-")]
    assert done
    for line in done:
        number = line.split('"number": ')[1].split("}")[0]
        assert line.split(" → ")[1].startswith(f"page {number}: lorem")


async def test_a_dead_summariser_is_named_and_the_window_still_kept() -> None:
    oracle = ScriptedOracle(script())
    compaction = Compaction(window=2048, summarizer=_Dead([], arcana="ollama:tiny"))
    final, omens = await run(summon(oracle, Tome([page]), compact=compaction))
    stalled = [o for o in omens if isinstance(o, CompactionStalled)]
    assert stalled
    assert all(
        o.reason.startswith("the summariser ollama:tiny failed (connection: ") for o in stalled
    )
    assert all(o.summarizer == "mechanical" for o in omens if isinstance(o, TranscriptCompacted))
    assert final["compaction"]["failures"] == len(stalled)
    assert max(estimate_tokens(call[0]) for call in oracle.calls) < thresholds(2048).trigger
