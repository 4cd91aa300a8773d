"""summon: the ReAct loop as a Rite, with the repair layer on every spell call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.errors import SigilExecutionError, SpellCallParseError
from sanctum.grimoire import DEFAULT_ROLE, Tome, spell, summon
from sanctum.omens.events import Omen, SpellCallRejected, SpellCallRepaired
from sanctum.oracle.base import OracleResponse, SpellCall
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.robust import PromptedSpellCalling
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.wards.usage import UsageWard
from tests.grimoire.spells import corpus_tome
from tests.oracle.servers import ModelServer, ollama_chat, ollama_error

ASK = {"messages": [{"role": "user", "content": "What is 2 + 3?"}]}


def call(spell_name: str, arguments: dict[str, Any], call_id: str | None = None) -> OracleResponse:
    return OracleResponse("", [SpellCall(spell_name, arguments, call_id)])


async def run(rite: Any, input: dict[str, Any] = ASK) -> tuple[dict[str, Any], list[Omen]]:
    omens: list[Omen] = []
    final: dict[str, Any] = {}
    async for omen in rite.astream(input, mode="omens"):
        omens.append(omen)
        if type(omen).__name__ == "RiteManifested":
            final = dict(omen.aether)
    return final, omens


async def test_a_spell_less_conversationalist() -> None:
    oracle = ScriptedOracle(["Five."])
    rite = summon(oracle)
    final = await rite.ainvoke(ASK)
    assert final["messages"] == [*ASK["messages"], {"role": "assistant", "content": "Five."}]
    sent, spells = oracle.calls[0]
    assert sent == [{"role": "system", "content": DEFAULT_ROLE}, *ASK["messages"]]
    assert spells is None
    assert rite.manifest["sigils"] == ["oracle", "spells"]


async def test_the_react_loop_casts_spells_and_records_the_transcript() -> None:
    oracle = ScriptedOracle(
        [
            OracleResponse(
                "Let me add.",
                [SpellCall("add", {"a": 2, "b": 3}, "c1")],
                {"prompt_tokens": 10, "completion_tokens": 4},
            ),
            OracleResponse("The sum is 5.", usage={"prompt_tokens": 20, "completion_tokens": 5}),
        ]
    )
    tome = corpus_tome()
    final = await summon(oracle, tome, role="Be exact.").ainvoke(ASK)
    assert final["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Let me add.",
            "spell_calls": [{"spell": "add", "arguments": {"a": 2, "b": 3}, "call_id": "c1"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4},
        },
        {"role": "spell", "name": "add", "call_id": "c1", "content": "5"},
        {
            "role": "assistant",
            "content": "The sum is 5.",
            "usage": {"prompt_tokens": 20, "completion_tokens": 5},
        },
    ]
    assert final["repair_rounds"] == 0
    second, spells = oracle.calls[1]
    assert spells == tome.schemas()
    assert second[0] == {"role": "system", "content": "Be exact."}
    assert second[-1] == {"role": "spell", "name": "add", "call_id": "c1", "content": "5"}


async def test_two_calls_in_one_answer_get_ids_and_results_in_order() -> None:
    oracle = ScriptedOracle(
        [
            OracleResponse("", [SpellCall("add", {"a": 1, "b": 1}), SpellCall("get_time", {})]),
            "Done.",
        ]
    )
    final = await summon(oracle, corpus_tome()).ainvoke(ASK)
    assistant, first, second = final["messages"][1:4]
    assert [c["call_id"] for c in assistant["spell_calls"]] == ["call_1_1", "call_1_2"]
    assert first == {"role": "spell", "name": "add", "call_id": "call_1_1", "content": "2"}
    assert second == {
        "role": "spell",
        "name": "get_time",
        "call_id": "call_1_2",
        "content": "12:00",
    }


async def test_structured_results_are_sent_as_json() -> None:
    oracle = ScriptedOracle([call("search_notes", {"query": "q", "tags": ["a", "b"]}), "ok"])
    final = await summon(oracle, corpus_tome()).ainvoke(ASK)
    assert final["messages"][2]["content"] == '["q:a", "q:b"]'


async def test_malformed_json_is_repaired_locally_with_an_omen() -> None:
    oracle = ScriptedOracle(
        [call("add", {"__malformed_json__": "{'a': 2, 'b': 3"}, "c1"), "The sum is 5."]
    )
    final, omens = await run(summon(oracle, corpus_tome()))
    repaired = [o for o in omens if isinstance(o, SpellCallRepaired)]
    assert len(repaired) == 1
    assert repaired[0].spell == "add"
    assert repaired[0].call_id == "c1"
    assert repaired[0].raw == "{'a': 2, 'b': 3"
    assert dict(repaired[0].arguments) == {"a": 2, "b": 3}
    assert repaired[0].sigil == "spells"
    assert repaired[0].invocation_id
    assert final["messages"][2] == {"role": "spell", "name": "add", "call_id": "c1", "content": "5"}
    assert not [o for o in omens if isinstance(o, SpellCallRejected)]
    assert len(oracle.calls) == 2  # no extra round trip


async def test_the_oracle_is_shown_the_mended_call_and_the_aether_keeps_the_raw_one() -> None:
    raw = "{'a': 2, 'b': 3"
    oracle = ScriptedOracle([call("add", {"__malformed_json__": raw}, "c1"), "5."])
    final, _omens = await run(summon(oracle, corpus_tome()))
    assert final["messages"][1]["spell_calls"][0]["arguments"] == {"__malformed_json__": raw}
    shown = oracle.calls[1][0]
    (turn,) = [m for m in shown if m.get("spell_calls")]
    assert turn["spell_calls"][0]["arguments"] == {"a": 2, "b": 3}
    assert turn["spell_calls"][0]["call_id"] == "c1"


async def test_unknown_spells_become_corrections_and_the_loop_recovers() -> None:
    oracle = ScriptedOracle(
        [call("ad", {"a": 2, "b": 3}, "c1"), call("add", {"a": 2, "b": 3}, "c2"), "5."]
    )
    final, omens = await run(summon(oracle, corpus_tome()))
    rejected = [o for o in omens if isinstance(o, SpellCallRejected)]
    assert len(rejected) == 1
    assert rejected[0].spell == "ad"
    assert 'Did you mean "add"?' in rejected[0].reason
    correction = final["messages"][2]
    assert correction == {
        "role": "spell",
        "name": "ad",
        "call_id": "c1",
        "content": rejected[0].reason,
    }
    assert oracle.calls[1][0][-1] == correction  # the Oracle saw the correction
    assert final["messages"][4]["content"] == "5"
    assert final["repair_rounds"] == 0
    assert final["rejected_calls"] == []


async def test_missing_arguments_are_named_in_the_correction() -> None:
    oracle = ScriptedOracle([call("add", {"a": 2}), call("add", {"a": 2, "b": 1}), "3."])
    final = await summon(oracle, corpus_tome()).ainvoke(ASK)
    assert 'missing required argument "b"' in final["messages"][2]["content"]
    assert final["messages"][4]["content"] == "3"


@pytest.mark.parametrize("rounds", [0, 1, 2])
async def test_the_loop_surrenders_after_max_repair_rounds(rounds: int) -> None:
    script = [call("nope", {"x": i}) for i in range(rounds + 1)]
    oracle = ScriptedOracle(script)
    rite = summon(oracle, corpus_tome(), max_repair_rounds=rounds)
    with pytest.raises(SpellCallParseError) as caught:
        await rite.ainvoke(ASK)
    error = caught.value
    # It is the spec's surrender error and the engine's sigil failure at once.
    assert isinstance(error, SigilExecutionError)
    assert error.sigil == "spells"
    assert error.invocation_id
    assert error.rounds == rounds + 1
    assert error.rejected == [
        f'{{"spell": "nope", "arguments": {{"x": {i}}}}}' for i in range(rounds + 1)
    ]
    assert f"max_repair_rounds={rounds}" in str(error)
    assert oracle.remaining == 0


async def test_a_round_with_a_castable_call_resets_the_counter() -> None:
    oracle = ScriptedOracle(
        [
            call("nope", {}),
            OracleResponse("", [SpellCall("nope", {}), SpellCall("get_time", {})]),
            call("nope", {}),
            "fine",
        ]
    )
    final = await summon(oracle, corpus_tome(), max_repair_rounds=1).ainvoke(ASK)
    assert final["messages"][-1]["content"] == "fine"
    assert final["repair_rounds"] == 1


async def test_unreadable_calls_keep_their_raw_text_on_surrender() -> None:
    oracle = ScriptedOracle([call("add", {"__malformed_json__": "a is two"})])
    with pytest.raises(SpellCallParseError) as caught:
        await summon(oracle, corpus_tome(), max_repair_rounds=0).ainvoke(ASK)
    assert caught.value.rejected == ["a is two"]


async def test_spell_failures_stay_conversational() -> None:
    @spell
    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        return a / b

    oracle = ScriptedOracle([call("divide", {"a": 1, "b": 0}, "c1"), "Cannot divide by zero."])
    final = await summon(oracle, Tome([divide])).ainvoke(ASK)
    failure = final["messages"][2]
    assert failure["role"] == "spell"
    assert failure["call_id"] == "c1"
    assert failure["content"].startswith("Error: the spell divide failed: ZeroDivisionError")
    assert final["messages"][-1]["content"] == "Cannot divide by zero."


async def test_native_mode_parses_a_call_the_server_left_in_the_text() -> None:
    oracle = ScriptedOracle(
        ['<tool_call>{"name": "add", "arguments": {"a": 4, "b": 4}}</tool_call>', "8."]
    )
    final = await summon(oracle, corpus_tome()).ainvoke(ASK)
    assistant = final["messages"][1]
    assert assistant["content"] == ""
    assert assistant["spell_calls"] == [
        {"spell": "add", "arguments": {"a": 4, "b": 4}, "call_id": "call_1_1"}
    ]
    assert final["messages"][2]["content"] == "8"


async def test_prompted_mode_injects_the_prompt_and_parses_blocks() -> None:
    block = '<spell_call>{"spell": "add", "arguments": {"a": 2, "b": 2}}</spell_call>'
    oracle = ScriptedOracle([f"Adding. {block}", "4."])
    final = await summon(oracle, corpus_tome(), spell_calling="prompted").ainvoke(ASK)
    assert final["messages"][1]["content"] == "Adding."
    assert final["messages"][2]["content"] == "4"
    first, spells = oracle.calls[0]
    assert spells is None
    assert first[0]["content"].startswith(DEFAULT_ROLE)
    assert "## add" in first[0]["content"]
    second = oracle.calls[1][0]
    assert second[-1] == {"role": "user", "content": "Result of spell add:\n4"}


async def test_prompted_bare_json_is_repaired_with_an_omen() -> None:
    oracle = ScriptedOracle(['{"spell": "add", "arguments": {"a": 1, "b": 2}}', "3."])
    final, omens = await run(summon(oracle, corpus_tome(), spell_calling="prompted"))
    repaired = [o for o in omens if isinstance(o, SpellCallRepaired)]
    assert [o.spell for o in repaired] == ["add"]
    assert "full call" in repaired[0].detail
    assert final["messages"][2]["content"] == "3"


async def test_auto_mode_falls_back_when_ollama_rejects_tools(server: ModelServer) -> None:
    server.reply(
        ollama_error(400, "registry.ollama.ai/library/gemma3:4b does not support tools"),
        ollama_chat('<spell_call>{"spell": "add", "arguments": {"a": 2, "b": 3}}</spell_call>'),
        ollama_chat("It is 5."),
    )
    oracle = OllamaOracle("gemma3:4b", base_url=server.url)
    final = await summon(oracle, corpus_tome(), spell_calling="auto").ainvoke(ASK)
    await oracle.aclose()
    assert [m["role"] for m in final["messages"]] == ["user", "assistant", "spell", "assistant"]
    assert final["messages"][-1]["content"] == "It is 5."
    assert "tools" in server.requests[0].json
    assert "tools" not in server.requests[1].json
    assert "tools" not in server.requests[2].json


def test_the_strategy_wraps_the_oracle() -> None:
    inner = ScriptedOracle([])
    prompted = PromptedSpellCalling(inner, mode="auto")
    assert summon(prompted, spell_calling="prompted").manifest["sigils"] == ["oracle", "spells"]
    with pytest.raises(ValueError, match="'native', 'prompted', 'auto'"):
        summon(inner, spell_calling="telepathy")
    with pytest.raises(ValueError, match="max_repair_rounds"):
        summon(inner, max_repair_rounds=-1)


async def test_role_merges_with_a_leading_system_message_and_can_be_empty() -> None:
    oracle = ScriptedOracle(["a", "b"])
    transcript = {"messages": [{"role": "system", "content": "House rules."}, *ASK["messages"]]}
    await summon(oracle, role="Role.").ainvoke(transcript)
    assert oracle.calls[0][0][0] == {"role": "system", "content": "Role.\n\nHouse rules."}
    await summon(oracle, role="").ainvoke(ASK)
    assert oracle.calls[1][0] == ASK["messages"]


async def test_usage_ward_and_codex_are_forwarded() -> None:
    usage = UsageWard()
    codex = MemoryCodex()
    oracle = ScriptedOracle(
        [
            OracleResponse("", [SpellCall("get_time", {})], {"total_tokens": 7}),
            OracleResponse("Noon.", usage={"total_tokens": 3}),
        ]
    )
    rite = summon(oracle, corpus_tome(), codex=codex, wards=[usage], recursion_limit=9)
    await rite.ainvoke(ASK, invocation_id="inv-1")
    assert usage.summary()["total"]["total_tokens"] == 10
    assert rite.recursion_limit == 9
    seal = await codex.get("inv-1")
    assert seal is not None
    assert seal.aether["messages"][-1]["content"] == "Noon."


async def test_non_finite_arguments_become_corrections_even_with_a_codex(tmp_path: Path) -> None:
    from sanctum.codex.sqlite import SqliteCodex

    @spell
    def scale(x: float) -> float:
        """Scale a number."""
        return x * 2

    oracle = ScriptedOracle(
        ['<spell_call>{"spell": "scale", "arguments": {"x": NaN}}</spell_call>', "done"]
    )
    rite = summon(
        oracle, Tome([scale]), spell_calling="prompted", codex=SqliteCodex(tmp_path / "c.db")
    )
    final = await rite.ainvoke(ASK)
    correction = final["messages"][2]
    assert correction["role"] == "spell"
    assert "finite number" in correction["content"]
    assert "NaN" not in correction["content"].split("for example:")[1]
    assert final["messages"][-1]["content"] == "done"
