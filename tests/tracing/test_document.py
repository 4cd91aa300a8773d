"""Trace document assembly: spell-call pairing and status."""

from __future__ import annotations

from typing import Any

from sanctum.errors import Interrupt, SanctumError
from sanctum.tracing.document import TRACE_FORMAT, TRACE_VERSION, assemble, extract_spell_calls
from sanctum.tracing.journal import Chronicle


def _delta(step: int, sigil: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {"superstep": step, "sigil": sigil, "delta": {"messages": list(messages)}}


def _ask(*calls: dict[str, Any]) -> dict[str, Any]:
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
