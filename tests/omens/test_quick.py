"""The quicker Omen constructors build exactly what the dataclass would."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import time
from dataclasses import dataclass, field

import pytest

from sanctum.omens import SigilBegan, SigilCompleted, SpellCallRepaired, TokenEmitted
from sanctum.omens._quick import positional_maker, quicken


@dataclass(frozen=True, kw_only=True, slots=True)
class _Probe:
    timestamp: float = field(default_factory=time.time)
    name: str
    tags: list[str] = field(default_factory=list)
    level: int = 3


def _reference_signature() -> inspect.Signature:
    return inspect.signature(_Probe)


def test_quickened_class_keeps_signature_defaults_and_behaviour() -> None:
    before = str(_reference_signature())
    quicken(_Probe)
    assert str(inspect.signature(_Probe)) == before
    first, second = _Probe(name="a"), _Probe(name="a")
    assert first.tags == []
    assert first.tags is not second.tags  # a fresh default each time
    assert first.level == 3
    assert dataclasses.replace(first, level=4).level == 4
    assert _Probe(name="a", timestamp=1.0) == _Probe(name="a", timestamp=1.0)
    assert repr(_Probe(name="b", timestamp=2.0)) == (
        "_Probe(timestamp=2.0, name='b', tags=[], level=3)"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.name = "z"  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Probe("a")  # type: ignore[misc]
    with pytest.raises(TypeError, match="name"):
        _Probe()  # type: ignore[call-arg]


def test_classes_it_cannot_speed_up_are_left_alone() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Plain:
        x: int

    init = Plain.__init__
    assert quicken(Plain) is Plain
    assert Plain.__init__ is init


def test_engine_omens_are_still_dataclasses_with_their_parameters() -> None:
    params = inspect.signature(SpellCallRepaired).parameters
    assert list(params)[:3] == ["timestamp", "spell", "detail"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    repaired = SpellCallRepaired(spell="s", detail="d")
    assert repaired.arguments == {}
    assert repaired.raw == ""
    assert repaired.call_id is None
    token = TokenEmitted(payload=[1])
    assert pickle.loads(pickle.dumps(token)) == token
    assert dataclasses.is_dataclass(token)


def test_positional_maker_equals_the_keyword_call() -> None:
    make = positional_maker(SigilCompleted, "invocation_id", "superstep", "sigil", "delta")
    before = time.time()
    built = make("inv", 2, "s", {"k": 1})
    assert before <= built.timestamp <= time.time()
    assert type(built) is SigilCompleted
    assert built == SigilCompleted(
        invocation_id="inv", superstep=2, sigil="s", delta={"k": 1}, timestamp=built.timestamp
    )
    assert built.duration == 0.0  # unnamed fields take their default
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.sigil = "t"  # type: ignore[misc]


def test_positional_maker_needs_every_field_without_default() -> None:
    with pytest.raises(TypeError, match="sigil"):
        positional_maker(SigilBegan, "invocation_id", "superstep")
