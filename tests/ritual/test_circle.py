"""circle(): a Rite mounted as one Sigil."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum import (
    END,
    AetherSchema,
    Conduit,
    Interrupt,
    Ritual,
    SigilExecutionError,
    SigilPolicy,
    circle,
    interrupt,
)
from sanctum.aether import append
from sanctum.codex.memory import MemoryCodex
from sanctum.omens import CircleEchoed, SigilCompleted, SigilRetried, TokenEmitted


def _inner(key: str, value: Any) -> Any:
    ritual = Ritual().add_sigil("work", lambda a: {key: value}).set_entry_point("work")
    return ritual.add_edge("work", END).compile()


async def test_circle_delta_holds_only_written_keys() -> None:
    outer = Ritual().add_sigil("left", circle("left", _inner("l", 1)))
    outer.add_sigil("right", circle("right", _inner("r", 2)))
    outer.set_entry_point("left").set_entry_point("right")
    outer.add_edge("left", END).add_edge("right", END)
    updates = [o async for o in outer.compile().astream({"shared": 0})]
    deltas = {o.sigil: o.delta for o in updates if isinstance(o, SigilCompleted)}
    assert deltas == {"left": {"l": 1}, "right": {"r": 2}}


async def test_two_circles_writing_the_same_key_later_bound_wins() -> None:
    outer = Ritual().add_sigil("a", circle("a", _inner("v", "a")))
    outer.add_sigil("b", circle("b", _inner("v", "b")))
    outer.set_entry_point("b").set_entry_point("a").add_edge("a", END).add_edge("b", END)
    seen = [o async for o in outer.compile().astream({}, mode={"updates", "values"})]
    writers = [o.sigil for o in seen if isinstance(o, SigilCompleted)]
    assert sorted(writers) == ["a", "b"]
    assert seen[-1].aether == {"v": "b"}  # type: ignore[attr-defined]


async def test_circle_filters_input_to_inner_schema_and_folds_appends() -> None:
    schema = AetherSchema({"log": Conduit(append), "n": int})
    seen: list[dict[str, Any]] = []

    def one(aether: dict[str, Any]) -> dict[str, Any]:
        seen.append(dict(aether))
        return {"log": ["one"]}

    inner = Ritual(schema).add_sigil("one", one).add_sigil("two", lambda a: {"log": ["two"]})
    inner.set_entry_point("one").add_edge("one", "two").add_edge("two", END)
    outer = Ritual(AetherSchema({"log": Conduit(append), "n": int, "private": str}))
    outer.add_sigil("c", circle("c", inner.compile())).set_entry_point("c").add_edge("c", END)
    result = await outer.compile().ainvoke({"log": ["start"], "n": 1, "private": "x"})
    assert seen == [{"log": ["start"], "n": 1}]
    assert result["log"] == ["start", "one", "two"]  # not duplicated


async def test_circle_echoes_inner_omens() -> None:
    async def talk(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer("inner token")
        return {"t": 1}

    inner = Ritual().add_sigil("talk", talk).set_entry_point("talk").add_edge("talk", END)
    outer = Ritual().add_sigil("c", circle("nested", inner.compile()))
    outer.set_entry_point("c").add_edge("c", END)
    omens = [o async for o in outer.compile().astream({}, mode="omens")]
    echoes = [o for o in omens if isinstance(o, CircleEchoed)]
    assert {e.circle for e in echoes} == {"nested"}
    assert all(e.sigil == "c" and e.superstep == 1 for e in echoes)
    tokens = [e.omen for e in echoes if isinstance(e.omen, TokenEmitted)]
    assert [t.payload for t in tokens] == ["inner token"]
    assert tokens[0].sigil == "talk"


async def test_inner_interrupt_propagates_and_outer_resume_reruns_circle() -> None:
    runs: list[int] = []

    def ask(aether: dict[str, Any]) -> dict[str, Any]:
        runs.append(1)
        if "ok" not in aether:
            interrupt("inner question")
        return {"answered": aether["ok"]}

    inner = Ritual().add_sigil("ask", ask).set_entry_point("ask").add_edge("ask", END)
    outer = Ritual().add_sigil("c", circle("c", inner.compile()))
    outer.set_entry_point("c").add_edge("c", END)
    codex = MemoryCodex()
    rite = outer.compile(codex=codex)
    with pytest.raises(Interrupt) as info:
        await rite.ainvoke({}, invocation_id="outer")
    assert info.value.reason == "inner question"
    assert info.value.sigil == "c"
    assert info.value.invocation_id == "outer"
    (seal,) = await codex.list("outer")
    assert info.value.seal_id == seal.seal_id
    assert await rite.ainvoke(invocation_id="outer", updates={"ok": True}) == {
        "ok": True,
        "answered": True,
    }
    assert len(runs) == 2


def test_circle_argument_checks() -> None:
    with pytest.raises(TypeError, match="compiled Rite"):
        circle("x", Ritual())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name"):
        circle("", _inner("k", 1))


def _flaky_inner(failures: int, calls: list[int]) -> Any:
    """An inner Rite whose one Sigil raises ConnectionError ``failures`` times."""

    def fetch(aether: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) <= failures:
            raise ConnectionError(f"connection refused (call {len(calls)})")
        return {"fetched": len(calls)}

    return Ritual().add_sigil("fetch", fetch).set_entry_point("fetch").add_edge("fetch", END)


def _outer(inner: Any, policy: SigilPolicy) -> Any:
    sigil = circle("research", inner.compile())
    ritual = Ritual().add_sigil("research", sigil, policy).set_entry_point("research")
    return ritual.add_edge("research", END).compile()


async def test_retry_on_matches_the_inner_failure_of_a_circle() -> None:
    calls: list[int] = []
    policy = SigilPolicy(retries=2, retry_on=(ConnectionError,), backoff=lambda attempt: 0.0)
    rite = _outer(_flaky_inner(2, calls), policy)
    omens = [omen async for omen in rite.astream({}, mode="omens")]
    retried = [omen for omen in omens if isinstance(omen, SigilRetried)]
    assert [(omen.sigil, omen.attempt) for omen in retried] == [("research", 1), ("research", 2)]
    assert "ConnectionError" in retried[0].cause
    completed = [o for o in omens if isinstance(o, SigilCompleted) and o.sigil == "research"]
    assert [omen.delta for omen in completed] == [{"fetched": 3}]
    assert len(calls) == 3


async def test_retry_on_still_refuses_an_unrelated_inner_failure() -> None:
    calls: list[int] = []
    policy = SigilPolicy(retries=2, retry_on=(TimeoutError,), backoff=lambda attempt: 0.0)
    with pytest.raises(SigilExecutionError):
        await _outer(_flaky_inner(5, calls), policy).ainvoke({})
    assert len(calls) == 1


async def test_a_failed_circle_names_its_inner_run_as_such() -> None:
    calls: list[int] = []
    policy = SigilPolicy(retries=1, retry_on=(ConnectionError,), backoff=lambda attempt: 0.0)
    with pytest.raises(SigilExecutionError) as info:
        await _outer(_flaky_inner(5, calls), policy).ainvoke({}, invocation_id="outer-run")
    error = info.value
    message = str(error)
    assert error.sigil == "research"
    assert error.invocation_id == "outer-run"
    assert "of invocation 'outer-run' after 2 attempt(s)" in message
    assert "inner run" in message
    assert "of circle 'research'" in message
    assert message.count("invocation '") == 1  # the inner run's id is not passed off as one
    inner = error.__cause__
    assert isinstance(inner, SigilExecutionError)
    assert inner.sigil == "fetch"
    assert isinstance(inner.__cause__, ConnectionError)
    assert inner.invocation_id != "outer-run"
