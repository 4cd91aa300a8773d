"""A loop the guard stops is told so, in those words: not as a spent turn budget."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum.grimoire import Tome, summon
from sanctum.grimoire.guard import GuardLimits
from sanctum.oracle.base import OracleResponse
from sanctum.oracle.scripted import ScriptedOracle
from tests.grimoire.test_guardrails import CAST, call, lookup, run, status


@pytest.fixture(autouse=True)
def _clean() -> None:
    CAST.clear()


@pytest.mark.parametrize(
    ("spell", "code", "why"),
    [
        (lookup, "repeat_failure", "the same spell call kept failing"),
        (status, "same_result", "the same spell call kept returning the same result"),
    ],
)
async def test_the_guard_stop_says_what_repeated(spell: Any, code: str, why: str) -> None:
    oracle = ScriptedOracle([*[call(spell.name, {"id": 7})] * 6, "Record 7: stuck."])
    final, _ = await run(summon(oracle, Tome([spell]), guard=True))
    assert final["stop_reason"] == f"guard:{code}"
    note = final["messages"][-2]
    assert note["synthetic"] == "guard"
    assert f"The loop guard stopped spell casting: {why}." in note["content"]
    assert "turns" not in note["content"]
    assert final["messages"][-1]["content"] == "Record 7: stuck."


async def test_an_empty_answer_after_a_guard_stop_names_the_guard() -> None:
    blank = OracleResponse("", [])
    oracle = ScriptedOracle([*[call("lookup", {"id": 7})] * 6, blank, blank])
    final, _ = await run(summon(oracle, Tome([lookup]), guard=True))
    answer = final["messages"][-1]["content"]
    assert answer == (
        "The loop guard stopped the agent (the same spell call kept failing) before an "
        "answer was written."
    )
    assert "budget" not in answer


def test_a_warning_after_the_stop_is_refused() -> None:
    with pytest.raises(ValueError, match=r"warn.repeat_failure \(6\) is above stop"):
        GuardLimits(warn={"repeat_failure": 6})
    assert GuardLimits(warn={"same_result": 5}).warn["same_result"] == 5
