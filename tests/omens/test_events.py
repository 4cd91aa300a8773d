"""Omen classes: frozen, keyword-only, timestamped."""

from __future__ import annotations

import dataclasses
import time

import pytest

from sanctum import omens
from sanctum.omens import (
    ApprovalRequested,
    CircleEchoed,
    CompactionStalled,
    DeltaRejected,
    LoopGuardTripped,
    Omen,
    OracleFellBack,
    RiteBegan,
    RiteManifested,
    SealWritten,
    SigilBegan,
    SigilCompleted,
    SigilRetried,
    SpellCallRejected,
    SpellCallRepaired,
    SuperstepBegan,
    SuperstepCompleted,
    TokenEmitted,
    TranscriptCompacted,
    TurnBudgetReached,
)

_BUILDING = time.time()
ALL = [
    RiteBegan(invocation_id="i"),
    SuperstepBegan(invocation_id="i", superstep=1, frontier=("a",)),
    SigilBegan(invocation_id="i", superstep=1, sigil="a"),
    SigilRetried(invocation_id="i", superstep=1, sigil="a", attempt=1, cause="x"),
    SigilCompleted(invocation_id="i", superstep=1, sigil="a", delta={}),
    SuperstepCompleted(invocation_id="i", superstep=1, aether={}),
    SealWritten(invocation_id="i", superstep=1, seal_id="s"),
    TokenEmitted(payload="t"),
    RiteManifested(invocation_id="i", superstep=1, aether={}),
    DeltaRejected(invocation_id="i", superstep=1, sigil="a", ward="W"),
    SpellCallRepaired(spell="s", detail="d"),
    SpellCallRejected(spell="s", reason="r"),
    CircleEchoed(circle="c", omen=TokenEmitted(payload=1)),
    OracleFellBack(from_oracle="a", to_oracle="b", reason="connection"),
    TranscriptCompacted(covered=4, saved_tokens=300, summarizer="mechanical"),
    CompactionStalled(reason="saved under 10 %"),
    TurnBudgetReached(turns=6),
    LoopGuardTripped(spell="lookup", code="repeat_failure", action="block"),
    ApprovalRequested(spell="update_email", call_id="call_2_1"),
]
_BUILT = time.time()


@pytest.mark.parametrize("omen", ALL, ids=lambda o: type(o).__name__)
def test_every_omen_is_frozen_and_stamped(omen: Omen) -> None:
    assert isinstance(omen, Omen)
    assert _BUILDING <= omen.timestamp <= _BUILT  # stamped when built (epoch seconds)
    with pytest.raises(dataclasses.FrozenInstanceError):
        omen.timestamp = 0.0  # type: ignore[misc]


def test_omens_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        RiteBegan("i")  # type: ignore[arg-type, misc]


def test_every_omen_class_is_covered() -> None:
    from sanctum.omens.events import OMEN_KINDS

    classes = {v for v in vars(omens).values() if isinstance(v, type) and issubclass(v, Omen)} - {
        Omen
    }
    assert classes == {type(o) for o in ALL}
    assert set(OMEN_KINDS) == classes  # the registry the stream modes are built from


def test_lifecycle_omens_built_by_hand_need_only_their_own_fields() -> None:
    from sanctum.omens.events import SigilCompleted, SuperstepBegan

    completed = SigilCompleted(sigil="a", delta={"x": 1})
    assert (completed.invocation_id, completed.superstep) == ("", 0)
    assert SuperstepBegan(frontier=("a",)).frontier == ("a",)


def test_stream_modes_are_readable_beside_the_omen_classes() -> None:
    from sanctum.omens import STREAM_MODES as modes
    from sanctum.omens import events

    assert events.STREAM_MODES is modes
    assert events.resolve_modes("values") == frozenset(modes["values"])
    with pytest.raises(AttributeError, match="no attribute 'NOPE'"):
        _ = events.NOPE  # type: ignore[attr-defined]
