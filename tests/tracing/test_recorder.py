"""TraceRecorder fed with Omens directly: what it captures, writes and never touches."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sanctum.errors import Interrupt, SigilExecutionError
from sanctum.omens import (
    DeltaRejected,
    Omen,
    RiteBegan,
    RiteManifested,
    SigilBegan,
    SigilCompleted,
    SuperstepBegan,
)
from sanctum.tracing import TraceRecorder
from sanctum.tracing.render import load_trace
from sanctum.wards import RedactWard, Ward
from tests.tracing.scenes import INV, MANIFEST, T0, echoed, interrupted_run, sample_run


async def _feed(recorder: TraceRecorder, omens: list[Omen]) -> None:
    for omen in omens:
        await recorder.on_omen(omen)


def _read(path: Path) -> dict[str, Any]:
    """The trace file as every reader sees it (expanded from the stored columns)."""
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == 2
    return load_trace(path)


async def test_writes_the_trace_when_the_rite_manifests(tmp_path: Path) -> None:
    path = tmp_path / "run.sanctum-trace.json"
    recorder = TraceRecorder(path)
    recorder.on_compile(MANIFEST)
    omens = sample_run()
    await _feed(recorder, omens[:-1])
    assert not path.exists()
    await recorder.on_omen(omens[-1])
    assert recorder.written == path
    trace = _read(path)
    assert trace["format"] == "sanctum-trace"
    assert trace["version"] == 2
    assert trace["status"] == "completed"
    assert trace["invocation_id"] == INV
    assert trace["graph"] == MANIFEST
    assert trace["final_aether"] == {"done": True, "page": "<p>fetched</p>"}
    assert trace["duration"] == pytest.approx(3.2)
    assert trace == recorder.build()


async def test_timeline_has_per_sigil_durations_and_attempts(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    await _feed(recorder, sample_run())
    steps = recorder.build()["supersteps"]
    assert [s["superstep"] for s in steps] == [1, 2, 3]
    assert steps[0]["frontier"] == ["plan", "fetch"]
    assert steps[0]["duration"] == pytest.approx(0.5)
    first = {e["sigil"]: e for e in steps[0]["sigils"]}
    assert list(first) == ["plan", "fetch"]
    assert first["plan"]["duration"] == pytest.approx(0.2)
    assert first["fetch"]["duration"] == pytest.approx(0.5)
    assert first["fetch"]["attempts"] == 2
    assert first["plan"]["attempts"] == 1
    assert first["plan"]["status"] == "completed"
    assert first["plan"]["delta_keys"] == ["messages"]


async def test_durations_fall_back_to_began_and_completed_timestamps(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    await _feed(
        recorder,
        [
            SigilBegan(invocation_id=INV, superstep=1, sigil="a", timestamp=T0),
            SigilCompleted(invocation_id=INV, superstep=1, sigil="a", delta={}, timestamp=T0 + 2),
        ],
    )
    (entry,) = recorder.build()["supersteps"][0]["sigils"]
    assert entry["duration"] == pytest.approx(2.0)


async def test_records_deltas_spell_calls_retries_repairs_rejections_seals_tokens(
    tmp_path: Path,
) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    await _feed(recorder, sample_run())
    trace = recorder.build()
    assert [(d["superstep"], d["sigil"]) for d in trace["deltas"]] == [
        (1, "plan"),
        (1, "fetch"),
        (2, "act"),
        (3, "gate"),
    ]
    assert trace["deltas"][1]["delta"] == {"page": "<p>fetched</p>"}
    (call,) = trace["spell_calls"]
    assert call["spell"] == "add"
    assert call["arguments"] == {"a": 1, "b": 2}
    assert call["status"] == "ok"
    assert call["result"] == "3"
    assert (call["sigil"], call["result_sigil"], call["result_superstep"]) == ("plan", "act", 2)
    (retry,) = trace["retries"]
    assert retry["sigil"] == "fetch"
    assert retry["attempt"] == 1
    assert retry["delay"] == 0.25
    (repair,) = trace["repairs"]
    assert repair["detail"] == "closed a missing brace"
    assert repair["raw"] == '{"a": 1, "b": 2'
    (rejection,) = trace["rejections"]
    assert rejection["kind"] == "spell"
    assert rejection["spell"] == "divide"
    assert [s["seal_id"] for s in trace["seals"]] == ["seal-1", "seal-2", "seal-3"]
    assert [t["payload"] for t in trace["tokens"]] == ["thin", "king"]
    assert trace["omen_counts"]["SigilCompleted"] == 4


async def test_a_delta_rejected_marks_the_sigil(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    await _feed(
        recorder,
        [
            SuperstepBegan(invocation_id=INV, superstep=1, frontier=("a",), timestamp=T0),
            SigilBegan(invocation_id=INV, superstep=1, sigil="a", timestamp=T0),
            DeltaRejected(
                invocation_id=INV, superstep=1, sigil="a", ward="Veto", reason="no", timestamp=T0
            ),
        ],
    )
    trace = recorder.build()
    assert trace["supersteps"][0]["sigils"][0]["status"] == "rejected"
    assert trace["rejections"] == [
        {
            "kind": "delta",
            "superstep": 1,
            "sigil": "a",
            "ward": "Veto",
            "reason": "no",
            "timestamp": T0,
        }
    ]


async def test_the_snapshot_is_taken_when_the_omen_arrives(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    items = ["first"]
    await recorder.on_omen(
        SigilCompleted(invocation_id=INV, superstep=1, sigil="a", delta={"items": items})
    )
    items.append("mutated later")
    assert recorder.build()["deltas"][0]["delta"] == {"items": ["first"]}


async def test_never_touches_deltas(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    delta = {"x": [1, 2]}
    assert await recorder.after_sigil("a", {}, delta) is delta
    assert delta == {"x": [1, 2]}
    assert isinstance(recorder, Ward)


async def test_flush_after_an_interrupt(tmp_path: Path) -> None:
    path = tmp_path / "paused.json"
    recorder = TraceRecorder(path)
    await _feed(recorder, interrupted_run())
    assert not path.exists()
    pause = Interrupt("Send it?", sigil="approve", invocation_id=INV)
    assert recorder.flush(pause) == path
    trace = _read(path)
    assert trace["status"] == "interrupted"
    assert trace["interrupt"]["sigil"] == "approve"
    assert trace["interrupt"]["reason"] == "Send it?"
    assert trace["interrupt"]["seal_id"] == "seal-pause"
    assert trace["final_aether"] is None
    last = trace["supersteps"][-1]["sigils"]
    assert [(e["sigil"], e["status"]) for e in last] == [("approve", "interrupted")]


async def test_an_interrupt_seal_alone_marks_the_trace_interrupted(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    await _feed(recorder, interrupted_run())
    trace = recorder.build()
    assert trace["status"] == "interrupted"
    assert trace["interrupt"]["seal_id"] == "seal-pause"


async def test_flush_after_a_failure_names_the_sigil(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "failed.json")
    await _feed(recorder, interrupted_run()[:-1])
    error = SigilExecutionError("sigil 'approve' failed: boom", sigil="approve", aether={})
    trace = _read(recorder.flush(error))
    assert trace["status"] == "failed"
    assert trace["failure"] == {
        "type": "SigilExecutionError",
        "message": "sigil 'approve' failed: boom",
        "sigil": "approve",
        "traceback": None,  # raised here, not by a sigil's own code
    }
    assert trace["supersteps"][-1]["sigils"][0]["status"] == "failed"


async def test_flush_without_error_on_an_unfinished_run_is_incomplete(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    await _feed(recorder, interrupted_run()[:-1])
    trace = _read(recorder.flush())
    assert trace["status"] == "incomplete"
    assert trace["supersteps"][-1]["sigils"][0]["status"] == "running"


async def test_circle_echoes_become_nested_traces(tmp_path: Path) -> None:
    inner_id = "inner-1"
    inner = [
        RiteBegan(invocation_id=inner_id, timestamp=T0),
        SuperstepBegan(invocation_id=inner_id, superstep=1, frontier=("look",), timestamp=T0),
        SigilBegan(invocation_id=inner_id, superstep=1, sigil="look", timestamp=T0),
        SigilCompleted(
            invocation_id=inner_id,
            superstep=1,
            sigil="look",
            delta={"seen": 1},
            timestamp=T0 + 1,
        ),
        RiteManifested(invocation_id=inner_id, superstep=1, aether={"seen": 1}, timestamp=T0 + 1),
    ]
    deeper = echoed("core", "look", 1, [SigilBegan(invocation_id="x", superstep=1, sigil="z")])
    path = tmp_path / "t.json"
    recorder = TraceRecorder(path)
    await _feed(recorder, [RiteBegan(invocation_id=INV, timestamp=T0)])
    await _feed(recorder, echoed("research", "investigate", 2, [*inner[:-1], *deeper, inner[-1]]))
    assert not path.exists()  # an inner manifestation does not end the outer trace
    trace = recorder.build()
    (circle,) = trace["circles"]
    assert (circle["circle"], circle["sigil"], circle["superstep"]) == (
        "research",
        "investigate",
        2,
    )
    nested = circle["trace"]
    assert nested["status"] == "completed"
    assert nested["invocation_id"] == inner_id
    assert nested["deltas"][0]["delta"] == {"seen": 1}
    assert nested["circles"][0]["circle"] == "core"
    assert trace["omen_counts"]["CircleEchoed"] == len(inner) + 1


async def test_unknown_omens_are_kept_field_by_field(tmp_path: Path) -> None:
    @dataclass(frozen=True, kw_only=True)
    class Portent(Omen):
        sign: Any

    recorder = TraceRecorder(tmp_path / "t.json")
    await recorder.on_omen(Portent(sign={"odd": object.__name__}, timestamp=T0))
    assert recorder.build()["other_omens"] == [
        {"type": "Portent", "timestamp": T0, "sign": {"odd": "object"}}
    ]


async def test_redact_applies_to_the_whole_document(tmp_path: Path) -> None:
    key = "sk-" + "q" * 24
    recorder = TraceRecorder(tmp_path / "t.json", redact=RedactWard([r"sk-\w{20,}"]).redact)
    await _feed(
        recorder,
        [
            RiteBegan(invocation_id=INV, timestamp=T0),
            SigilCompleted(invocation_id=INV, superstep=1, sigil="a", delta={"k": key}),
            RiteManifested(invocation_id=INV, superstep=1, aether={"input": key}),
        ],
    )
    assert recorder.written is not None
    text = recorder.written.read_text(encoding="utf-8")
    assert key not in text
    assert "[REDACTED]" in text


async def test_redact_never_touches_the_packed_timeline_columns(tmp_path: Path) -> None:
    # small int64 values in hexadecimal are full of "0000": the numbers must survive a
    # pattern that would match inside them
    recorder = TraceRecorder(tmp_path / "t.json", redact=RedactWard([r"0000"]).redact)
    await _feed(recorder, sample_run())
    assert recorder.written is not None
    trace = _read(recorder.written)
    sigils = [e["sigil"] for step in trace["supersteps"] for e in step["sigils"]]
    assert sigils  # the rows decoded: the columns kept their length
    assert all(
        e["started_at"] and e["started_at"] > T0 - 1
        for s in trace["supersteps"]
        for e in s["sigils"]
    )
    assert "0000" in recorder.written.read_text(encoding="utf-8")


async def test_redact_keeps_the_timeline_structure(tmp_path: Path) -> None:
    from sanctum import END, START, Ritual, SigilPolicy

    tries: list[int] = []

    def flaky(aether: dict[str, object]) -> dict[str, object]:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("once")
        return {"card": "4111 1111 1111 1111", "note": "ok"}

    ritual = Ritual().add_sigil("flaky", flaky, SigilPolicy(retries=1, backoff=lambda a: 0))
    ritual.add_sigil("worker1", lambda a: {}).add_sigil("worker2", lambda a: {})
    ritual.add_edge(START, "flaky").add_edge("flaky", "worker1").add_edge("flaky", "worker2")
    ritual.add_edge("worker1", END).add_edge("worker2", END)
    # patterns that match row numbers, Sigil names, keys and the format mark
    ward = RedactWard([r"\d", r"[a-z]{4,}"])
    path = tmp_path / "t.json"
    await ritual.compile(wards=[TraceRecorder(path, redact=ward.redact)]).ainvoke({})
    trace = _read(path)
    first, second = trace["supersteps"]
    assert [(e["sigil"], e["status"], e["attempts"]) for e in first["sigils"]] == [
        ("flaky", "completed", 2)
    ]
    assert second["frontier"] == ["worker1", "worker2"]  # names are identifiers: kept
    assert "4111 1111" not in path.read_text(encoding="utf-8")  # digits alone may be a time
    assert "4111" not in json.dumps(trace["deltas"])
    assert trace["format"] == "sanctum-trace"


async def test_a_subclass_overriding_record_sees_every_omen(tmp_path: Path) -> None:
    from sanctum import END, START, Ritual

    class Counting(TraceRecorder):
        def __init__(self, path: Path) -> None:
            super().__init__(path)
            self.kinds: list[str] = []

        def record(self, omen: Any) -> None:
            self.kinds.append(type(omen).__name__)
            super().record(omen)

    ritual = Ritual().add_sigil("a", lambda a: {"x": 1}).add_edge(START, "a").add_edge("a", END)
    recorder = Counting(tmp_path / "t.json")
    await ritual.compile(wards=[recorder]).ainvoke({})
    assert "SigilCompleted" in recorder.kinds
    assert recorder.build()["omen_counts"]["SigilCompleted"] == 1


def test_build_is_what_load_trace_reads_back(tmp_path: Path) -> None:
    from sanctum import END, START, Ritual

    odd = {1: "int key", "1": "str key", "nan": float("nan"), "big": 10**5000}
    ritual = Ritual().add_sigil("a", lambda a: dict(odd)).add_edge(START, "a").add_edge("a", END)
    recorder = TraceRecorder(tmp_path / "t.json")
    ritual.compile(wards=[recorder]).invoke({})
    built = recorder.build()
    assert built == load_trace(tmp_path / "t.json")
    json.dumps(built, allow_nan=False)  # JSON data through and through

    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), keys  # {1: .., "1": ..} is not two "1" keys
        return dict(pairs)

    json.loads((tmp_path / "t.json").read_text(encoding="utf-8"), object_pairs_hook=no_repeats)


def test_the_frontier_keeps_sigils_that_never_began(tmp_path: Path) -> None:
    from sanctum import END, START, Ritual, interrupt

    def ask(aether: dict[str, object]) -> dict[str, object]:
        interrupt("why?")
        return {}

    ritual = Ritual().add_sigil("x", lambda a: {"x": 1}).add_sigil("ask", ask)
    ritual.add_sigil("y", lambda a: {"y": 1})
    for name in ("x", "ask", "y"):
        ritual.add_edge(START, name).add_edge(name, END)
    recorder = TraceRecorder(tmp_path / "t.json")
    with pytest.raises(Interrupt) as paused:
        ritual.compile(wards=[recorder]).invoke({})
    recorder.flush(paused.value)
    (step,) = _read(tmp_path / "t.json")["supersteps"]
    assert step["frontier"] == ["x", "ask", "y"]
    assert [(e["sigil"], e["status"]) for e in step["sigils"]] == [
        ("x", "completed"),
        ("ask", "interrupted"),
    ]


def test_the_written_text_is_the_document_as_json(tmp_path: Path) -> None:
    from sanctum.tracing.recorder import _encode

    recorder = TraceRecorder(tmp_path / "t.json")
    for omen in sample_run():
        recorder.record(omen)
    document = recorder._document()

    def text() -> Any:
        return json.loads("".join(_encode(document)))

    assert text() == json.loads(json.dumps(document))
    only_columns = {
        key: document["timeline"][key] for key in ("superstep", "sigil", "began", "ended")
    }
    document["timeline"] = dict(only_columns)
    assert text() == json.loads(json.dumps(document))
    document["timeline"]["began"] = 'not "plain" \\ text'
    assert text() == json.loads(json.dumps(document))
    document["timeline"] = {**only_columns, "delta": [{"nan": float("nan")}]}
    assert text()["timeline"]["delta"][-1] == {"nan": "nan"}


async def test_a_folder_path_gets_one_file_per_invocation(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path)
    await _feed(recorder, sample_run())
    assert recorder.written == tmp_path / f"{INV}.sanctum-trace.json"
    assert _read(recorder.written)["invocation_id"] == INV


async def test_a_redacted_invocation_id_is_not_a_file_name_either(tmp_path: Path) -> None:
    written = []
    for invocation in ("secret-1", "secret-2"):
        recorder = TraceRecorder(tmp_path, redact=RedactWard([r"secret-\d"]).redact)
        await _feed(
            recorder,
            [
                RiteBegan(invocation_id=invocation, timestamp=T0),
                RiteManifested(invocation_id=invocation, superstep=0, aether={}),
            ],
        )
        assert recorder.written is not None
        assert "secret" not in recorder.written.name
        assert recorder.written.name.startswith("redacted-")
        assert _read(recorder.written)["invocation_id"] == "[REDACTED]"
        written.append(recorder.written)
    assert written[0] != written[1]  # two Invocations, two files


async def test_a_new_invocation_after_manifesting_starts_afresh(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "t.json")
    await _feed(recorder, sample_run())
    await _feed(
        recorder,
        [
            RiteBegan(invocation_id="inv-2", timestamp=T0 + 10),
            SigilCompleted(invocation_id="inv-2", superstep=1, sigil="solo", delta={"n": 1}),
        ],
    )
    trace = recorder.build()
    assert trace["invocation_id"] == "inv-2"
    assert trace["status"] == "incomplete"
    assert [d["sigil"] for d in trace["deltas"]] == ["solo"]
    assert trace["omen_counts"] == {"RiteBegan": 1, "SigilCompleted": 1}


async def test_a_write_failure_at_manifest_warns_instead_of_failing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    recorder = TraceRecorder(blocker / "sub" / "t.json")
    with pytest.warns(
        RuntimeWarning, match=r"cannot write .*t\.json: .*file is a file, not a folder"
    ):
        await _feed(recorder, sample_run())
    with pytest.raises(OSError, match="cannot write"):
        recorder.flush()


def test_default_path_is_the_documented_name() -> None:
    assert TraceRecorder().path == Path(".sanctum-trace.json")


# ----------------------------------------------------------------- through a real Rite
def _counter_ritual() -> Any:
    from sanctum import END, START, Ritual

    ritual = Ritual()
    ritual.add_sigil("tick", lambda aether: {"n": aether.get("n", 0) + 1})
    ritual.add_edge(START, "tick")
    ritual.add_conditional_edge("tick", lambda aether: "tick" if aether["n"] < 5 else END)
    return ritual


async def test_a_real_cycle_is_traced_and_results_are_identical(tmp_path: Path) -> None:
    path = tmp_path / "cycle.sanctum-trace.json"
    recorder = TraceRecorder(path)
    ritual = _counter_ritual()
    traced = ritual.compile(wards=[recorder])
    assert await traced.ainvoke({"n": 0}) == await ritual.compile().ainvoke({"n": 0})
    trace = _read(path)
    assert trace["status"] == "completed"
    assert trace["graph"] == jsonable_manifest(traced.manifest)
    assert [s["superstep"] for s in trace["supersteps"]] == [1, 2, 3, 4, 5]
    assert [d["delta"] for d in trace["deltas"]] == [{"n": i} for i in range(1, 6)]
    assert all(e["duration"] >= 0 for s in trace["supersteps"] for e in s["sigils"])
    assert trace["final_aether"] == {"n": 5}


def jsonable_manifest(manifest: Any) -> Any:
    return json.loads(json.dumps(manifest))


async def test_a_real_interrupt_then_resume_with_the_same_recorder(tmp_path: Path) -> None:
    from tests.tracing.realrun import INVOCATION, run_until_interrupt

    path = tmp_path / "run.sanctum-trace.json"
    rite, _recorder, pause = await run_until_interrupt(path)
    paused = _read(path)
    assert paused["status"] == "interrupted"
    assert paused["interrupt"]["sigil"] == "gate"
    assert paused["interrupt"]["seal_id"] == pause.seal_id
    assert [r["sigil"] for r in paused["retries"]] == ["fetch"]
    assert [r["sigil"] for r in paused["repairs"]] == ["act"]
    assert paused["circles"][0]["circle"] == "agent"
    assert paused["circles"][0]["trace"]["repairs"][0]["spell"] == "add"
    assert {c["spell"] for c in paused["spell_calls"]} == {"add"}
    assert len(paused["supersteps"][0]["sigils"]) == 4  # the fan-out

    final = await rite.ainvoke(invocation_id=INVOCATION, updates={"approved": True})
    assert final["done"] is True
    done = _read(path)
    assert done["status"] == "completed"
    assert done["interrupt"]["sigil"] == "gate"  # the pause stays in the story
    gate_runs = [
        e["status"] for s in done["supersteps"] for e in s["sigils"] if e["sigil"] == "gate"
    ]
    assert gate_runs == ["interrupted", "completed"]
    assert done["final_aether"]["done"] is True


async def test_a_real_veto_is_recorded_as_a_rejection(tmp_path: Path) -> None:
    from collections.abc import Mapping

    from sanctum import END, START, Ritual, SigilPolicy
    from sanctum.wards import WardRejection

    class NoSecrets(Ward):
        async def after_sigil(
            self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
        ) -> Mapping[str, Any]:
            if "secret" in delta:
                raise WardRejection("secrets stay home")
            return delta

    ritual = Ritual()
    ritual.add_sigil("leak", lambda aether: {"secret": 1}, SigilPolicy(on_error="calm"))
    ritual.add_sigil("calm", lambda aether: {"ok": True})
    ritual.add_edge(START, "leak").add_edge("leak", END).add_edge("calm", END)
    recorder = TraceRecorder(tmp_path / "veto.json")
    await ritual.compile(wards=[NoSecrets(), recorder]).ainvoke({})
    trace = recorder.build()
    assert trace["status"] == "completed"
    (rejection,) = trace["rejections"]
    assert rejection["kind"] == "delta"
    assert rejection["ward"] == "NoSecrets"
    assert rejection["reason"] == "secrets stay home"
    statuses = {e["sigil"]: e["status"] for s in trace["supersteps"] for e in s["sigils"]}
    assert statuses == {"leak": "rejected", "calm": "completed"}


async def test_a_resumed_run_continues_the_trace_file_of_the_same_invocation(
    tmp_path: Path,
) -> None:
    from sanctum import END, START, Interrupt, Ritual, interrupt
    from sanctum.codex.sqlite import SqliteCodex

    def first(aether: dict[str, object]) -> dict[str, object]:
        return {"a": 1}

    def ask(aether: dict[str, object]) -> dict[str, object]:
        if "answer" not in aether:
            interrupt("answer?")
        return {"done": True}

    def build(recorder: TraceRecorder) -> object:
        ritual = Ritual().add_sigil("first", first).add_sigil("ask", ask)
        ritual.add_edge(START, "first").add_edge("first", "ask").add_edge("ask", END)
        return ritual.compile(codex=SqliteCodex(tmp_path / "c.db"), wards=[recorder])

    path = tmp_path / "t.sanctum-trace.json"
    before = TraceRecorder(path)
    with pytest.raises(Interrupt) as paused:
        await build(before).ainvoke({}, invocation_id="inv")  # type: ignore[attr-defined]
    before.flush(paused.value)
    # another process, another recorder, the same file
    after = TraceRecorder(path)
    await build(after).ainvoke(invocation_id="inv", updates={"answer": 1})  # type: ignore[attr-defined]
    document = _read(path)
    ran = [s["sigil"] for step in document["supersteps"] for s in step["sigils"]]
    assert ran[0] == "first"
    assert ran[-1] == "ask"
    assert document["status"] == "completed"
    assert document["interrupt"]["reason"] == "answer?"
    assert document["resumed_from"] is None
    # a fresh run replaces the file instead of continuing it
    fresh = TraceRecorder(path)
    await build(fresh).ainvoke({"answer": 2}, invocation_id="inv2")  # type: ignore[attr-defined]
    assert json.loads(path.read_text())["invocation_id"] == "inv2"


async def test_the_engine_calls_the_recorder_synchronously_unless_on_omen_is_overridden(
    tmp_path: Path,
) -> None:
    from sanctum.ritual.emitter import ImmediateHook, omen_hook_of

    awaited: list[str] = []

    class Announcing(TraceRecorder):
        async def on_omen(self, omen: Omen) -> None:
            awaited.append(type(omen).__name__)
            await super().on_omen(omen)

    assert isinstance(omen_hook_of(TraceRecorder(tmp_path / "a.json")), ImmediateHook)
    assert not isinstance(omen_hook_of(Announcing(tmp_path / "b.json")), ImmediateHook)
    ritual = _counter_ritual()
    paths = (tmp_path / "plain.json", tmp_path / "announcing.json")
    await ritual.compile(wards=[TraceRecorder(paths[0])]).ainvoke({"n": 0})
    await ritual.compile(wards=[Announcing(paths[1])]).ainvoke({"n": 0})
    assert awaited[0] == "RiteBegan"
    assert awaited[-1] == "RiteManifested"
    plain, announcing = (_read(p) for p in paths)
    assert plain["omen_counts"] == announcing["omen_counts"]
    assert [d["delta"] for d in plain["deltas"]] == [d["delta"] for d in announcing["deltas"]]


async def test_a_trace_never_replaces_a_file_that_is_not_a_trace(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes", encoding="utf-8")
    recorder = TraceRecorder(notes)
    with pytest.raises(FileExistsError, match="not a sanctum trace"):
        recorder.check()
    await recorder.on_omen(RiteBegan(invocation_id=INV, timestamp=T0))
    with pytest.raises(OSError, match="not a sanctum trace"):
        recorder.flush()
    assert notes.read_text(encoding="utf-8") == "my notes"
    # an empty file, a missing one and an earlier trace may be written
    (tmp_path / "empty.json").write_text("", encoding="utf-8")
    TraceRecorder(tmp_path / "empty.json").check()
    TraceRecorder(tmp_path / "new" / "t.json").check()
    earlier = TraceRecorder(tmp_path / "t.json")
    await _feed(earlier, sample_run())
    TraceRecorder(tmp_path / "t.json").check()
    # a trace of a newer format is left alone too
    newer = tmp_path / "newer.json"
    newer.write_text('{"format": "sanctum-trace", "version": 99}', encoding="utf-8")
    with pytest.raises(FileExistsError, match="version 99"):
        TraceRecorder(newer).check()


def test_a_trace_path_that_can_never_be_written_is_refused_up_front(tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match="afile is a file"):
        TraceRecorder(blocker / "t.json").check()
    TraceRecorder(tmp_path).check()  # a folder: one file per invocation inside it


def _flaky_ritual() -> Any:
    from sanctum import END, START, Ritual

    def work(aether: dict[str, Any]) -> dict[str, Any]:
        if aether.get("fail"):
            raise RuntimeError("broke")
        return {"done": True}

    def tidy(aether: dict[str, Any]) -> dict[str, Any]:
        return {"tidy": True}

    ritual = Ritual().add_sigil("work", work).add_sigil("tidy", tidy)
    return ritual.add_edge(START, "work").add_edge("work", "tidy").add_edge("tidy", END)


async def test_a_reused_recorder_starts_afresh_for_another_invocation(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path)
    rite = _flaky_ritual().compile(wards=[recorder])
    for name in ("fail-1", "fail-2"):
        with pytest.raises(SigilExecutionError) as caught:
            await rite.ainvoke({"fail": True}, invocation_id=name)
        recorder.flush(caught.value)
    await rite.ainvoke({"fail": False}, invocation_id="ok")
    trace = load_trace(tmp_path / "ok.sanctum-trace.json")
    assert trace["status"] == "completed"
    assert [d["sigil"] for d in trace["deltas"]] == ["work", "tidy"]
    failed = load_trace(tmp_path / "fail-2.sanctum-trace.json")
    assert failed["status"] == "failed"
    assert [s["sigils"][0]["sigil"] for s in failed["supersteps"]] == ["work"]


async def test_a_recorder_shared_by_concurrent_invocations_warns(tmp_path: Path) -> None:
    import asyncio

    recorder = TraceRecorder(tmp_path)

    async def slow_work(aether: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        return {"done": True}

    from sanctum import END, START, Ritual

    ritual = Ritual().add_sigil("work", slow_work).add_edge(START, "work").add_edge("work", END)
    rite = ritual.compile(wards=[recorder])
    with pytest.warns(RuntimeWarning, match="give each concurrent Invocation its own"):
        await asyncio.gather(
            rite.ainvoke({}, invocation_id="A"), rite.ainvoke({}, invocation_id="B")
        )


async def test_a_sigil_that_failed_is_drawn_with_the_time_it_ran(tmp_path: Path) -> None:
    import asyncio

    from sanctum import END, Ritual

    async def slow_then_broken(aether: dict[str, object]) -> dict[str, object]:
        await asyncio.sleep(0.05)
        raise RuntimeError("the server went away")

    ritual = Ritual().add_sigil("work", slow_then_broken).set_entry_point("work")
    ritual.add_edge("work", END)
    recorder = TraceRecorder(tmp_path / "t.json")
    with pytest.raises(SigilExecutionError) as failure:
        await ritual.compile(wards=[recorder]).ainvoke({})
    [superstep] = load_trace(recorder.flush(failure.value))["supersteps"]
    [row] = superstep["sigils"]
    assert row["status"] == "failed"
    assert row["duration"] is not None
    assert row["duration"] >= 0.05  # it ran until it failed, not zero
