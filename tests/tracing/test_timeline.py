"""The columnar timeline: rows in, hexadecimal columns out, the same rows back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sanctum.tracing.timeline import (
    NOT_ENDED,
    Timeline,
    TimelineRow,
    decode_frontiers,
    decode_rows,
    encode_rows,
)

ROWS: list[TimelineRow] = [
    (1, "fetch", 0, 1_500, {"page": "<p>x</p>"}, "completed", 1),
    (2, "parse", 1_600, 2_000, None, "rejected", 1),
    (2, "score", 1_600, 9_000_000_000, {"score": 0.5}, "completed", 3),
    (3, "fetch", 9_000_000_100, None, None, "running", 1),
    (4, "late", -20, 7, {}, "completed", 1),  # a clock that stepped back
]


def test_rows_survive_a_round_trip_through_json() -> None:
    written = json.loads(json.dumps(encode_rows(ROWS)))
    assert decode_rows(written) == ROWS
    assert written["rows"] == len(ROWS)
    assert written["names"] == ["fetch", "parse", "score", "late"]
    assert written["status"] == {"1": "rejected", "3": "running"}
    assert written["attempts"] == {"2": 3}


def test_integer_columns_are_little_endian_int64_hexadecimal() -> None:
    written = encode_rows(ROWS)
    assert written["ended"] == written["ended"].lower()
    raw = bytes.fromhex(written["ended"])
    assert len(raw) == 8 * len(ROWS)
    values = [int.from_bytes(raw[i : i + 8], "little", signed=True) for i in range(0, 40, 8)]
    assert values == [1_500, 2_000, 9_000_000_000, NOT_ENDED, 7]


def test_a_timeline_built_row_by_row_matches() -> None:
    timeline = Timeline()
    timeline.add(1, "fetch", 0, 1_500, {"page": "<p>x</p>"})
    opened = timeline.open(2, "parse", 1_600)
    assert timeline.state(opened) == "running"
    assert timeline.ended(opened) is None
    timeline.end(opened, 2_000)
    timeline.status[opened] = "rejected"
    assert timeline.sigil(opened) == "parse"
    assert timeline.superstep(opened) == 2
    assert list(timeline.last_step()) == [1]
    assert decode_rows(timeline.encode())[:2] == ROWS[:2]


def test_the_last_step_is_the_trailing_run_of_one_superstep() -> None:
    timeline = Timeline()
    assert list(timeline.last_step()) == []
    for superstep in (1, 2, 2, 2):
        timeline.add(superstep, "s", 0, 1, {})
    assert list(timeline.last_step()) == [1, 2, 3]


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: t.update(rows=99),
        lambda t: t.update(rows=True),
        lambda t: t.update(names="fetch"),
        lambda t: t.update(names=[1, 2, 3, 4]),
        lambda t: t.update(delta={}),
        lambda t: t.update(began="not hexadecimal!"),
        lambda t: t.update(began="zz" * 40),
        lambda t: t.update(began=" " + t["began"][1:]),
        lambda t: t.update(ended=t["ended"][:-4]),
        lambda t: t.pop("superstep"),
        lambda t: t.update(
            sigil=encode_rows([(9, "x", 0, 1, {}, "completed", 1)] * 5)["superstep"]
        ),
    ],
)
def test_a_damaged_timeline_yields_no_rows(damage: Any) -> None:
    written = json.loads(json.dumps(encode_rows(ROWS)))
    damage(written)
    assert decode_rows(written) == []


def test_odd_sparse_entries_are_ignored() -> None:
    written = encode_rows(ROWS)
    written["status"] = {"0": 5, "x": "failed", "1": "failed", "²": "failed", "٣": "failed"}
    written["attempts"] = {"2": True, "0": "3", "1": 2}
    rows = decode_rows(written)
    assert [row[5] for row in rows] == [
        "completed",
        "failed",
        "completed",
        "completed",
        "completed",
    ]
    assert [row[6] for row in rows] == [1, 2, 1, 1, 1]


def test_anything_else_is_no_timeline() -> None:
    assert decode_rows(None) == []
    assert decode_rows([[1, "a", 0, 1, {}]]) == []


def test_frontiers_round_trip_and_odd_entries_are_skipped() -> None:
    written = json.loads(json.dumps(encode_rows(ROWS, {1: ["parse", "score", "never"]})))
    assert decode_frontiers(written) == {1: ["parse", "score", "never"]}
    written["frontiers"] = {"1": ["ok"], "2": "not a list", "3": [1, 2], "x": ["y"]}
    assert decode_frontiers(written) == {1: ["ok"]}
    assert decode_frontiers({}) == {}
