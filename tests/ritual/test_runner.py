"""The runner: policies (timeout, retries, on_error), cancellation, Ward hooks."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from sanctum import (
    END,
    AetherSchema,
    Interrupt,
    Ritual,
    SigilExecutionError,
    SigilPolicy,
    SigilTimeoutError,
    Ward,
    WardRejection,
    interrupt,
)
from sanctum.codex.memory import MemoryCodex
from sanctum.omens import DeltaRejected, Omen, SigilRetried
from tests.ritual.helpers import noop


def _single(fn: Any, policy: SigilPolicy | None = None, **compile_kwargs: Any) -> Any:
    ritual = Ritual().add_sigil("s", fn, policy).set_entry_point("s").add_edge("s", END)
    return ritual.compile(**compile_kwargs)


async def _omens(rite: Any, input: Any, mode: Any = "omens") -> tuple[list[Omen], Exception | None]:
    seen: list[Omen] = []
    try:
        async for omen in rite.astream(input, mode=mode):
            seen.append(omen)
    except Exception as exc:
        return seen, exc
    return seen, None


async def test_timeout_bounds_async_sigil() -> None:
    async def stall(aether: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(5)
        return {}

    rite = _single(stall, SigilPolicy(timeout=0.05))
    with pytest.raises(SigilTimeoutError) as info:
        await rite.ainvoke({"x": 1}, invocation_id="t")
    assert isinstance(info.value, SigilExecutionError)
    assert info.value.timeout == 0.05
    assert info.value.sigil == "s"
    assert info.value.aether == {"x": 1}
    assert info.value.invocation_id == "t"
    assert isinstance(info.value.__cause__, TimeoutError)


async def test_timeout_error_raised_by_sigil_itself_is_not_a_policy_timeout() -> None:
    async def own(aether: dict[str, Any]) -> dict[str, Any]:
        raise TimeoutError("my own")

    with pytest.raises(SigilExecutionError) as info:
        await _single(own, SigilPolicy(timeout=5)).ainvoke({})
    assert not isinstance(info.value, SigilTimeoutError)
    assert isinstance(info.value.__cause__, TimeoutError)


async def test_retries_emit_omens_and_sleep_backoff() -> None:
    calls: list[int] = []
    asked: list[int] = []

    def backoff(attempt: int) -> float:
        asked.append(attempt)
        return 0.001

    async def flaky(aether: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError(f"try {len(calls)}")
        return {"ok": len(calls)}

    rite = _single(flaky, SigilPolicy(retries=3, backoff=backoff))
    omens, error = await _omens(rite, {})
    assert error is None
    retried = [o for o in omens if isinstance(o, SigilRetried)]
    assert [r.attempt for r in retried] == [1, 2]
    assert "try 1" in retried[0].cause
    assert retried[0].sigil == "s"
    assert retried[0].delay == 0.001
    assert asked == [1, 2]
    assert len(calls) == 3


async def test_sync_sigil_retries_too() -> None:
    calls: list[int] = []

    def flaky(aether: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) < 2:
            raise ValueError("once")
        return {"n": len(calls)}

    result = await _single(flaky, SigilPolicy(retries=1, backoff=lambda a: 0)).ainvoke({})
    assert result == {"n": 2}


async def test_retries_exhausted_raise_with_cause_and_attempt_count() -> None:
    calls: list[int] = []

    def broken(aether: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        raise RuntimeError("always")

    with pytest.raises(SigilExecutionError, match="after 3 attempt") as info:
        await _single(broken, SigilPolicy(retries=2, backoff=lambda a: 0)).ainvoke({})
    assert len(calls) == 3
    assert isinstance(info.value.__cause__, RuntimeError)


async def test_retry_on_filters_failures() -> None:
    calls: list[int] = []

    def broken(aether: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        raise KeyError("not transient")

    policy = SigilPolicy(retries=5, backoff=lambda a: 0, retry_on=(ConnectionError,))
    with pytest.raises(SigilExecutionError):
        await _single(broken, policy).ainvoke({})
    assert len(calls) == 1


async def test_timeouts_are_retried_by_default() -> None:
    calls: list[int] = []

    async def slow_once(aether: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            await asyncio.sleep(5)
        return {"ok": True}

    policy = SigilPolicy(timeout=0.05, retries=1, backoff=lambda a: 0)
    omens, error = await _omens(_single(slow_once, policy), {})
    assert error is None
    (retried,) = [o for o in omens if isinstance(o, SigilRetried)]
    assert "SigilTimeoutError" in retried.cause


async def test_interrupt_is_never_retried_nor_diverted() -> None:
    calls: list[int] = []

    def ask(aether: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        interrupt("pause")

    ritual = Ritual().add_sigil("s", ask, SigilPolicy(retries=3, on_error="f"))
    ritual.add_sigil("f", noop).set_entry_point("s").add_edge("s", END).add_edge("f", END)
    with pytest.raises(Interrupt):
        await ritual.compile().ainvoke({})
    assert len(calls) == 1


def _on_error_ritual(log: list[str], policy: SigilPolicy | None, **kw: Any) -> Any:
    async def boom(aether: dict[str, Any]) -> dict[str, Any]:
        log.append("boom")
        raise ValueError("kaput")

    async def sibling(aether: dict[str, Any]) -> dict[str, Any]:
        log.append("sibling")
        return {"sibling": True}

    def rescue(aether: dict[str, Any]) -> dict[str, Any]:
        log.append("rescue")
        return {"rescued": len(aether["__errors__"])}

    ritual = Ritual().add_sigil("start", lambda a: {"started": True})
    ritual.add_sigil("sibling", sibling).add_sigil("boom", boom, policy)
    ritual.add_sigil("rescue", rescue)
    ritual.set_entry_point("start").add_edge("start", "sibling").add_edge("start", "boom")
    ritual.add_edge("sibling", END).add_edge("boom", END).add_edge("rescue", END)
    return ritual.compile(**kw)


async def test_on_error_jumps_discards_siblings_and_records_errors() -> None:
    log: list[str] = []
    codex = MemoryCodex()
    policy = SigilPolicy(retries=1, backoff=lambda a: 0, on_error="rescue")
    rite = _on_error_ritual(log, policy, codex=codex)
    result = await rite.ainvoke({}, invocation_id="e")
    assert "sibling" not in result  # sibling delta discarded
    assert result["rescued"] == 1
    assert result["__errors__"] == [
        {"sigil": "boom", "error": "kaput", "type": "ValueError", "superstep": 2, "attempts": 2}
    ]
    seals = await codex.list("e")
    assert [s.superstep for s in seals] == [1, 3]  # the failed superstep 2 left no Seal
    assert seals[-1].aether["__errors__"][0]["sigil"] == "boom"
    assert seals[-1].metadata["writers"]["__errors__"] == ["boom"]


async def test_on_error_appends_through_schema() -> None:
    ritual = Ritual(AetherSchema({"n": int}))
    ritual.add_sigil("a", lambda x: 1 / 0, SigilPolicy(on_error="b"))  # type: ignore[arg-type,return-value]
    ritual.add_sigil("b", lambda x: {"n": 1}).set_entry_point("a")
    ritual.add_edge("a", END).add_edge("b", END)
    result = await ritual.compile().ainvoke({"__errors__": [{"old": True}]})
    assert result["n"] == 1
    assert [e.get("type") for e in result["__errors__"]] == [None, "ZeroDivisionError"]


async def test_default_policy_applies_and_own_policy_wins() -> None:
    calls: dict[str, int] = {"a": 0, "b": 0}

    def failing(name: str) -> Any:
        def sigil(aether: dict[str, Any]) -> dict[str, Any]:
            calls[name] += 1
            raise OSError(name)

        return sigil

    ritual = Ritual().add_sigil("a", failing("a"))
    ritual.add_sigil("b", failing("b"), SigilPolicy(retries=0))
    ritual.set_entry_point("a").add_edge("a", "b").add_edge("b", END)
    default = SigilPolicy(retries=2, backoff=lambda a: 0, on_error="b")
    with pytest.raises(SigilExecutionError) as info:
        await ritual.compile(default_policy=default).ainvoke({})
    assert calls == {"a": 3, "b": 1}
    assert info.value.sigil == "b"


async def test_failure_cancels_siblings_and_applies_nothing() -> None:
    cancelled: list[str] = []

    async def patient(aether: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append("patient")
            raise
        return {}

    async def boom(aether: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        raise RuntimeError("boom")

    ritual = Ritual().add_sigil("patient", patient).add_sigil("boom", boom)
    ritual.set_entry_point("patient").set_entry_point("boom")
    ritual.add_edge("patient", END).add_edge("boom", END)
    with pytest.raises(SigilExecutionError) as info:
        await ritual.compile().ainvoke({"k": "v"}, invocation_id="i")
    assert cancelled == ["patient"]
    assert info.value.sigil == "boom"
    assert info.value.aether == {"k": "v"}
    assert info.value.invocation_id == "i"
    assert "'boom'" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


async def test_sync_failure_skips_later_siblings() -> None:
    ran: list[str] = []

    def boom(aether: dict[str, Any]) -> dict[str, Any]:
        ran.append("boom")
        raise RuntimeError("x")

    def later(aether: dict[str, Any]) -> dict[str, Any]:
        ran.append("later")
        return {}

    ritual = Ritual().add_sigil("boom", boom).add_sigil("later", later)
    ritual.set_entry_point("boom").set_entry_point("later")
    ritual.add_edge("boom", END).add_edge("later", END)
    with pytest.raises(SigilExecutionError):
        await ritual.compile().ainvoke({})
    assert ran == ["boom"]


async def test_sync_sigil_returning_an_awaitable_is_awaited() -> None:
    async def inner(aether: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    ritual = Ritual().add_sigil("s", lambda a: inner(a)).add_sigil("t", lambda a: {"t": 1})
    ritual.set_entry_point("s").set_entry_point("t").add_edge("s", END).add_edge("t", END)
    assert await ritual.compile().ainvoke({}) == {"ok": True, "t": 1}


class _Tag(Ward):
    def __init__(self, tag: str, log: list[str]) -> None:
        self.tag = tag
        self.log = log

    async def before_sigil(self, name: str, aether: Mapping[str, Any]) -> None:
        self.log.append(f"{self.tag}:before:{name}")

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        self.log.append(f"{self.tag}:after:{name}:{dict(delta)}")
        return {**delta, "trail": [*delta.get("trail", []), self.tag]}


async def test_ward_pipeline_runs_in_registration_order() -> None:
    log: list[str] = []
    rite = _single(lambda a: {"v": 1}, wards=[_Tag("one", log), _Tag("two", log)])
    result = await rite.ainvoke({})
    assert result == {"v": 1, "trail": ["one", "two"]}
    assert log == [
        "one:before:s",
        "two:before:s",
        "one:after:s:{'v': 1}",
        "two:after:s:{'v': 1, 'trail': ['one']}",
    ]


class _Veto(Ward):
    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        if "secret" in delta:
            raise WardRejection("no secrets")
        return delta


async def test_ward_rejection_emits_delta_rejected_and_fails() -> None:
    rite = _single(lambda a: {"secret": 1}, wards=[_Veto()])
    omens, error = await _omens(rite, {})
    assert isinstance(error, SigilExecutionError)
    assert isinstance(error.__cause__, WardRejection)
    (rejected,) = [o for o in omens if isinstance(o, DeltaRejected)]
    assert rejected.ward == "_Veto"
    assert rejected.reason == "no secrets"
    assert rejected.sigil == "s"


async def test_ward_rejection_triggers_on_error() -> None:
    ritual = Ritual().add_sigil("s", lambda a: {"secret": 1}, SigilPolicy(on_error="f"))
    ritual.add_sigil("f", lambda a: {"fallback": True})
    ritual.set_entry_point("s").add_edge("s", END).add_edge("f", END)
    result = await ritual.compile(wards=[_Veto()]).ainvoke({})
    assert "secret" not in result
    assert result["fallback"] is True
    assert result["__errors__"][0]["type"] == "WardRejection"


async def test_ward_returning_non_mapping_is_type_error() -> None:
    class Bad(Ward):
        async def after_sigil(self, name: str, aether: Any, delta: Any) -> Any:
            return None

    with pytest.raises(TypeError, match="ward Bad"):
        await _single(lambda a: {"v": 1}, wards=[Bad()]).ainvoke({})


@pytest.mark.parametrize("is_async", [False, True])
async def test_sys_exit_in_a_sigil_is_that_sigils_failure(is_async: bool) -> None:
    import sys

    from sanctum import END, START, Ritual, SigilExecutionError

    def leave(aether: dict[str, Any]) -> dict[str, Any]:
        sys.exit(3)

    async def leave_async(aether: dict[str, Any]) -> dict[str, Any]:
        sys.exit(3)

    ritual = Ritual().add_sigil("leave", leave_async if is_async else leave)
    ritual.add_sigil("other", lambda a: {"x": 1})
    ritual.add_edge(START, "leave").add_edge(START, "other")
    ritual.add_edge("leave", END).add_edge("other", END)
    with pytest.raises(SigilExecutionError) as caught:
        await ritual.compile().ainvoke({})
    assert caught.value.sigil == "leave"
    assert isinstance(caught.value.__cause__, SystemExit)


class _Seen(Ward):
    """Records the kind and Sigil of every Omen (awaited hook)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_omen(self, omen: Omen) -> None:
        self.seen.append(f"{type(omen).__name__}:{getattr(omen, 'sigil', '')}")


class _SeenNow(Ward):
    """The same, through ``observe`` (the engine calls it without awaiting)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def observe(self, omen: Omen) -> None:
        self.seen.append(f"{type(omen).__name__}:{getattr(omen, 'sigil', '')}")

    def superstep_hook(self) -> None:
        return None


def _pair() -> Ritual:
    ritual = Ritual().add_sigil("a", lambda s: {"x": 1}).add_sigil("b", lambda s: {"y": 2})
    ritual.add_sigil("start", noop).set_entry_point("start")
    ritual.add_edge("start", "a").add_edge("start", "b")
    return ritual.add_edge("a", END).add_edge("b", END)


@pytest.mark.parametrize("ward_class", [_Seen, _SeenNow])
async def test_observed_sync_sigils_announce_each_in_bind_order(
    ward_class: type[_Seen | _SeenNow],
) -> None:
    ward = ward_class()
    result = await _pair().compile(wards=[ward]).ainvoke({})
    assert result == {"x": 1, "y": 2}
    assert ward.seen == [
        "RiteBegan:",
        "SuperstepBegan:",
        "SigilBegan:start",
        "SigilCompleted:start",
        "SuperstepCompleted:",
        "SuperstepBegan:",
        "SigilBegan:a",
        "SigilCompleted:a",
        "SigilBegan:b",
        "SigilCompleted:b",
        "SuperstepCompleted:",
        "RiteManifested:",
    ]


@pytest.mark.parametrize("ward_class", [_Seen, _SeenNow])
async def test_observed_sync_failure_stops_the_frontier(ward_class: type[_Seen | _SeenNow]) -> None:
    def broken(aether: Mapping[str, Any]) -> dict[str, Any]:
        raise ValueError("nope")

    ritual = Ritual().add_sigil("a", broken).add_sigil("b", noop).add_sigil("start", noop)
    ritual.set_entry_point("start").add_edge("start", "a").add_edge("start", "b")
    ritual.add_edge("a", END).add_edge("b", END)
    ward = ward_class()
    with pytest.raises(SigilExecutionError, match="nope"):
        await ritual.compile(wards=[ward]).ainvoke({})
    assert "SigilBegan:a" in ward.seen
    assert "SigilCompleted:a" not in ward.seen
    if ward_class is _SeenNow:  # called inline: the later sibling never starts
        assert ward.seen[-2:] == ["SuperstepBegan:", "SigilBegan:a"]


async def test_observed_sync_sigil_writes_tokens_and_may_return_an_awaitable() -> None:
    async def later() -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"late": True}

    def speaks(aether: Mapping[str, Any], writer: Any) -> Any:
        writer("hello")
        return later()

    ritual = Ritual().add_sigil("speak", speaks).set_entry_point("speak").add_edge("speak", END)
    ward = _SeenNow()
    seen, error = await _omens(ritual.compile(wards=[ward]), {}, mode=["omens", "tokens"])
    assert error is None
    kinds = [type(o).__name__ for o in seen]
    assert kinds.index("SigilBegan") < kinds.index("TokenEmitted") < kinds.index("SigilCompleted")
    assert "TokenEmitted:speak" in ward.seen
    completed = [o for o in seen if type(o).__name__ == "SigilCompleted"]
    assert completed[0].delta == {"late": True}  # type: ignore[attr-defined]
