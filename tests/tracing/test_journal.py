"""The Chronicle: Omens folded into entries as they arrive."""

from __future__ import annotations

from typing import Any

from sanctum.omens import (
    SigilBegan,
    SigilCompleted,
    SigilRetried,
    SuperstepBegan,
    SuperstepCompleted,
    TokenEmitted,
)
from sanctum.tracing.document import assemble, expand
from sanctum.tracing.journal import Chronicle


def _view(chronicle: Chronicle) -> dict[str, Any]:
    return expand(assemble(chronicle, graph=None))


def test_a_repeated_superstep_number_gets_its_own_entry() -> None:
    chronicle = Chronicle()
    for _ in range(2):  # an interrupted superstep re-runs after resumption
        chronicle.record(SuperstepBegan(invocation_id="i", superstep=4, frontier=("a",)))
        chronicle.record(SigilBegan(invocation_id="i", superstep=4, sigil="a"))
    chronicle.record(SigilCompleted(invocation_id="i", superstep=4, sigil="a", delta={}))
    assert [len(s["sigils"]) for s in _view(chronicle)["supersteps"]] == [1, 1]
    assert _view(chronicle)["supersteps"][0]["sigils"][0]["status"] == "running"
    assert _view(chronicle)["supersteps"][1]["sigils"][0]["status"] == "completed"


def test_sigil_began_again_during_retries_keeps_one_entry() -> None:
    chronicle = Chronicle()
    chronicle.record(SigilBegan(invocation_id="i", superstep=1, sigil="a", timestamp=1.0))
    chronicle.record(SigilRetried(invocation_id="i", superstep=1, sigil="a", attempt=1, cause="x"))
    chronicle.record(SigilBegan(invocation_id="i", superstep=1, sigil="a", timestamp=2.0))
    (entry,) = _view(chronicle)["supersteps"][0]["sigils"]
    assert entry["started_at"] == 1.0
    assert entry["attempts"] == 2


def test_token_payloads_are_copied_as_json_data() -> None:
    chronicle = Chronicle()
    payload: dict[str, Any] = {"delta": ["a"], "obj": object}
    chronicle.record(TokenEmitted(payload=payload, sigil="s", superstep=1))
    payload["delta"].append("b")
    assert chronicle.tokens[0]["payload"] == {"delta": ["a"], "obj": str(object)}


def test_a_sigil_diverted_by_on_error_is_marked_failed() -> None:
    chronicle = Chronicle()
    chronicle.record(SuperstepBegan(invocation_id="i", superstep=6, frontier=("record",)))
    chronicle.record(SigilBegan(invocation_id="i", superstep=6, sigil="record"))
    # no SigilCompleted: the last attempt failed and on_error jumped to the fallback
    chronicle.record(SuperstepBegan(invocation_id="i", superstep=7, frontier=("apologise",)))
    assert _view(chronicle)["supersteps"][0]["sigils"][0]["status"] == "failed"


def test_deltas_are_snapshots_taken_when_they_arrive() -> None:
    chronicle = Chronicle()
    flat = {"n": 1, "s": "x", "f": 0.5, "b": True, "none": None}
    odd: dict[Any, Any] = {"items": [1], "nan": float("nan"), 3: "int key"}
    chronicle.record(SigilCompleted(invocation_id="i", superstep=1, sigil="a", delta=flat))
    chronicle.record(SigilCompleted(invocation_id="i", superstep=1, sigil="b", delta=odd))
    flat["n"] = 2
    odd["items"].append(2)
    assert _view(chronicle)["deltas"][0]["delta"] == {
        "n": 1,
        "s": "x",
        "f": 0.5,
        "b": True,
        "none": None,
    }
    assert _view(chronicle)["deltas"][1]["delta"] == {"items": [1], "nan": "nan", "3": "int key"}


def test_a_long_run_marks_only_unfinished_sigils_failed() -> None:
    chronicle = Chronicle()
    for step in range(1, 50):
        chronicle.record(SuperstepBegan(invocation_id="i", superstep=step, frontier=("a",)))
        chronicle.record(SigilBegan(invocation_id="i", superstep=step, sigil="a"))
        if step != 20:
            chronicle.record(SigilCompleted(invocation_id="i", superstep=step, sigil="a", delta={}))
    statuses = [s["sigils"][0]["status"] for s in _view(chronicle)["supersteps"]]
    assert statuses[19] == "failed"
    assert statuses.count("completed") == 48


def test_tapped_supersteps_read_like_their_four_omens() -> None:
    tapped, told = Chronicle(), Chronicle()
    base = 1_000_000_000_000_000_000
    tapped.tap("i", 3, "a", base, base + 2_000, {"x": 1}, True)
    tapped.tap("i", 4, "b", base + 2_000, base + 5_000, {}, True)
    for step, sigil, delta, start, end in (
        (3, "a", {"x": 1}, 1e9, 1e9 + 2e-6),
        (4, "b", {}, 1e9 + 2e-6, 1e9 + 5e-6),
    ):
        told.record(
            SuperstepBegan(invocation_id="i", superstep=step, frontier=(sigil,), timestamp=start)
        )
        told.record(SigilBegan(invocation_id="i", superstep=step, sigil=sigil, timestamp=start))
        told.record(
            SigilCompleted(
                invocation_id="i", superstep=step, sigil=sigil, delta=delta, timestamp=end
            )
        )
        told.record(SuperstepCompleted(invocation_id="i", superstep=step, aether={}, timestamp=end))
    a, b = _view(tapped), _view(told)
    assert a["deltas"] == [
        {"superstep": 3, "sigil": "a", "timestamp": a["deltas"][0]["timestamp"], "delta": {"x": 1}},
        {"superstep": 4, "sigil": "b", "timestamp": a["deltas"][1]["timestamp"], "delta": {}},
    ]
    assert [d["delta"] for d in a["deltas"]] == [d["delta"] for d in b["deltas"]]
    assert [s["frontier"] for s in a["supersteps"]] == [["a"], ["b"]]
    assert [s["frontier"] for s in b["supersteps"]] == [["a"], ["b"]]
    assert [s["sigils"][0]["duration"] for s in a["supersteps"]] == [2e-6, 3e-6]
    assert [s["sigils"][0]["status"] for s in a["supersteps"]] == ["completed", "completed"]
    assert (
        a["omen_counts"]
        == b["omen_counts"]
        == {
            "SigilBegan": 2,
            "SigilCompleted": 2,
            "SuperstepBegan": 2,
            "SuperstepCompleted": 2,
        }
    )


def test_an_unfinished_tapped_superstep_leaves_the_culprit_running() -> None:
    chronicle = Chronicle()
    chronicle.tap("i", 1, "a", 10_000, 12_000, {}, True)
    chronicle.tap("i", 2, "b", 12_000, None, None, False)
    first, second = _view(chronicle)["supersteps"]
    assert [(e["sigil"], e["status"]) for e in first["sigils"]] == [("a", "completed")]
    assert [(e["sigil"], e["status"]) for e in second["sigils"]] == [("b", "running")]
    assert _view(chronicle)["omen_counts"] == {
        "SigilBegan": 2,
        "SigilCompleted": 1,
        "SuperstepBegan": 2,
        "SuperstepCompleted": 1,
    }
    # the next superstep (an on_error jump) settles it as failed
    chronicle.tap("i", 3, "fallback", 20_000, 21_000, {}, True)
    assert _view(chronicle)["supersteps"][1]["sigils"][0]["status"] == "failed"


def test_a_refused_merge_leaves_the_tapped_superstep_uncompleted() -> None:
    chronicle = Chronicle()
    chronicle.tap("i", 1, "a", 10_000, 12_000, {"stray": 1}, False)
    view = _view(chronicle)
    assert view["deltas"][0]["delta"] == {"stray": 1}
    assert view["omen_counts"] == {"SigilBegan": 1, "SigilCompleted": 1, "SuperstepBegan": 1}


def test_tapped_deltas_are_copied_and_odd_ones_made_json() -> None:
    chronicle = Chronicle()
    flat: dict[str, Any] = {"n": 1}
    nested: dict[str, Any] = {"items": [1], "when": object}
    chronicle.tap("i", 1, "a", 0, 1, flat, True)
    chronicle.tap("i", 2, "a", 2, 3, nested, True)
    flat["n"] = 2
    nested["items"].append(2)
    deltas = [d["delta"] for d in _view(chronicle)["deltas"]]
    assert deltas == [{"n": 1}, {"items": [1], "when": str(object)}]
