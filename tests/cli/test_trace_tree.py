"""The trace tree of ``sanctum trace show``, on a document in the documented format."""

from __future__ import annotations

import re
from typing import Any

from sanctum.cli._trace_tree import FOLD_AFTER, duration, trace_tree
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


_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""Control characters, less the newline that ends each printed line."""

HOSTILE = "k\x1b]0;PWNED\x07\x1b[2J\x9b31m\x7f"
"""An OSC window title, a screen clear, a C1 CSI and DEL."""
ESCAPED = "k\\u001b]0;PWNED\\u0007\\u001b[2J\\u009b31m\\u007f"
"""How :data:`HOSTILE` is printed."""


def test_control_characters_and_markup_from_the_document_print_escaped() -> None:
    document: dict[str, Any] = {
        "invocation_id": f"id{HOSTILE}[bold]",
        "status": f"done{HOSTILE}",
        "resumed_from": f"seal{HOSTILE}",
        "supersteps": [
            {
                "superstep": f"1{HOSTILE}",
                "frontier": [f"a{HOSTILE}", "[/]"],
                "sigils": [
                    {
                        "sigil": f"a{HOSTILE}",
                        "status": f"completed{HOSTILE}",
                        "delta_keys": [f"key{HOSTILE}", "[bold]x[/bold]"],
                    }
                ],
            }
        ],
        "spell_calls": [
            {"superstep": f"1{HOSTILE}", "sigil": f"a{HOSTILE}", "spell": f"s{HOSTILE}"}
        ],
        "retries": [{"superstep": f"1{HOSTILE}", "sigil": f"a{HOSTILE}", "cause": HOSTILE}],
        "repairs": [{"superstep": f"1{HOSTILE}", "sigil": f"a{HOSTILE}", "detail": HOSTILE}],
        "rejections": [{"superstep": f"1{HOSTILE}", "sigil": f"a{HOSTILE}", "reason": HOSTILE}],
        "seals": [{"superstep": HOSTILE, "seal_id": f"[red]{HOSTILE}"}],
        "interrupt": {"sigil": HOSTILE, "reason": f"[/]{HOSTILE}"},
        "failure": {"type": HOSTILE, "sigil": HOSTILE, "message": HOSTILE},
        "circles": [{"circle": f"c{HOSTILE}[/]", "sigil": HOSTILE, "trace": {}}],
        "final_aether": {HOSTILE: {"[bold]x[/bold]": f"v{HOSTILE}", "[/]": 1}},
    }
    target = console(width=400)
    target.print(trace_tree(document))
    out = text_of(target)
    assert _CONTROL.findall(out) == []
    e = ESCAPED
    assert out == (
        f"trace id{e}[bold]  done{e}  —  (resumed from seal seal{e})\n"
        f"├── superstep 1{e}  a{e}, [/]  —\n"
        f"│   └── ? a{e}  completed{e}  —  → key{e}, [bold]x[/bold]\n"
        f"│       ├── spell s{e}(null) None → null\n"
        f"│       ├── ↻ retry None after {e}\n"
        f"│       ├── ✚ repaired spell call None: {e}\n"
        f"│       └── ✗ rejected None: {e}\n"
        "├── seals [1]\n"
        f"│   └── [red]{e}  superstep {e}\n"
        f"├── ⏸ interrupt at {e}: [/]{e}\n"
        f"├── ✗ failure {e} in {e}: {e}\n"
        f"├── circle c{e}[/] (sigil {e}, superstep None) ?  incomplete  —\n"
        "└── final Aether\n"
        f"    └── {e}\n"
        f'        ├── [bold]x[/bold] = "v{e}"\n'
        "        └── [/] = 1\n"
    )


def test_a_long_list_of_seals_is_folded_unless_all() -> None:
    seals = [{"superstep": n, "seal_id": f"seal{n}"} for n in range(1, 5001)]
    target = console()
    target.print(trace_tree({"invocation_id": "x", "seals": seals}))
    folded = text_of(target)
    assert "seals [5000]" in folded
    assert "… 4,900 seals not shown (--all shows every one)" in folded
    assert "seal50  superstep 50\n" in folded
    assert "seal51  superstep 51\n" not in folded
    assert "seal4950  " not in folded
    assert "seal4951  superstep 4951\n" in folded
    assert len(folded.splitlines()) == 1 + 1 + 100 + 1
    target = console()
    target.print(trace_tree({"invocation_id": "x", "seals": seals}, fold=False))
    whole = text_of(target)
    assert "not shown" not in whole
    assert len(whole.splitlines()) == 1 + 1 + 5000


def test_exactly_fold_after_seals_are_all_drawn() -> None:
    seals = [{"superstep": n, "seal_id": f"seal{n}"} for n in range(FOLD_AFTER)]
    target = console()
    target.print(trace_tree({"seals": seals}))
    out = text_of(target)
    assert "not shown" not in out
    assert out.count("seal") == FOLD_AFTER + 1  # and the "seals [100]" head


def test_a_long_list_of_circles_is_folded_unless_all() -> None:
    circles = [
        {"circle": "c", "sigil": "s", "superstep": n, "trace": {"invocation_id": f"sub{n}"}}
        for n in range(1, 301)
    ]
    target = console()
    target.print(trace_tree({"circles": circles}))
    folded = text_of(target)
    assert "… 200 circles not shown (--all shows every one)" in folded
    assert folded.count("circle c (sigil s") == FOLD_AFTER
    target = console()
    target.print(trace_tree({"circles": circles}, fold=False))
    assert text_of(target).count("circle c (sigil s") == 300


def test_details_attach_to_their_own_superstep_and_sigil_only() -> None:
    document: dict[str, Any] = {
        "supersteps": [
            {"superstep": 1, "sigils": [{"sigil": "a"}, {"sigil": "b"}]},
            {"superstep": 2, "sigils": [{"sigil": "a"}]},
        ],
        "retries": [
            {"superstep": 1, "sigil": "b", "attempt": 1, "cause": "one-b"},
            {"superstep": 2, "sigil": "a", "attempt": 1, "cause": "two-a"},
            {"superstep": 2, "sigil": "a", "attempt": 2, "cause": "two-a-again"},
            {"superstep": [2], "sigil": "a", "attempt": 9, "cause": "malformed"},
        ],
    }
    target = console()
    target.print(trace_tree(document))
    lines = text_of(target).splitlines()
    assert [line.split("after ")[1] for line in lines if "retry" in line] == [
        "one-b",
        "two-a",
        "two-a-again",
    ]
    assert lines.index("│   └── ? b  None  —") < lines.index("│       └── ↻ retry 1 after one-b")
