"""The superstep loop: run semantics, merges, joins, recursion, interrupts, Seals."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sanctum import (
    END,
    START,
    AetherSchema,
    AetherValidationError,
    Conduit,
    Interrupt,
    RecursionLimitError,
    Ritual,
    SealError,
    SigilJoinError,
    interrupt,
)
from sanctum.aether import add, append
from sanctum.codex import SqliteCodex
from sanctum.codex.memory import MemoryCodex
from tests.ritual.helpers import counter_cycle, noop, recorder


async def test_each_sigil_gets_a_copy_and_input_is_not_mutated() -> None:
    seen: list[dict[str, Any]] = []

    def meddler(aether: dict[str, Any]) -> dict[str, Any]:
        aether["x"] = "mutated"
        seen.append(aether)
        return {"y": 1}

    def witness(aether: dict[str, Any]) -> dict[str, Any]:
        seen.append(dict(aether))
        return {}

    ritual = Ritual().add_sigil("m", meddler).add_sigil("w", witness)
    ritual.set_entry_point("m").set_entry_point("w").add_edge("m", END).add_edge("w", END)
    start = {"x": "original"}
    result = await ritual.compile().ainvoke(start)
    assert start == {"x": "original"}
    assert result == {"x": "original", "y": 1}
    assert seen[1] == {"x": "original"}  # the sibling never saw the mutation


async def test_sync_and_async_sigils_mix_in_one_superstep() -> None:
    async def slow(aether: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        return {"slow": True}

    ritual = Ritual().add_sigil("slow", slow).add_sigil("fast", lambda a: {"fast": True})
    ritual.set_entry_point("slow").set_entry_point("fast")
    ritual.add_edge("slow", END).add_edge("fast", END)
    assert await ritual.compile().ainvoke({}) == {"slow": True, "fast": True}


@pytest.mark.parametrize("schema", [None, AetherSchema({"v": str, "log": Conduit(append)})])
async def test_deltas_merge_in_bind_order_not_completion_order(
    schema: AetherSchema | None,
) -> None:
    async def first(aether: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.05)  # bound first, finishes last
        return {"v": "first", "log": ["first"]}

    async def second(aether: dict[str, Any]) -> dict[str, Any]:
        return {"v": "second", "log": ["second"]}

    ritual = Ritual(schema).add_sigil("first", first).add_sigil("second", second)
    ritual.set_entry_point("second").set_entry_point("first")
    ritual.add_edge("first", END).add_edge("second", END)
    result = await ritual.compile().ainvoke({"log": []})
    assert result["v"] == "second"  # the later-bound sigil wins the overwrite
    assert result["log"] == (["second"] if schema is None else ["first", "second"])


async def test_router_values_and_path_map() -> None:
    log: list[str] = []
    ritual = Ritual().add_sigil("a", recorder(log, "a")).add_sigil("b", recorder(log, "b"))
    ritual.set_entry_point("a").add_edge("b", END)
    ritual.add_conditional_edge("a", lambda x: "yes" if x["go"] else "no", {"yes": "b", "no": END})
    rite = ritual.compile()
    await rite.ainvoke({"go": True})
    await rite.ainvoke({"go": False})
    assert log == ["a", "b", "a"]


@pytest.mark.parametrize(
    ("router", "path_map", "match"),
    [
        (lambda a: "ghost", None, "neither a bound sigil nor END"),
        (lambda a: 42, None, "neither a bound sigil nor END"),
        (lambda a: "maybe", {"yes": END}, "not a key of its path_map"),
        (lambda a: ["unhashable"], {"yes": END}, "not a key of its path_map"),
    ],
)
async def test_bad_router_values_raise_value_error(router: Any, path_map: Any, match: str) -> None:
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a")
    ritual.add_conditional_edge("a", router, path_map)
    with pytest.raises(ValueError, match=match):
        await ritual.compile().ainvoke({})


async def test_async_router_is_awaited() -> None:
    async def route(aether: dict[str, Any]) -> str:
        return END if aether["i"] >= 3 else "tick"

    ritual = Ritual().add_sigil("tick", lambda a: {"i": a["i"] + 1}).set_entry_point("tick")
    ritual.add_conditional_edge("tick", route)
    assert await ritual.compile().ainvoke({"i": 0}) == {"i": 3}


@pytest.mark.parametrize("bad", [None, [("k", 1)], "text", 3])
async def test_non_mapping_delta_is_type_error(bad: Any) -> None:
    ritual = Ritual().add_sigil("bad", lambda a: bad).set_entry_point("bad").add_edge("bad", END)
    with pytest.raises(TypeError, match="'bad' returned"):
        await ritual.compile().ainvoke({})


async def test_async_non_mapping_delta_is_type_error() -> None:
    async def bad(aether: dict[str, Any]) -> Any:
        return None

    ritual = Ritual().add_sigil("bad", bad).set_entry_point("bad").add_edge("bad", END)
    with pytest.raises(TypeError, match="NoneType"):
        await ritual.compile().ainvoke({})


async def test_fan_out_and_any_fan_in_coalesces() -> None:
    log: list[str] = []
    ritual = Ritual()
    for name in ("spread", "l", "r", "gate"):
        ritual.add_sigil(name, recorder(log, name))
    ritual.set_entry_point("spread").add_edge("spread", "l").add_edge("spread", "r")
    ritual.add_edge("l", "gate").add_edge("r", "gate").add_edge("gate", END)
    await ritual.compile().ainvoke({})
    assert log == ["spread", "l", "r", "gate"]  # l and r both activate gate: it runs once


def _uneven(join: str, log: list[str]) -> Ritual:
    # START -> a -> a2 -> j ; START -> b -> j   (branches of length 2 and 1)
    ritual = Ritual()
    for name in ("a", "a2", "b"):
        ritual.add_sigil(name, recorder(log, name))
    ritual.add_sigil("j", recorder(log, "j"), join=join)
    ritual.set_entry_point("a").set_entry_point("b")
    ritual.add_edge("a", "a2").add_edge("a2", "j").add_edge("b", "j").add_edge("j", END)
    return ritual


async def test_any_join_with_uneven_branches_runs_twice() -> None:
    log: list[str] = []
    await _uneven("any", log).compile().ainvoke({})
    assert log.count("j") == 2


async def test_all_join_waits_across_supersteps_and_runs_once() -> None:
    log: list[str] = []
    await _uneven("all", log).compile().ainvoke({})
    assert log == ["a", "b", "a2", "j"]


async def test_join_state_is_carried_in_seal_metadata() -> None:
    codex = MemoryCodex()
    await _uneven("all", []).compile(codex=codex).ainvoke({}, invocation_id="inv")
    seals = await codex.list("inv")
    assert [s.superstep for s in seals] == [1, 2, 3]
    assert seals[0].metadata["joins"] == {"j": ["b"]}
    assert seals[0].frontier == ("a2",)
    assert seals[1].metadata["joins"] == {}
    assert seals[1].frontier == ("j",)
    assert seals[2].frontier == (END,)


async def test_join_state_survives_resumption() -> None:
    log: list[str] = []
    ritual = Ritual()
    ritual.add_sigil("a", recorder(log, "a")).add_sigil("b", recorder(log, "b"))

    def a2(aether: dict[str, Any]) -> dict[str, Any]:
        if not aether.get("ok"):
            interrupt("approve a2?")
        log.append("a2")
        return {}

    ritual.add_sigil("a2", a2).add_sigil("j", recorder(log, "j"), join="all")
    ritual.set_entry_point("a").set_entry_point("b")
    ritual.add_edge("a", "a2").add_edge("a2", "j").add_edge("b", "j").add_edge("j", END)
    rite = ritual.compile(codex=MemoryCodex())
    with pytest.raises(Interrupt):
        await rite.ainvoke({}, invocation_id="inv")
    await rite.ainvoke(invocation_id="inv", updates={"ok": True})
    assert log == ["a", "b", "a2", "j"]


async def test_join_error_names_missing_predecessors() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).add_sigil("c", noop)
    ritual.add_sigil("d", noop).add_sigil("j", noop, join="all")
    ritual.set_entry_point("a").set_entry_point("b")
    ritual.add_edge("a", "j").add_edge("c", "j").add_edge("d", "j").add_edge("j", END)
    ritual.add_conditional_edge("b", lambda x: END, {"c": "c", "d": "d", END: END})
    with pytest.raises(SigilJoinError, match="'j' still waits") as info:
        await ritual.compile().ainvoke({})
    assert info.value.pending == {"j": ["c", "d"]}


async def test_dynamic_router_to_a_join_is_a_route_error() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).add_sigil("j", noop, join="all")
    ritual.set_entry_point("a").add_edge("a", "j").add_edge("j", END)
    ritual.set_entry_point("b").add_conditional_edge("b", lambda x: "j")
    with pytest.raises(ValueError, match="join='all'"):
        await ritual.compile().ainvoke({})


async def test_non_join_sigil_activated_in_two_supersteps_runs_twice() -> None:
    log: list[str] = []
    ritual = Ritual().add_sigil("a", recorder(log, "a")).add_sigil("b", recorder(log, "b"))
    ritual.add_sigil("t", recorder(log, "t"))
    ritual.set_entry_point("a").set_entry_point("t")
    ritual.add_edge("a", "b").add_edge("b", "t").add_edge("t", END)
    await ritual.compile().ainvoke({})
    assert log == ["a", "t", "b", "t"]


async def test_recursion_limit_names_invocation_and_last_sigil() -> None:
    ritual = Ritual().add_sigil("spin", noop).set_entry_point("spin").add_edge("spin", "spin")
    with pytest.raises(RecursionLimitError) as info:
        await ritual.compile(recursion_limit=5).ainvoke({}, invocation_id="loop-1")
    assert "'loop-1'" in str(info.value)
    assert "'spin'" in str(info.value)
    assert info.value.invocation_id == "loop-1"
    assert info.value.sigil == "spin"
    assert info.value.limit == 5


async def test_recursion_limit_allows_exactly_limit_supersteps() -> None:
    assert (await counter_cycle(10, recursion_limit=10).ainvoke({"i": 0})) == {"i": 10}
    with pytest.raises(RecursionLimitError):
        await counter_cycle(11, recursion_limit=10).ainvoke({"i": 0})


async def test_long_cycle_is_fine() -> None:
    assert (await counter_cycle(5000).ainvoke({"i": 0})) == {"i": 5000}


async def test_schema_rejects_undeclared_input_and_delta() -> None:
    schema = AetherSchema({"n": int})
    ritual = Ritual(schema).add_sigil("a", lambda x: {"oops": 1})
    rite = ritual.set_entry_point("a").add_edge("a", END).compile()
    with pytest.raises(AetherValidationError, match="input"):
        await rite.ainvoke({"n": 1, "stray": 2})
    with pytest.raises(AetherValidationError, match="'a'") as info:
        await rite.ainvoke({"n": 1})
    assert info.value.sigil == "a"
    assert info.value.keys == ("oops",)


async def test_interrupt_discards_superstep_deltas_and_reports() -> None:
    def asks(aether: dict[str, Any]) -> dict[str, Any]:
        interrupt("need a human")

    async def sibling(aether: dict[str, Any]) -> dict[str, Any]:
        return {"sibling": True}

    ritual = Ritual().add_sigil("before", lambda a: {"before": True})
    ritual.add_sigil("asks", asks).add_sigil("sib", sibling)
    ritual.set_entry_point("before").add_edge("before", "asks").add_edge("before", "sib")
    ritual.add_edge("asks", END).add_edge("sib", END)
    with pytest.raises(Interrupt) as info:
        await ritual.compile().ainvoke({}, invocation_id="p")
    assert info.value.reason == "need a human"
    assert info.value.sigil == "asks"
    assert info.value.invocation_id == "p"
    assert info.value.seal_id is None  # no codex, no seal


async def test_interrupt_seal_and_resume_reruns_whole_frontier() -> None:
    runs: list[str] = []

    def gate(aether: dict[str, Any]) -> dict[str, Any]:
        runs.append("gate")
        if "answer" not in aether:
            interrupt("what now?")
        return {"done": aether["answer"]}

    def other(aether: dict[str, Any]) -> dict[str, Any]:
        runs.append("other")
        return {"other": len(runs)}

    codex = MemoryCodex()
    ritual = Ritual().add_sigil("first", lambda a: {"first": 1})
    ritual.add_sigil("other", other).add_sigil("gate", gate)
    ritual.set_entry_point("first").add_edge("first", "gate").add_edge("first", "other")
    ritual.add_edge("gate", END).add_edge("other", END)
    rite = ritual.compile(codex=codex)
    with pytest.raises(Interrupt) as info:
        await rite.ainvoke({}, invocation_id="inv")
    seals = await codex.list("inv")
    assert [s.superstep for s in seals] == [1, 1]
    paused = seals[-1]
    assert paused.seal_id == info.value.seal_id
    assert paused.frontier == ("other", "gate")
    assert paused.metadata["interrupt"] == {
        "reason": "what now?",
        "sigil": "gate",
        "reasons": {"gate": "what now?"},
    }
    assert paused.aether == {"first": 1}  # the interrupted superstep's deltas are gone
    assert paused.metadata["parent"] == seals[0].seal_id

    result = await rite.ainvoke(invocation_id="inv", updates={"answer": 42})
    assert result["done"] == 42
    assert runs == ["other", "gate", "other", "gate"]  # the whole frontier re-ran
    seals = await codex.list("inv")
    assert seals[-1].superstep == 2
    assert seals[-1].frontier == (END,)
    assert seals[-1].metadata["updates"] == {"answer": 42}
    assert seals[-1].metadata["parent"] == paused.seal_id


async def test_interrupt_in_first_superstep_seals_superstep_zero() -> None:
    codex = MemoryCodex()
    ritual = Ritual().add_sigil("ask", lambda a: interrupt("hi") if "a" not in a else {"ok": 1})
    rite = ritual.set_entry_point("ask").add_edge("ask", END).compile(codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({"x": 1}, invocation_id="z")
    (seal,) = await codex.list("z")
    assert seal.superstep == 0
    assert seal.frontier == ("ask",)
    assert seal.aether == {"x": 1}
    assert await rite.ainvoke(invocation_id="z", updates={"a": 1}) == {"x": 1, "a": 1, "ok": 1}


async def test_seal_after_every_superstep_with_metadata() -> None:
    codex = MemoryCodex()
    rite = counter_cycle(3, codex=codex)
    await rite.ainvoke({"i": 0}, invocation_id="c", metadata={"file": "x.yaml"})
    seals = await codex.list("c")
    assert [s.superstep for s in seals] == [1, 2, 3]
    assert [s.aether["i"] for s in seals] == [1, 2, 3]
    assert [s.frontier for s in seals] == [("tick",), ("tick",), (END,)]
    assert seals[0].metadata["parent"] is None
    assert seals[1].metadata["parent"] == seals[0].seal_id
    assert all(s.metadata["file"] == "x.yaml" for s in seals)
    assert seals[0].metadata["writers"] == {"i": ["tick"]}


async def test_resume_errors() -> None:
    rite = counter_cycle(2)
    with pytest.raises(SealError, match="no Codex"):
        await rite.ainvoke(invocation_id="x")
    rite = counter_cycle(2, codex=MemoryCodex())
    with pytest.raises(SealError, match="invocation_id"):
        await rite.ainvoke()
    with pytest.raises(SealError, match="No Seals"):
        await rite.ainvoke(invocation_id="never-ran")
    await rite.ainvoke({"i": 0}, invocation_id="ran")
    with pytest.raises(SealError, match="no seal 'bogus'"):
        await rite.ainvoke(invocation_id="ran", seal_id="bogus")


async def test_resume_of_finished_invocation_returns_its_aether() -> None:
    rite = counter_cycle(2, codex=MemoryCodex())
    await rite.ainvoke({"i": 0}, invocation_id="f")
    assert await rite.ainvoke(invocation_id="f") == {"i": 2}


async def test_updates_merge_through_reducers_and_are_validated() -> None:
    schema = AetherSchema({"log": Conduit(append), "n": Conduit(add), "ok": bool})

    def wait(aether: dict[str, Any]) -> dict[str, Any]:
        if not aether.get("ok"):
            interrupt("ok?")
        return {"log": ["done"]}

    ritual = Ritual(schema).add_sigil("wait", wait).set_entry_point("wait").add_edge("wait", END)
    rite = ritual.compile(codex=MemoryCodex())
    with pytest.raises(Interrupt):
        await rite.ainvoke({"log": ["start"], "n": 1}, invocation_id="u")
    with pytest.raises(AetherValidationError, match="updates"):
        await rite.ainvoke(invocation_id="u", updates={"stray": 1})
    result = await rite.ainvoke(invocation_id="u", updates={"log": ["human"], "n": 2, "ok": True})
    assert result == {"log": ["start", "human", "done"], "n": 3, "ok": True}


async def test_time_travel_makes_a_tree() -> None:
    codex = MemoryCodex()
    ritual = Ritual().add_sigil("a", lambda x: {"a": 1}).add_sigil("b", lambda x: {"b": x.get("v")})
    ritual.set_entry_point("a").add_edge("a", "b").add_edge("b", END)
    rite = ritual.compile(codex=codex)
    await rite.ainvoke({}, invocation_id="t")
    first, _second = await codex.list("t")
    left = await rite.ainvoke(invocation_id="t", seal_id=first.seal_id, updates={"v": "left"})
    right = await rite.ainvoke(invocation_id="t", seal_id=first.seal_id, updates={"v": "right"})
    assert left == {"a": 1, "v": "left", "b": "left"}
    assert right == {"a": 1, "v": "right", "b": "right"}
    history = await codex.list("t")
    assert len(history) == 4
    assert history[2].metadata["parent"] == first.seal_id
    assert history[3].metadata["parent"] == first.seal_id
    assert history[3].aether == {"a": 1, "v": "right", "b": "right"}


async def test_time_travel_with_input_is_refused() -> None:
    rite = counter_cycle(2, codex=MemoryCodex())
    with pytest.raises(SealError, match="input"):
        await rite.ainvoke({"i": 0}, invocation_id="t", seal_id="abc")


async def test_two_concurrent_resumes_one_wins() -> None:
    codex = MemoryCodex()
    release = asyncio.Event()

    async def slow(aether: dict[str, Any]) -> dict[str, Any]:
        if not aether.get("go"):
            interrupt("go?")
        await release.wait()
        return {"by": aether["who"]}

    ritual = Ritual().add_sigil("slow", slow).set_entry_point("slow").add_edge("slow", END)
    rite = ritual.compile(codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({}, invocation_id="race")
    one = asyncio.ensure_future(
        rite.ainvoke(invocation_id="race", updates={"go": True, "who": "one"})
    )
    two = asyncio.ensure_future(
        rite.ainvoke(invocation_id="race", updates={"go": True, "who": "two"})
    )
    await asyncio.sleep(0.01)
    release.set()
    results = await asyncio.gather(one, two, return_exceptions=True)
    errors = [r for r in results if isinstance(r, SealError)]
    wins = [r for r in results if isinstance(r, dict)]
    assert len(errors) == 1
    assert len(wins) == 1
    assert "is being run by another call" in str(errors[0])  # the loser ran nothing
    history = await codex.list("race")
    assert len(history) == 2
    assert history[-1].aether["by"] == wins[0]["by"]


async def test_fresh_run_returns_a_copy_detached_from_seals() -> None:
    codex = MemoryCodex()
    result = await counter_cycle(1, codex=codex).ainvoke({"i": 0}, invocation_id="d")
    result["i"] = 99
    (seal,) = await codex.list("d")
    assert seal.aether["i"] == 1


async def test_input_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="mapping"):
        await counter_cycle(1).ainvoke([1, 2])  # type: ignore[arg-type]


async def test_uneven_branches_example_from_the_docs() -> None:
    log: list[str] = []
    await _uneven("any", log).compile().ainvoke({})
    assert log == ["a", "b", "a2", "j", "j"]


async def test_conduit_defaults_seed_fresh_runs_but_not_resumptions() -> None:
    seen: list[list[str]] = []

    def listen(aether: dict[str, Any]) -> dict[str, Any]:
        seen.append(list(aether["heard"]))
        if not aether["heard"]:
            interrupt("say something")
        return {"heard": ["ok"]}

    ritual = Ritual(AetherSchema({"heard": Conduit(reducer=append, default=[])}))
    ritual.add_sigil("listen", listen).add_edge(START, "listen").add_edge("listen", END)
    rite = ritual.compile(codex=MemoryCodex())
    with pytest.raises(Interrupt):
        await rite.ainvoke({}, invocation_id="d1")
    final = await rite.ainvoke(invocation_id="d1", updates={"heard": ["hello"]})
    # The default seeded the fresh run; the resumption kept the Sealed value.
    assert seen == [[], ["hello"]]
    assert final == {"heard": ["hello", "ok"]}


# ------------------------------------------------ handing control back between supersteps


def _sleepy_cycle(n: int, log: list[int], codex: Any, pause: float = 0.02) -> Any:
    """A cycle of ``n`` synchronous Sigils, each blocking for ``pause`` seconds."""

    def tick(aether: dict[str, Any]) -> dict[str, Any]:
        time.sleep(pause)
        log.append(aether["i"] + 1)
        return {"i": aether["i"] + 1}

    ritual = Ritual().add_sigil("tick", tick).set_entry_point("tick")
    ritual.add_conditional_edge("tick", lambda a: "tick" if a["i"] < n else END)
    return ritual.compile(codex=codex, recursion_limit=n + 5)


@pytest.fixture(params=["memory", "sqlite"])
async def any_codex(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """A MemoryCodex and a real SQLite file Codex (their ``put`` never suspends)."""
    codex: Any = MemoryCodex() if request.param == "memory" else SqliteCodex(tmp_path / "s.db")
    yield codex
    await codex.aclose()


async def test_wait_for_times_out_a_run_of_sync_sigils_and_it_resumes(any_codex: Any) -> None:
    log: list[int] = []
    codex = any_codex
    rite = _sleepy_cycle(20, log, codex)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(rite.ainvoke({"i": 0}, invocation_id="slow"), 0.05)
    stopped_after = len(log)
    assert 1 <= stopped_after < 20  # cancelled between supersteps, long before the end
    latest = await codex.get("slow")
    assert latest is not None
    assert latest.superstep == stopped_after  # the last Seal is intact ...
    assert latest.aether == {"i": stopped_after}
    result = await rite.ainvoke(invocation_id="slow")  # ... and resumable
    assert result == {"i": 20}
    assert log == list(range(1, 21))  # no superstep ran twice or was skipped


async def test_a_codex_free_run_of_sync_sigils_can_be_timed_out_too() -> None:
    log: list[int] = []
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(_sleepy_cycle(20, log, None).ainvoke({"i": 0}), 0.05)
    assert 1 <= len(log) < 20


async def test_astream_with_a_codex_delivers_omens_while_it_runs(any_codex: Any) -> None:
    log: list[int] = []
    rite = _sleepy_cycle(10, log, any_codex, pause=0.005)
    executed_at: list[int] = []
    async for omen in rite.astream({"i": 0}, mode="values"):
        executed_at.append(len(log))
        assert omen.aether["i"] == len(executed_at)  # type: ignore[attr-defined]
    assert len(executed_at) == 10
    assert executed_at == list(range(1, 11))  # each Omen arrived right after its superstep


async def test_closing_a_stream_with_a_codex_cancels_the_run_between_supersteps(
    any_codex: Any,
) -> None:
    log: list[int] = []
    codex = any_codex
    rite = _sleepy_cycle(50, log, codex, pause=0.005)
    stream = rite.astream({"i": 0}, invocation_id="closed", mode="values")
    async for _omen in stream:
        break
    await stream.aclose()  # type: ignore[attr-defined]
    assert len(asyncio.all_tasks()) == 1
    stopped_after = len(log)
    assert stopped_after < 50
    latest = await codex.get("closed")
    assert latest is not None
    assert latest.aether == {"i": stopped_after}
    assert await rite.ainvoke(invocation_id="closed") == {"i": 50}


_SIGINT_SCRIPT = """
import asyncio, sys, time
from sanctum import END, Ritual
from sanctum.codex import SqliteCodex

def tick(aether):
    time.sleep(0.01)
    print(aether["i"] + 1, flush=True)
    return {"i": aether["i"] + 1}

ritual = Ritual().add_sigil("tick", tick).set_entry_point("tick")
ritual.add_conditional_edge("tick", lambda a: "tick" if a["i"] < 1000 else END)
rite = ritual.compile(codex=SqliteCodex(sys.argv[1]), recursion_limit=1005)
asyncio.run(rite.ainvoke({"i": 0}, invocation_id="cli"))
print("finished", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_cancels_asyncio_run_between_supersteps(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(_SIGINT_SCRIPT, encoding="utf-8")
    db = tmp_path / "seals.db"
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(
        [sys.executable, str(script), str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    ) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        first = child.stdout.readline()
        assert first.strip() == "1"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    lines = [first.strip(), *out.split()]
    assert "finished" not in lines
    assert "KeyboardInterrupt" in err
    assert child.returncode != 0
    stopped_after = int(lines[-1])
    assert stopped_after < 1000

    async def latest() -> Any:
        codex = SqliteCodex(db)
        try:
            return await codex.get("cli")
        finally:
            await codex.aclose()

    seal = asyncio.run(latest())
    assert seal is not None
    assert seal.aether == {"i": stopped_after}
