"""The Chronicle: Omens folded into entries as they arrive."""

from __future__ import annotations

from sanctum.omens import SigilBegan, SigilCompleted, SigilRetried, SuperstepBegan, TokenEmitted
from sanctum.tracing.journal import Chronicle


def test_a_repeated_superstep_number_gets_its_own_entry() -> None:
    chronicle = Chronicle()
    for _ in range(2):  # an interrupted superstep re-runs after resumption
        chronicle.record(SuperstepBegan(invocation_id="i", superstep=4, frontier=("a",)))
        chronicle.record(SigilBegan(invocation_id="i", superstep=4, sigil="a"))
    chronicle.record(SigilCompleted(invocation_id="i", superstep=4, sigil="a", delta={}))
    assert [len(s["sigils"]) for s in chronicle.supersteps] == [1, 1]
    assert chronicle.supersteps[0]["sigils"][0]["status"] == "running"
    assert chronicle.supersteps[1]["sigils"][0]["status"] == "completed"


def test_sigil_began_again_during_retries_keeps_one_entry() -> None:
    chronicle = Chronicle()
    chronicle.record(SigilBegan(invocation_id="i", superstep=1, sigil="a", timestamp=1.0))
    chronicle.record(SigilRetried(invocation_id="i", superstep=1, sigil="a", attempt=1, cause="x"))
    chronicle.record(SigilBegan(invocation_id="i", superstep=1, sigil="a", timestamp=2.0))
    (entry,) = chronicle.supersteps[0]["sigils"]
    assert entry["started_at"] == 1.0
    assert entry["attempts"] == 2


def test_token_payloads_are_copied_as_json_data() -> None:
    chronicle = Chronicle()
    payload = {"delta": ["a"], "obj": object}
    chronicle.record(TokenEmitted(payload=payload, sigil="s", superstep=1))
    payload["delta"].append("b")
    assert chronicle.tokens[0]["payload"] == {"delta": ["a"], "obj": str(object)}


def test_a_sigil_diverted_by_on_error_is_marked_failed() -> None:
    chronicle = Chronicle()
    chronicle.record(SuperstepBegan(invocation_id="i", superstep=6, frontier=("record",)))
    chronicle.record(SigilBegan(invocation_id="i", superstep=6, sigil="record"))
    # no SigilCompleted: the last attempt failed and on_error jumped to the fallback
    chronicle.record(SuperstepBegan(invocation_id="i", superstep=7, frontier=("apologise",)))
    assert chronicle.supersteps[0]["sigils"][0]["status"] == "failed"


def test_deltas_are_snapshots_taken_when_they_arrive() -> None:
    chronicle = Chronicle()
    flat = {"n": 1, "s": "x", "f": 0.5, "b": True, "none": None}
    odd = {"items": [1], "nan": float("nan"), 3: "int key"}
    chronicle.record(SigilCompleted(invocation_id="i", superstep=1, sigil="a", delta=flat))
    chronicle.record(SigilCompleted(invocation_id="i", superstep=1, sigil="b", delta=odd))
    flat["n"] = 2
    odd["items"].append(2)  # type: ignore[attr-defined]
    assert chronicle.deltas[0]["delta"] == {"n": 1, "s": "x", "f": 0.5, "b": True, "none": None}
    assert chronicle.deltas[1]["delta"] == {"items": [1], "nan": "nan", "3": "int key"}


def test_a_long_run_marks_only_unfinished_sigils_failed() -> None:
    chronicle = Chronicle()
    for step in range(1, 50):
        chronicle.record(SuperstepBegan(invocation_id="i", superstep=step, frontier=("a",)))
        chronicle.record(SigilBegan(invocation_id="i", superstep=step, sigil="a"))
        if step != 20:
            chronicle.record(SigilCompleted(invocation_id="i", superstep=step, sigil="a", delta={}))
    statuses = [s["sigils"][0]["status"] for s in chronicle.supersteps]
    assert statuses[19] == "failed"
    assert statuses.count("completed") == 48
