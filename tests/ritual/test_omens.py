"""The scheduler's quick Omen constructors."""

from __future__ import annotations

from sanctum.omens import SigilBegan, SigilCompleted, SuperstepBegan, SuperstepCompleted
from sanctum.ritual._omens import (
    new_sigil_began,
    new_sigil_completed,
    new_superstep_began,
    new_superstep_completed,
)


def test_each_equals_its_keyword_twin() -> None:
    began = new_superstep_began("i", 1, ("a", "b"))
    assert began == SuperstepBegan(
        invocation_id="i", superstep=1, frontier=("a", "b"), timestamp=began.timestamp
    )
    sigil = new_sigil_began("i", 1, "a")
    assert sigil == SigilBegan(invocation_id="i", superstep=1, sigil="a", timestamp=sigil.timestamp)
    done = new_sigil_completed("i", 1, "a", {"x": 1}, 0.25)
    assert done == SigilCompleted(
        invocation_id="i",
        superstep=1,
        sigil="a",
        delta={"x": 1},
        duration=0.25,
        timestamp=done.timestamp,
    )
    merged = new_superstep_completed("i", 1, {"x": 1})
    assert merged == SuperstepCompleted(
        invocation_id="i", superstep=1, aether={"x": 1}, timestamp=merged.timestamp
    )


def test_each_sets_every_field_of_its_omen() -> None:
    import dataclasses

    built = [
        new_superstep_began("i", 1, ("a",)),
        new_sigil_began("i", 1, "a"),
        new_sigil_completed("i", 1, "a", {}, 0.0),
        new_superstep_completed("i", 1, {}),
    ]
    for omen in built:
        # an Omen that gains a field leaves its slot empty here: reading it raises
        values = {f.name: getattr(omen, f.name) for f in dataclasses.fields(omen)}
        assert values["invocation_id"] == "i"
        assert values["timestamp"] > 0
