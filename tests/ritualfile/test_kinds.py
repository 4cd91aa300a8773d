"""The registry of sigil kinds: every kind of the model is registered, and a kind of
one's own is checked, compiled and drawn without touching the checker, the compiler or
the diagram."""

from __future__ import annotations

import typing
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from sanctum.ritual.kinds import set_sigil
from sanctum.ritualfile import compile_ritual, load_ritual, ritual_graph
from sanctum.ritualfile import kinds as registry
from sanctum.ritualfile._builder import Builder
from sanctum.ritualfile.checks import Checker
from sanctum.ritualfile.diagnostics import Problems
from sanctum.ritualfile.kinds import SigilKind, kind_named, kind_of, register, unregister
from sanctum.ritualfile.models import (
    COMMON_SIGIL_KEYS,
    SIGIL_KEYS,
    SIGIL_KINDS,
    SIGIL_MODELS,
    RitualSpec,
    SigilBase,
)
from tests.ritualfile.helpers import write


def _union_members() -> dict[str, type]:
    """Tag -> model of the sigil union the ritual file's model validates with."""
    sigils = RitualSpec.model_fields["sigils"].annotation
    value = typing.get_args(sigils)[1]
    union = typing.get_args(value)[0]
    members = {}
    for member in typing.get_args(union):
        model, *meta = typing.get_args(member)
        tags = [m.tag for m in meta if hasattr(m, "tag")]
        members[tags[0]] = model
    return members


def test_every_kind_of_the_model_is_registered_in_documented_order() -> None:
    members = _union_members()
    assert members == {kind.tag: kind.model for kind in registry.registered()}
    assert list(members) == [*SIGIL_KINDS, "pass"]
    assert SIGIL_KINDS == (
        "call",
        "oracle",
        "agent",
        "spell",
        "interrupt",
        "set",
        "circle",
        "scatter",
    )
    assert members == SIGIL_MODELS
    assert COMMON_SIGIL_KEYS == ("description", "next", "routes", "join", "policy")
    assert {"prompt", "output", "set", "until"} <= SIGIL_KEYS


def test_each_registered_kind_draws_its_own_word_and_compiles() -> None:
    for kind in registry.registered():
        assert kind.label == (kind.key or "route")
        assert issubclass(kind.model, SigilBase)
        if kind.key is not None:  # every kind with a key builds its own sigil function
            assert type(kind).compile is not SigilKind.compile, kind.tag


def test_registering_twice_or_asking_for_an_unknown_model_is_refused() -> None:
    with pytest.raises(ValueError, match="a sigil kind 'oracle' is registered already"):
        register(kind_named("oracle"))

    class Stray(SigilBase):
        """Belongs to no kind."""

    with pytest.raises(TypeError, match="Stray is the model of no registered sigil kind"):
        kind_of(Stray())
    with pytest.raises(KeyError):
        kind_named("nonesuch")


# --------------------------------------------------------------------------- a toy kind


class ToySigil(SigilBase):
    """Write a fixed number to a conduit."""

    toy: str = Field(description="The conduit to write.")
    value: int = Field(7, description="The number written.")


class ToyKind(SigilKind):
    """A kind defined by a test: its checks, compile step and label live here alone."""

    key = "toy"
    model = ToySigil
    label = "toy"
    checked: typing.ClassVar[list[str]] = []

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        self.checked.append(name)
        checker.conduit(self.path(name, "toy"), sigil.toy, name)

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        return set_sigil({sigil.toy: lambda aether: sigil.value})


@pytest.fixture
def toy() -> Iterator[ToyKind]:
    kind = ToyKind()
    register(kind)
    ToyKind.checked.clear()
    try:
        yield kind
    finally:
        unregister("toy")


TOY_RITUAL = """
sanctum: 1
name: toys
aether:
  x: {}
entry: play
sigils:
  play:
    next: END
"""


def _with_toy(tmp_path: Path, conduit: str) -> RitualSpec:
    """A loaded ritual whose sigil ``play`` is replaced by a toy sigil.

    The model's discriminated union is built from the registry when the models are
    imported, so a kind registered later is not read from YAML; it reaches a RitualSpec
    by being put there, as a program building one would.
    """
    spec = load_ritual(write(tmp_path, TOY_RITUAL), env={})
    spec.sigils["play"] = ToySigil(toy=conduit, next="END")
    return spec


def test_a_toy_kind_is_checked_by_its_own_checks(tmp_path: Path, toy: ToyKind) -> None:
    spec = _with_toy(tmp_path, "y")
    source = spec._source
    problems = Problems(source.loaded)
    Checker(spec, problems, tmp_path.resolve(), tmp_path.resolve()).run()
    assert toy.checked == ["play"]
    assert [p.message for p in problems.sorted()] == [
        "sigil 'play' writes 'y', which is not a conduit; declare it under `aether:`"
    ]


def test_a_toy_kind_is_compiled_and_run(tmp_path: Path, toy: ToyKind) -> None:
    rite = compile_ritual(_with_toy(tmp_path, "x"))
    assert rite.invoke({}) == {"x": 7}


def test_a_toy_kind_is_drawn_with_its_label(tmp_path: Path, toy: ToyKind) -> None:
    spec = _with_toy(tmp_path, "x")
    assert '  s0["play<br/><i>toy</i>"]' in ritual_graph(spec)
    assert '"play" [shape=box, label="play\\ntoy"];' in ritual_graph(spec, "dot")


def test_a_toy_kind_joins_the_live_key_tables(toy: ToyKind) -> None:
    assert registry.kind_keys()[-1] == "toy"
    assert registry.key_owners("value") == ["toy"]
    assert "toy" not in SIGIL_KINDS  # the import-time snapshot keeps the built-in kinds


def test_without_the_toy_its_sigil_is_refused_by_name(tmp_path: Path) -> None:
    spec = load_ritual(write(tmp_path, TOY_RITUAL), env={})
    spec.sigils["play"] = ToySigil(toy="x", next="END")
    with pytest.raises(TypeError, match="ToySigil is the model of no registered sigil kind"):
        compile_ritual(spec)
