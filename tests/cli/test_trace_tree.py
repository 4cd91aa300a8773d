"""The trace tree of ``sanctum trace show``, on a document in the documented format."""

from __future__ import annotations

from typing import Any

from sanctum.cli._trace_tree import duration, trace_tree
from tests.cli.render import console, text_of

DOCUMENT: dict[str, Any] = {
    "format": "sanctum-trace",
    "version": 1,
    "invocation_id": "inv1",
    "resumed_from": None,
    "status": "interrupted",
    "duration": 1.5,
    "supersteps": [
        {
            "superstep": 1,
            "frontier": ["agent"],
            "duration": 0.0123,
            "sigils": [
                {
                    "sigil": "agent",
                    "duration": 0.0123,
                    "status": "completed",
                    "attempts": 2,
                    "delta_keys": ["messages"],
                }
            ],
        },
        {
            "superstep": 2,
            "frontier": ["approve"],
            "duration": 0.0004,
            "sigils": [{"sigil": "approve", "duration": None, "status": "interrupted"}],
        },
    ],
    "spell_calls": [
        {
            "superstep": 1,
            "sigil": "agent",
            "spell": "word_count",
            "arguments": {"text": "a b"},
            "status": "ok",
            "result": 2,
        }
    ],
    "retries": [{"superstep": 1, "sigil": "agent", "attempt": 1, "cause": "TimeoutError()"}],
    "repairs": [{"superstep": 1, "sigil": "agent", "spell": "word_count", "detail": "fixed"}],
    "rejections": [
        {"kind": "delta", "superstep": 1, "sigil": "agent", "ward": "W", "reason": "no"}
    ],
    "seals": [{"superstep": 1, "seal_id": "s1", "interrupted": True}],
    "interrupt": {"sigil": "approve", "reason": "Send?", "seal_id": "s1", "superstep": 2},
    "failure": None,
    "final_aether": None,
    "circles": [
        {
            "circle": "inner",
            "sigil": "agent",
            "superstep": 1,
            "trace": {"invocation_id": "sub", "status": "completed", "duration": 0.002},
        }
    ],
}


def test_golden() -> None:
    target = console()
    target.print(trace_tree(DOCUMENT))
    assert text_of(target) == (
        "trace inv1  interrupted  1.50s\n"
        "├── superstep 1  agent  12.3ms\n"
        "│   └── ✓ agent  completed  12.3ms  2 attempts  → messages\n"
        '│       ├── spell word_count({"text": "a b"}) ok → 2\n'
        "│       ├── ↻ retry 1 after TimeoutError()\n"
        "│       ├── ✚ repaired spell call word_count: fixed\n"
        "│       └── ✗ rejected W: no\n"
        "├── superstep 2  approve  400µs\n"
        "│   └── ⏸ approve  interrupted  —\n"
        "├── seals [1]\n"
        "│   └── s1  superstep 1  (interrupt)\n"
        "├── ⏸ interrupt at approve: Send?\n"
        "└── circle inner (sigil agent, superstep 1) sub  completed  2.0ms\n"
    )


def test_failure_and_final_aether() -> None:
    target = console()
    target.print(
        trace_tree(
            {
                "invocation_id": "x",
                "status": "failed",
                "failure": {"type": "SigilExecutionError", "sigil": "a", "message": "boom"},
                "final_aether": {"n": 1},
            }
        )
    )
    out = text_of(target)
    assert "✗ failure SigilExecutionError in a: boom" in out
    assert "final Aether" in out
    assert "n = 1" in out


def test_malformed_document_does_not_crash() -> None:
    target = console()
    target.print(trace_tree({"supersteps": ["junk", {"sigils": [1, None]}], "seals": "x"}))
    assert "trace ?  incomplete" in text_of(target)


def test_duration_units() -> None:
    assert duration(0.0000005) == "0µs"
    assert duration(0.5) == "500.0ms"
    assert duration(2) == "2.00s"
    assert duration(None) == "—"
    assert duration(True) == "—"
