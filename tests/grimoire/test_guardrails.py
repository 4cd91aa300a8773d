"""Loop guardrails and the forced final answer: the pure guard, then through summon."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.errors import RecursionLimitError, TurnBudgetExceeded
from sanctum.grimoire import Tome, spell, summon
from sanctum.grimoire.guard import GuardLimits, LoopGuard, call_signature
from sanctum.omens.events import LoopGuardTripped, Omen, SpellCallRejected, TurnBudgetReached
from sanctum.oracle.base import OracleResponse, SpellCall
from sanctum.oracle.scripted import ScriptedOracle

ASK = {"messages": [{"role": "user", "content": "Find record 7."}]}
CAST: list[dict[str, Any]] = []


def call(name: str, arguments: dict[str, Any]) -> OracleResponse:
    return OracleResponse("", [SpellCall(name, arguments)])


@spell(access="read")
def lookup(id: int) -> str:
    """Look a record up."""
    CAST.append({"id": id})
    raise LookupError(f"no record {id}")


@spell(access="read")
def status(id: int) -> str:
    """A record's status."""
    CAST.append({"id": id})
    return "pending"


@pytest.fixture(autouse=True)
def _clean() -> None:
    CAST.clear()


async def run(rite: Any, **kwargs: Any) -> tuple[dict[str, Any], list[Omen]]:
    omens: list[Omen] = []
    final: dict[str, Any] = {}
    async for omen in rite.astream(ASK, mode={"omens", "agent"}, **kwargs):
        omens.append(omen)
        if type(omen).__name__ == "RiteManifested":
            final = dict(omen.aether)
    return final, omens


# --------------------------------------------------------------------------- pure guard


def test_the_signature_ignores_argument_order() -> None:
    assert call_signature("f", {"a": 1, "b": 2}) == call_signature("f", {"b": 2, "a": 1})
    assert call_signature("f", {"a": 1}) != call_signature("f", {"a": 2})
    assert "1" not in call_signature("f", {"secret": 1}).split(":")[0]


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # (spell, args, failed, access) -> action after it (or the block before it)
        ([("f", {"a": 1}, True, "read")] * 2, ["allow", "warn"]),
        ([("f", {"a": 1}, True, "read")] * 6, ["allow", "warn", "warn", "warn", "warn", "block"]),
        (
            [
                ("f", {"a": 1}, True, "read"),
                ("w", {}, False, "write"),
                ("f", {"a": 1}, True, "read"),
            ],
            ["allow", "allow", "allow"],
        ),
        ([("f", {"a": i}, True, "read") for i in range(3)], ["allow", "allow", "warn"]),
        (
            [("f", {"a": i}, True, "read") for i in range(8)],
            [*["allow"] * 2, *["warn"] * 5, "halt"],
        ),
        ([("s", {}, False, "read")] * 6, ["allow", "warn", "warn", "warn", "warn", "block"]),
    ],
)
def test_the_guard_decides_each_step(steps: list[Any], expected: list[str]) -> None:
    guard = LoopGuard()
    actions = []
    for name, arguments, failed, access in steps:
        before = guard.before(name, arguments)
        if before.action == "block":
            actions.append("block")
            continue
        after = guard.after(name, arguments, failed=failed, result="same", access=access)
        actions.append(after.action)
        guard = LoopGuard(state=guard.state())  # every step survives a Seal
    assert actions == expected


def test_a_repeatable_spell_never_counts_identical_results() -> None:
    guard = LoopGuard()
    for _ in range(8):
        assert guard.before("poll", {}).action == "allow"
        decision = guard.after("poll", {}, failed=False, result="x", access="read", repeatable=True)
        assert decision.action == "allow"


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown loop guard counter 'loops'"):
        GuardLimits(warn={"loops": 2})
    with pytest.raises(ValueError, match="int >= 1"):
        GuardLimits(stop={"repeat_failure": 0})


# --------------------------------------------------------------------------- through summon


async def test_a_repeated_failing_call_is_warned_blocked_and_answered() -> None:
    oracle = ScriptedOracle([*[call("lookup", {"id": 7})] * 6, "Record 7 does not exist."])
    final, omens = await run(summon(oracle, Tome([lookup]), guard=True))
    spell_messages = [m for m in final["messages"] if m["role"] == "spell"]
    assert len(CAST) == 5  # the 6th identical call is blocked, never cast
    assert "failed 2 times" in spell_messages[1]["content"]
    assert spell_messages[5]["guard"] == "repeat_failure"
    assert spell_messages[5]["error"] is True
    assert final["stop_reason"] == "guard:repeat_failure"
    assert oracle.calls[-1][1] is None  # final: no spells offered
    assert final["messages"][-1] == {"role": "assistant", "content": "Record 7 does not exist."}
    tripped = [o for o in omens if isinstance(o, LoopGuardTripped)]
    assert [(o.spell, o.code, o.action) for o in tripped] == [("lookup", "repeat_failure", "block")]


async def test_the_guard_survives_a_resume_from_a_seal() -> None:
    codex = MemoryCodex()
    script: list[OracleResponse | str] = [*[call("lookup", {"id": 7})] * 6, "Gone."]
    rite = summon(ScriptedOracle(script), Tome([lookup]), guard=True, codex=codex)
    await rite.ainvoke(ASK, invocation_id="whole")
    whole = await codex.get("whole")
    assert whole is not None
    CAST.clear()
    oracle = ScriptedOracle(script)
    rite = summon(oracle, Tome([lookup]), guard=True, codex=codex, recursion_limit=6)
    with pytest.raises(RecursionLimitError):
        await rite.ainvoke(ASK, invocation_id="split")  # stops after turn 3
    rite = summon(oracle, Tome([lookup]), guard=True, codex=codex)
    final = await rite.ainvoke(invocation_id="split")
    assert len(CAST) == 5
    assert final == dict(whole.aether)


async def test_identical_results_of_a_read_spell_are_blocked() -> None:
    oracle = ScriptedOracle([*[call("status", {"id": 7})] * 6, "Pending."])
    final, _ = await run(summon(oracle, Tome([status]), guard=True))
    assert len(CAST) == 5
    assert final["stop_reason"] == "guard:same_result"


async def test_the_budget_forces_a_plain_answer() -> None:
    oracle = ScriptedOracle([*[call("status", {"id": i}) for i in range(6)], "It is pending."])
    final, omens = await run(summon(oracle, Tome([status]), max_turns=6))
    assert len(oracle.calls) == 7
    assert oracle.calls[-1][1] is None
    assert final["stop_reason"] == "budget"
    assert final["turns"] == 6
    assert final["messages"][-2]["synthetic"] == "budget"
    assert final["messages"][-1]["content"] == "It is pending."
    assert [o.turns for o in omens if isinstance(o, TurnBudgetReached)] == [6]


@pytest.mark.parametrize(
    ("replies", "answer"),
    [
        (["<think>hmm</think>Answer"], "Answer"),
        (["", "Second try."], "Second try."),
        (["", ""], "The turn budget ran out"),
    ],
)
async def test_the_final_reply_is_cleaned_and_retried(replies: list[str], answer: str) -> None:
    oracle = ScriptedOracle([call("status", {"id": 1}), *replies])
    final = await summon(oracle, Tome([status]), max_turns=1).ainvoke(ASK)
    assert final["messages"][-1]["content"].startswith(answer)


async def test_a_final_reply_with_a_call_keeps_only_the_prose() -> None:
    oracle = ScriptedOracle(
        [call("status", {"id": 1}), OracleResponse("Pending.", [SpellCall("status", {"id": 2})])]
    )
    final, omens = await run(summon(oracle, Tome([status]), max_turns=1))
    assert final["messages"][-1]["content"] == "Pending."
    assert len(CAST) == 1
    assert any(isinstance(o, SpellCallRejected) and "budget" in o.reason for o in omens)


async def test_on_budget_fail_raises_and_seals_before_final() -> None:
    codex = MemoryCodex()
    oracle = ScriptedOracle([call("status", {"id": 1})])
    rite = summon(oracle, Tome([status]), max_turns=1, on_budget="fail", codex=codex)
    with pytest.raises(TurnBudgetExceeded, match="turn budget") as caught:
        await rite.ainvoke(ASK, invocation_id="strict")
    assert caught.value.code == "turn-budget"
    assert caught.value.turns == 1
    last = await codex.get("strict")
    assert last is not None
    assert list(last.frontier) == ["final"]


async def test_without_new_options_the_loop_is_the_seed_s() -> None:
    oracle = ScriptedOracle([call("status", {"id": 1}), "Pending."])
    rite = summon(oracle, Tome([status]))
    final = await rite.ainvoke(ASK)
    assert set(final) == {"messages", "repair_rounds", "rejected_calls"}
    assert final["messages"][2] == {
        "role": "spell",
        "name": "status",
        "call_id": "call_1_1",
        "content": "pending",
    }
    assert sorted(rite.manifest["sigils"]) == ["oracle", "spells"]


async def test_a_resume_from_the_seal_before_final_runs_it_once() -> None:
    codex = MemoryCodex()
    oracle = ScriptedOracle([call("status", {"id": 1}), "Pending."])
    rite = summon(oracle, Tome([status]), max_turns=1, codex=codex)
    whole = await rite.ainvoke(ASK, invocation_id="b")
    history = await codex.list("b")
    before_final = next(s for s in history if list(s.frontier) == ["final"])
    again = ScriptedOracle(["Pending."])
    rite = summon(again, Tome([status]), max_turns=1, codex=codex)
    final = await rite.ainvoke(invocation_id="b", seal_id=before_final.seal_id)
    assert len(again.calls) == 1
    assert final["messages"] == whole["messages"]


async def test_in_prompted_mode_the_final_prompt_has_no_spell_section() -> None:
    oracle = ScriptedOracle(
        ['<spell_call>{"spell": "status", "arguments": {"id": 1}}</spell_call>', "Done."]
    )
    rite = summon(oracle, Tome([status]), max_turns=1, spell_calling="prompted")
    final = await rite.ainvoke(ASK)
    assert final["messages"][-1]["content"] == "Done."
    system = oracle.calls[-1][0][0]["content"]
    assert "status" in oracle.calls[0][0][0]["content"]
    assert "status" not in system
