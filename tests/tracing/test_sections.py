"""Viewer sections: tolerant readers, escaped values, nested Circles."""

from __future__ import annotations

from typing import Any

from sanctum.tracing.sections import (
    SECTION_TITLES,
    body_sections,
    circles_section,
    rejections_section,
    sigil_stats,
    spell_calls_section,
    summary_section,
    timeline_section,
    tokens_section,
)
from tests.tracing.htmlcheck import parse


def test_sigil_stats_sum_runs_and_durations() -> None:
    doc = {
        "supersteps": [
            {"sigils": [{"sigil": "a", "duration": 0.5, "status": "completed"}]},
            {"sigils": [{"sigil": "a", "duration": 0.25, "status": "failed"}, {"sigil": "b"}]},
        ]
    }
    assert sigil_stats(doc) == {
        "a": {"runs": 2, "duration": 0.75, "status": "failed"},
        "b": {"runs": 1, "duration": 0.0, "status": ""},
    }


def test_timeline_bars_are_positioned_within_the_superstep() -> None:
    doc = {
        "supersteps": [
            {
                "superstep": 1,
                "frontier": ["a", "b"],
                "started_at": 100.0,
                "ended_at": 101.0,
                "duration": 1.0,
                "sigils": [
                    {"sigil": "a", "started_at": 100.0, "duration": 0.5, "status": "completed"},
                    {
                        "sigil": "b",
                        "started_at": 100.5,
                        "duration": 0.5,
                        "status": "failed",
                        "attempts": 3,
                    },
                ],
            }
        ]
    }
    html = timeline_section(doc)
    assert "left:0.00%;width:50.00%" in html
    assert "left:50.00%;width:50.00%" in html
    assert "3 attempts" in html
    assert 'class="bar failed"' in html
    assert "frontier: a, b" in html


def test_summary_shows_interrupt_and_failure() -> None:
    html = summary_section(
        {
            "status": "interrupted",
            "interrupt": {"sigil": "approve", "reason": "Send?", "seal_id": "s9"},
            "failure": {"type": "X", "message": "m", "sigil": "f"},
            "omen_counts": {"SigilBegan": 2},
        }
    )
    text = parse(html).all_text
    assert "approve" in text
    assert "Send?" in text
    assert "s9" in text
    assert "SigilBegan 2" in text
    assert "status-interrupted" in html


def test_the_summary_counts_a_superstep_run_again_after_a_pause_once() -> None:
    steps = [{"superstep": n} for n in (1, 2, 3, 3, 4)]  # 3 paused, then ran again
    text = parse(summary_section({"status": "completed", "supersteps": steps})).all_text
    assert "4 (1 run again after a pause)" in text
    plain = parse(summary_section({"status": "completed", "supersteps": steps[:3]})).all_text
    assert plain.endswith("Supersteps3")


def test_unknown_status_is_not_used_as_a_class() -> None:
    html = summary_section({"status": 'x" onclick="y'})
    assert "status-unknown" in html
    assert 'onclick="' not in html


def test_spell_calls_and_rejections_tables() -> None:
    doc: dict[str, Any] = {
        "spell_calls": [
            {
                "superstep": 1,
                "sigil": "s",
                "spell": "add",
                "arguments": {"a": 1},
                "status": "ok",
                "result": "2",
            }
        ],
        "rejections": [
            {"kind": "delta", "superstep": 2, "sigil": "t", "ward": "Veto", "reason": "no"},
            {
                "kind": "spell",
                "superstep": 3,
                "sigil": "u",
                "spell": "nope",
                "raw": "nope()",
                "reason": "unknown",
            },
        ],
    }
    calls = parse(spell_calls_section(doc)).all_text
    assert "add" in calls
    assert '{"a": 1}' in calls
    assert "2" in calls
    rejections = parse(rejections_section(doc)).all_text
    assert "Veto" in rejections
    assert "nope()" in rejections
    assert "unknown" in rejections


def test_tokens_are_joined_per_sigil() -> None:
    doc = {"tokens": [{"superstep": 1, "sigil": "s", "payload": p} for p in ("he", "llo")]}
    assert "hello" in parse(tokens_section(doc)).all_text


def test_nested_circles_render_without_duplicate_ids() -> None:
    inner: dict[str, Any] = {"status": "completed", "deltas": [{"sigil": "in", "delta": {}}]}
    for _ in range(12):
        inner = {"status": "completed", "circles": [{"circle": "c", "trace": inner}]}
    html = circles_section({"circles": [{"circle": "outer", "sigil": "s", "trace": inner}]})
    ids = [a["id"] for _, a in parse(html).tags if a.get("id")]
    assert ids == ["circles"]
    assert "Nested too deep to show." in html


def test_every_section_appears_even_when_empty() -> None:
    page = parse(body_sections({}))
    expected = set(SECTION_TITLES) - {"summary", "graph", "aether"}
    assert expected == page.ids
