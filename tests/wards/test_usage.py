"""UsageWard: tallies usage counters per Sigil and in total."""

from __future__ import annotations

from sanctum.wards import UsageWard


def _answer(**usage: object) -> dict[str, object]:
    return {"role": "assistant", "content": "ok", "usage": usage}


async def test_accumulates_per_sigil_and_in_total() -> None:
    ward = UsageWard()
    delta = {"messages": [_answer(prompt_tokens=10, completion_tokens=5)]}
    assert await ward.after_sigil("think", {}, delta) is delta
    await ward.after_sigil(
        "think", {}, {"messages": [_answer(prompt_tokens=7, completion_tokens=1)]}
    )
    await ward.after_sigil("draft", {}, {"messages": [_answer(prompt_tokens=3, cost=0.25)]})
    assert ward.summary() == {
        "total": {"prompt_tokens": 20, "completion_tokens": 6, "cost": 0.25, "calls": 3},
        "by_sigil": {
            "think": {"prompt_tokens": 17, "completion_tokens": 6},
            "draft": {"prompt_tokens": 3, "cost": 0.25},
        },
    }


async def test_ignores_messages_without_usage_and_non_numeric_counters() -> None:
    ward = UsageWard()
    await ward.after_sigil(
        "mixed",
        {},
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "x", "usage": "not a mapping"},
                _answer(model="tiny", cached=True, details={"n": 1}, tokens=4),
                "not a message",
            ],
            "other": [_answer(tokens=1000)],
        },
    )
    await ward.after_sigil("none", {}, {"answer": 42})
    await ward.after_sigil("odd", {}, {"messages": "text"})
    summary = ward.summary()
    assert summary["total"] == {"tokens": 4, "calls": 1}
    assert summary["by_sigil"] == {"mixed": {"tokens": 4}}


async def test_a_single_message_mapping_counts_too() -> None:
    ward = UsageWard()
    await ward.after_sigil("one", {}, {"messages": _answer(total_tokens=9)})
    assert ward.summary()["total"] == {"total_tokens": 9, "calls": 1}


async def test_summary_is_a_copy_and_reset_forgets_everything() -> None:
    ward = UsageWard()
    await ward.after_sigil("s", {}, {"messages": [_answer(tokens=2)]})
    snapshot = ward.summary()
    snapshot["total"]["tokens"] = 999
    snapshot["by_sigil"]["s"]["tokens"] = 999
    assert ward.summary()["total"]["tokens"] == 2
    ward.reset()
    assert ward.summary() == {"total": {"calls": 0}, "by_sigil": {}}
    await ward.after_sigil("s", {}, {"messages": [_answer(tokens=1)]})
    assert ward.summary()["by_sigil"] == {"s": {"tokens": 1}}


async def test_summon_usage_is_tallied_out_of_the_box() -> None:
    from sanctum.grimoire import Tome, spell, summon
    from sanctum.oracle.base import OracleResponse, SpellCall
    from sanctum.oracle.scripted import ScriptedOracle

    @spell
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    oracle = ScriptedOracle(
        [
            OracleResponse(
                spell_calls=[SpellCall("double", {"x": 2}, "c1")],
                usage={"prompt_tokens": 11, "completion_tokens": 3},
            ),
            OracleResponse(text="4", usage={"prompt_tokens": 20, "completion_tokens": 1}),
        ]
    )
    ward = UsageWard()
    rite = summon(oracle, Tome([double]), wards=[ward])
    await rite.ainvoke({"messages": [{"role": "user", "content": "double 2"}]})
    summary = ward.summary()
    assert summary["total"] == {"prompt_tokens": 31, "completion_tokens": 4, "calls": 2}
    assert sum(c.get("prompt_tokens", 0) for c in summary["by_sigil"].values()) == 31
