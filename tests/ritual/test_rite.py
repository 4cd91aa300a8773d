"""Rite: invoke/ainvoke, attributes, with_options, astream and Omen delivery."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import warnings
from collections.abc import Mapping
from typing import Any

import pytest

from sanctum import END, START, Interrupt, Ritual, SigilExecutionError, Ward
from sanctum.codex.memory import MemoryCodex
from sanctum.omens import (
    Omen,
    RiteBegan,
    RiteManifested,
    SealWritten,
    SigilBegan,
    SigilCompleted,
    SuperstepBegan,
    SuperstepCompleted,
    TokenEmitted,
)
from sanctum.ritual import NULL_WRITER
from tests.ritual.helpers import counter_cycle, noop


def _pair() -> Any:
    async def slow(aether: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return {"slow": 1}

    async def quick(aether: dict[str, Any]) -> dict[str, Any]:
        return {"quick": 1}

    ritual = Ritual().add_sigil("slow", slow).add_sigil("quick", quick)
    ritual.set_entry_point("slow").set_entry_point("quick")
    return ritual.add_edge("slow", END).add_edge("quick", END).compile()


def test_invoke_runs_synchronously() -> None:
    assert counter_cycle(3).invoke({"i": 0}) == {"i": 3}


async def test_invoke_inside_running_loop_says_use_ainvoke() -> None:
    with pytest.raises(RuntimeError, match=r"await rite\.ainvoke"):
        counter_cycle(3).invoke({"i": 0})


async def test_invocation_id_is_generated_uuid_hex() -> None:
    codex = MemoryCodex()
    await counter_cycle(1, codex=codex).ainvoke({"i": 0})
    (summary,) = await codex.invocations()
    assert len(summary.invocation_id) == 32
    int(summary.invocation_id, 16)


def test_read_only_attributes_and_manifest() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).add_sigil("j", noop, join="all")
    ritual.set_entry_point("a").set_entry_point("b").add_edge("a", "j").add_edge("b", "j")
    ritual.add_conditional_edge("j", lambda x: END)
    ritual.add_sigil("c", noop).add_conditional_edge("c", lambda x: "y", {"y": END, "n": "c"})
    ritual.add_edge("a", "c")
    rite = ritual.compile(recursion_limit=7)
    manifest = rite.manifest
    assert manifest == {
        "sigils": ["a", "b", "j", "c"],
        "edges": {START: ["a", "b"], "a": ["j", "c"], "b": ["j"]},
        "conditional_edges": {"j": ["*"], "c": [END, "c"]},
        "joins": ["j"],
        "entry": ["a", "b"],
    }
    manifest["sigils"].append("tamper")
    assert rite.manifest["sigils"] == ["a", "b", "j", "c"]
    assert rite.recursion_limit == 7
    assert rite.codex is None
    assert rite.wards == ()
    assert rite.schema is None
    with pytest.raises(AttributeError):
        rite.recursion_limit = 3  # type: ignore[misc]


class _Listener(Ward):
    def __init__(self) -> None:
        self.manifests: list[Mapping[str, Any]] = []
        self.omens: list[Omen] = []

    def on_compile(self, manifest: Mapping[str, Any]) -> None:
        self.manifests.append(manifest)

    async def on_omen(self, omen: Omen) -> None:
        self.omens.append(omen)


async def test_with_options_returns_new_rite_and_announces_new_wards() -> None:
    first = _Listener()
    rite = counter_cycle(5, wards=[first])
    assert len(first.manifests) == 1
    assert first.manifests[0]["sigils"] == ["tick"]
    codex = MemoryCodex()
    second = _Listener()
    other = rite.with_options(codex=codex, wards=[second], recursion_limit=3)
    assert other is not rite
    assert (other.codex, other.wards, other.recursion_limit) == (codex, (second,), 3)
    assert (rite.codex, rite.wards, rite.recursion_limit) == (None, (first,), 10)
    assert len(second.manifests) == 1
    assert len(first.manifests) == 1
    kept = rite.with_options(codex=codex)
    assert kept.wards == (first,)
    assert len(first.manifests) == 1  # unchanged wards are not re-announced
    with pytest.raises(ValueError, match="recursion_limit"):
        rite.with_options(recursion_limit=0)


async def test_ward_sees_every_omen_in_order() -> None:
    listener = _Listener()
    codex = MemoryCodex()
    await counter_cycle(2, wards=[listener], codex=codex).ainvoke({"i": 0}, invocation_id="w")
    kinds = [type(o).__name__ for o in listener.omens]
    assert kinds == [
        "RiteBegan",
        "SuperstepBegan",
        "SigilBegan",
        "SigilCompleted",
        "SuperstepCompleted",
        "SealWritten",
        "SuperstepBegan",
        "SigilBegan",
        "SigilCompleted",
        "SuperstepCompleted",
        "SealWritten",
        "RiteManifested",
    ]
    final = listener.omens[-1]
    assert isinstance(final, RiteManifested)
    assert final.aether == {"i": 2}
    assert final.superstep == 2
    assert all(getattr(o, "invocation_id", "w") == "w" for o in listener.omens)


async def test_no_writer_is_built_when_nobody_listens() -> None:
    writers: list[Any] = []

    def sigil(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writers.append(writer)
        writer("dropped")
        return {}

    rite = Ritual().add_sigil("s", sigil).set_entry_point("s").add_edge("s", END).compile()
    await rite.ainvoke({})
    async for _ in rite.astream({}, mode="tokens"):
        pass
    assert writers[0] is NULL_WRITER
    assert writers[1] is not NULL_WRITER


async def test_astream_updates_in_completion_order() -> None:
    seen = [o async for o in _pair().astream({})]
    assert all(isinstance(o, SigilCompleted) for o in seen)
    assert [o.sigil for o in seen] == ["quick", "slow"]  # type: ignore[attr-defined]
    assert seen[1].delta == {"slow": 1}  # type: ignore[attr-defined]


async def test_astream_values_and_union_of_modes() -> None:
    values = [o async for o in counter_cycle(2).astream({"i": 0}, mode="values")]
    assert [o.aether for o in values] == [{"i": 1}, {"i": 2}]  # type: ignore[attr-defined]
    assert all(isinstance(o, SuperstepCompleted) for o in values)
    both = [o async for o in counter_cycle(2).astream({"i": 0}, mode={"values", "updates"})]
    assert [type(o) for o in both] == [SigilCompleted, SuperstepCompleted] * 2


async def test_astream_omens_mode_lifecycle() -> None:
    codex = MemoryCodex()
    kinds = [
        type(o)
        async for o in counter_cycle(1, codex=codex).astream(
            {"i": 0}, invocation_id="o", mode="omens"
        )
    ]
    assert kinds == [
        RiteBegan,
        SuperstepBegan,
        SigilBegan,
        SigilCompleted,
        SealWritten,
        RiteManifested,
    ]


async def test_astream_unknown_mode_raises_value_error_immediately() -> None:
    with pytest.raises(ValueError, match="unknown stream mode"):
        counter_cycle(1).astream({"i": 0}, mode="everything")
    with pytest.raises(ValueError, match="no stream mode"):
        counter_cycle(1).astream({"i": 0}, mode=[])


async def test_tokens_arrive_while_the_sigil_still_runs() -> None:
    release = asyncio.Event()

    async def talker(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer("hello")
        writer("world")
        await release.wait()
        return {"said": True}

    ritual = Ritual().add_sigil("talk", talker).set_entry_point("talk").add_edge("talk", END)
    rite = ritual.compile()
    stream = rite.astream({}, invocation_id="tok", mode={"tokens", "updates"})
    first = await stream.__anext__()
    second = await stream.__anext__()
    assert not release.is_set()  # the sigil is still waiting
    assert isinstance(first, TokenEmitted)
    assert (first.payload, second.payload) == ("hello", "world")  # type: ignore[attr-defined]
    assert (first.sigil, first.superstep, first.invocation_id) == ("talk", 1, "tok")
    release.set()
    rest = [o async for o in stream]
    assert [type(o) for o in rest] == [SigilCompleted]


async def test_tokens_pass_through_ward_on_omen() -> None:
    listener = _Listener()

    async def talker(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer("t1")
        await asyncio.sleep(0)
        writer("t2")
        return {}

    ritual = Ritual().add_sigil("talk", talker).set_entry_point("talk").add_edge("talk", END)
    await ritual.compile(wards=[listener]).ainvoke({})
    kinds = [type(o).__name__ for o in listener.omens]
    assert kinds.index("TokenEmitted") < kinds.index("SigilCompleted")
    assert [o.payload for o in listener.omens if isinstance(o, TokenEmitted)] == ["t1", "t2"]


async def test_astream_exception_after_draining_emitted_omens() -> None:
    def boom(aether: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("late failure")

    ritual = Ritual().add_sigil("ok", lambda a: {"ok": 1}).add_sigil("boom", boom)
    ritual.set_entry_point("ok").add_edge("ok", "boom").add_edge("boom", END)
    seen: list[Omen] = []

    async def consume() -> None:
        async for omen in ritual.compile().astream({}):
            seen.append(omen)

    with pytest.raises(SigilExecutionError, match="late failure"):
        await consume()
    assert [o.sigil for o in seen] == ["ok"]  # type: ignore[attr-defined]


async def test_astream_propagates_interrupt() -> None:
    from sanctum import interrupt

    ritual = Ritual().add_sigil("ask", lambda a: interrupt("why?"))
    ritual.set_entry_point("ask").add_edge("ask", END)
    with pytest.raises(Interrupt, match="why"):
        await anext(aiter(ritual.compile().astream({})))


async def test_closing_astream_early_cancels_the_invocation() -> None:
    cancelled = asyncio.Event()

    async def forever(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer("started")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    ritual = Ritual().add_sigil("f", forever).set_entry_point("f").add_edge("f", END)
    before = set(asyncio.all_tasks())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        async with contextlib.aclosing(ritual.compile().astream({}, mode="tokens")) as stream:  # type: ignore[type-var]
            async for omen in stream:
                assert omen.payload == "started"  # type: ignore[attr-defined]
                break
        gc.collect()
    assert cancelled.is_set()
    assert set(asyncio.all_tasks()) == before


async def test_closing_a_sync_cycle_stream_stops_it() -> None:
    rite = counter_cycle(100_000)
    stream = rite.astream({"i": 0}, mode="values")
    async for _omen in stream:
        break
    await stream.aclose()  # type: ignore[attr-defined]
    assert len(asyncio.all_tasks()) == 1


async def test_astream_resumes_like_ainvoke() -> None:
    from sanctum import interrupt

    codex = MemoryCodex()

    def ask(aether: dict[str, Any]) -> dict[str, Any]:
        if "answer" not in aether:
            interrupt("?")
        return {"got": aether["answer"]}

    ritual = Ritual().add_sigil("ask", ask).set_entry_point("ask").add_edge("ask", END)
    rite = ritual.compile(codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({}, invocation_id="r")
    seen = [o async for o in rite.astream(invocation_id="r", updates={"answer": 1}, mode="omens")]
    began = seen[0]
    assert isinstance(began, RiteBegan)
    assert began.resumed_from is not None
    assert seen[-1].aether == {"answer": 1, "got": 1}  # type: ignore[attr-defined]
