"""Parallel interrupts are collected; the recursion limit bounds each call."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum import END, Interrupt, RecursionLimitError, Ritual, interrupt
from sanctum.codex import MemoryCodex


def _two_questions(calls: dict[str, int], *, asynchronous: bool) -> Ritual:
    def asker(name: str) -> Any:
        def ask(aether: dict[str, Any]) -> dict[str, Any]:
            calls[name] += 1
            if f"{name}_answer" not in aether:
                interrupt(f"what does {name} say?")
            return {f"{name}_done": aether[f"{name}_answer"]}

        async def ask_async(aether: dict[str, Any]) -> dict[str, Any]:
            return ask(aether)

        return ask_async if asynchronous else ask

    ritual = Ritual().add_sigil("left", asker("left")).add_sigil("right", asker("right"))
    ritual.set_entry_point("left").set_entry_point("right")
    return ritual.add_edge("left", END).add_edge("right", END)


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_every_interrupt_of_a_superstep_is_collected_and_answered_at_once(
    asynchronous: bool,
) -> None:
    calls = {"left": 0, "right": 0}
    codex = MemoryCodex()
    rite = _two_questions(calls, asynchronous=asynchronous).compile(codex=codex)
    with pytest.raises(Interrupt) as info:
        await rite.ainvoke({}, invocation_id="two")
    pause = info.value
    assert (pause.sigil, pause.reason) == ("left", "what does left say?")  # the first
    assert pause.reasons == {"left": "what does left say?", "right": "what does right say?"}
    sealed = await codex.get("two")
    assert sealed is not None
    assert sealed.metadata["interrupt"]["reasons"] == pause.reasons

    final = await rite.ainvoke(
        invocation_id="two", updates={"left_answer": "yes", "right_answer": "no"}
    )
    assert final["left_done"] == "yes"
    assert final["right_done"] == "no"
    assert calls == {"left": 2, "right": 2}  # one round trip: each ran once more


def _chat(turns: int) -> Ritual:
    """A chat loop that pauses for a person every turn (one superstep per turn)."""

    def chat(aether: dict[str, Any]) -> dict[str, Any]:
        heard = aether.get("heard", [])
        if len(heard) >= turns:
            return {"over": True}
        if aether.get("said") is None:
            interrupt(f"turn {len(heard) + 1}: your line?")
        return {"heard": [*heard, aether["said"]], "said": None}

    ritual = Ritual().add_sigil("chat", chat).set_entry_point("chat")
    return ritual.add_conditional_edge("chat", lambda a: END if a.get("over") else "chat")


async def test_the_recursion_limit_counts_the_supersteps_of_each_call() -> None:
    codex = MemoryCodex()
    rite = _chat(10).compile(codex=codex, recursion_limit=8)
    with pytest.raises(Interrupt):
        await rite.ainvoke({}, invocation_id="chat")
    for turn in range(1, 11):
        try:
            final = await rite.ainvoke(invocation_id="chat", updates={"said": f"line {turn}"})
        except Interrupt as pause:
            assert pause.reason == f"turn {turn + 1}: your line?"
        else:
            assert turn == 10
    assert final["heard"] == [f"line {n}" for n in range(1, 11)]
    last = await codex.get("chat")
    assert last is not None
    assert last.superstep > 8


async def test_a_resume_that_spins_names_its_call_and_its_start() -> None:
    ritual = Ritual().add_sigil("spin", lambda a: {"n": a.get("n", 0) + 1})
    ritual.set_entry_point("spin").add_conditional_edge(
        "spin", lambda a: "spin" if a["n"] < 4 or a.get("go") else END
    )
    codex = MemoryCodex()
    rite = ritual.compile(codex=codex, recursion_limit=5)
    assert (await rite.ainvoke({}, invocation_id="spin"))["n"] == 4
    first = (await codex.list("spin"))[1]
    with pytest.raises(RecursionLimitError) as info:
        await rite.ainvoke(invocation_id="spin", seal_id=first.seal_id, updates={"go": True})
    message = str(info.value)
    assert "recursion limit of 5 supersteps in this resume" in message
    assert f"from seal '{first.seal_id}', superstep 2, to superstep 7" in message
    with pytest.raises(RecursionLimitError, match="in this run without reaching END"):
        await rite.ainvoke({"go": True}, invocation_id="fresh")
