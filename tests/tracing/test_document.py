"""Trace document assembly: spell-call pairing and status."""

from __future__ import annotations

from typing import Any

from sanctum.errors import Interrupt, SanctumError
from sanctum.tracing.document import (
    TRACE_FORMAT,
    TRACE_VERSION,
    assemble,
    continue_trace,
    expand,
    extract_spell_calls,
    upgrade,
)
from sanctum.tracing.journal import Chronicle
from sanctum.tracing.timeline import decode_rows, encode_rows


def _delta(step: int, sigil: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {"superstep": step, "sigil": sigil, "delta": {"messages": list(messages)}}


def _ask(*calls: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "spell_calls": list(calls)}


def test_results_pair_with_calls_by_id_then_by_name_in_order() -> None:
    deltas = [
        _delta(
            1,
            "oracle",
            _ask(
                {"spell": "add", "arguments": {"a": 1}, "call_id": "x"},
                {"spell": "echo", "arguments": {"t": "one"}},
                {"spell": "echo", "arguments": {"t": "two"}},
            ),
        ),
        _delta(
            2,
            "spells",
            {"role": "spell", "name": "echo", "content": "one"},
            {"role": "tool", "name": "add", "call_id": "x", "content": "2"},
            {"role": "spell", "name": "echo", "content": "boom", "error": True},
            {"role": "spell", "name": "ghost", "call_id": "g", "content": "?"},
        ),
    ]
    calls = extract_spell_calls(deltas)
    summary = [(c["spell"], c["arguments"], c["status"], c["result"]) for c in calls]
    assert summary == [
        ("add", {"a": 1}, "ok", "2"),
        ("echo", {"t": "one"}, "ok", "one"),
        ("echo", {"t": "two"}, "error", "boom"),
        ("ghost", None, "ok", "?"),
    ]
    assert calls[0]["result_sigil"] == "spells"
    assert calls[0]["result_superstep"] == 2


def test_a_rejected_call_is_marked_rejected_not_ok() -> None:
    deltas = [
        _delta(1, "oracle", _ask({"spell": "lookup_ordr", "arguments": {}, "call_id": "c1"})),
        _delta(
            2,
            "spells",
            {
                "role": "spell",
                "name": "lookup_ordr",
                "call_id": "c1",
                "content": "There is no spell named lookup_ordr.",
            },
        ),
    ]
    rejections = [
        {"kind": "spell", "call_id": "c1", "reason": "There is no spell..."},
        {"kind": "delta", "ward": "W", "reason": "veto"},
    ]
    (call,) = extract_spell_calls(deltas, rejections=rejections)
    assert call["status"] == "rejected"
    assert call["result"] == "There is no spell named lookup_ordr."
    (plain,) = extract_spell_calls(deltas)
    assert plain["status"] == "ok"


def test_unanswered_calls_stay_pending_and_junk_is_ignored() -> None:
    deltas = [
        _delta(1, "o", _ask({"spell": "wait"}, "junk")),
        {"superstep": 2, "sigil": "x", "delta": {"messages": {"role": "user", "content": "hi"}}},
        {"superstep": 3, "sigil": "y", "delta": "not a mapping"},
    ]
    (call,) = extract_spell_calls(deltas)
    assert call["status"] == "pending"
    assert call["result"] is None


def test_status_reflects_manifest_interrupt_and_failure() -> None:
    empty = assemble(Chronicle(), graph=None)
    assert empty["format"] == TRACE_FORMAT
    assert empty["version"] == TRACE_VERSION
    assert empty["status"] == "incomplete"
    assert empty["duration"] is None
    paused = assemble(Chronicle(), graph=None, error=Interrupt("why", sigil="ask"))
    assert paused["status"] == "interrupted"
    assert paused["interrupt"]["reason"] == "why"
    failed = assemble(Chronicle(), graph={"sigils": []}, error=SanctumError("bad"))
    assert failed["status"] == "failed"
    assert failed["failure"]["message"] == "bad"
    assert failed["failure"]["sigil"] is None
    assert failed["graph"] == {"sigils": []}


def _timeline_doc(
    rows: list[Any], frontiers: dict[int, list[str]] | None = None, **extra: Any
) -> dict[str, Any]:
    timeline = encode_rows(rows, frontiers)
    return {"format": TRACE_FORMAT, "version": TRACE_VERSION, "timeline": timeline, **extra}


def test_expand_groups_rows_into_supersteps() -> None:
    e = 10**18  # epoch nanoseconds
    rows = [
        (1, "a", e, e + 1_000_000, {"x": 1}, "completed", 1),
        (2, "b", e + 2_000_000, e + 3_000_000, {"y": [1]}, "completed", 2),
        (2, "c", e + 2_000_000, e + 5_000_000, None, "rejected", 1),
        (2, "b", e + 6_000_000, None, None, "running", 1),  # b again: a re-run superstep 2
    ]
    view = expand(_timeline_doc(rows, circles=[]))
    assert "timeline" not in view
    steps = view["supersteps"]
    assert [(s["superstep"], s["frontier"]) for s in steps] == [
        (1, ["a"]),
        (2, ["b", "c"]),
        (2, ["b"]),
    ]
    assert steps[1]["started_at"] == 1e9 + 0.002
    assert steps[1]["duration"] == 0.003
    assert steps[1]["sigils"][0] == {
        "sigil": "b",
        "started_at": 1e9 + 0.002,
        "ended_at": 1e9 + 0.003,
        "duration": 0.001,
        "status": "completed",
        "attempts": 2,
        "delta_keys": ["y"],
    }
    assert steps[2]["sigils"][0]["status"] == "running"
    assert steps[2]["ended_at"] is None
    assert steps[2]["duration"] is None
    assert [(d["sigil"], d["delta"]) for d in view["deltas"]] == [
        ("a", {"x": 1}),
        ("b", {"y": [1]}),
    ]
    assert view["spell_calls"] == []


def test_expand_leaves_a_version_1_document_as_it_is() -> None:
    old = {"format": TRACE_FORMAT, "version": 1, "supersteps": [{"superstep": 1}], "deltas": []}
    assert expand(old) == old
    assert expand(old) is not old


def test_a_resumed_trace_is_joined_onto_the_earlier_one() -> None:
    first = _timeline_doc(
        [(1, "ask", 1_000, None, None, "interrupted", 1)],
        started_at=1e-6,
        omen_counts={"RiteBegan": 1},
        seals=[{"seal_id": "s1"}],
        resumed_from=None,
    )
    second = _timeline_doc(
        [(1, "ask", 5_010, 5_020, {"done": True}, "completed", 1)],
        started_at=5e-6,
        ended_at=5.02e-6,
        omen_counts={"RiteBegan": 1, "SigilBegan": 1},
        seals=[{"seal_id": "s2"}],
        resumed_from="s1",
        status="completed",
    )
    joined = continue_trace(first, second)
    assert decode_rows(joined["timeline"]) == [
        (1, "ask", 1_000, None, None, "interrupted", 1),
        (1, "ask", 5_010, 5_020, {"done": True}, "completed", 1),
    ]
    assert joined["omen_counts"] == {"RiteBegan": 2, "SigilBegan": 1}
    assert [s["seal_id"] for s in joined["seals"]] == ["s1", "s2"]
    assert joined["resumed_from"] is None
    assert joined["status"] == "completed"
    assert joined["started_at"] == 1e-6
    steps = expand(joined)["supersteps"]
    assert [s["sigils"][0]["status"] for s in steps] == ["interrupted", "completed"]


def test_a_version_1_document_upgrades_to_the_same_reading() -> None:
    e = 1_700_000_000_000_000_000
    rows = [
        (1, "a", e, e + 1_000, {"x": 1}, "completed", 1),
        (2, "b", e + 2_000, e + 3_000, {"y": 2}, "completed", 3),
        (2, "c", e + 2_000, None, None, "interrupted", 1),
    ]
    readable = expand(_timeline_doc(rows, {1: ["b", "c", "d"]}, circles=[]))
    old = {**readable, "version": 1}
    again = expand(upgrade(old))
    assert again["deltas"] == readable["deltas"]
    assert [s["frontier"] for s in again["supersteps"]] == [["a"], ["b", "c", "d"]]
    assert [
        (e["sigil"], e["status"], e["attempts"]) for s in again["supersteps"] for e in s["sigils"]
    ] == [("a", "completed", 1), ("b", "completed", 3), ("c", "interrupted", 1)]
    assert upgrade(old)["version"] == TRACE_VERSION
    assert "supersteps" not in upgrade(old)
