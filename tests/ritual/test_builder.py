"""Ritual — the builder: add_sigil, edges, chaining, compile arguments."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from sanctum import END, START, AetherSchema, Conduit, Rite, Ritual, RitualValidationError
from sanctum.aether import add, append
from tests.ritual.helpers import noop


def test_builder_methods_chain_and_compile_returns_rite() -> None:
    ritual = Ritual()
    assert ritual.add_sigil("a", noop) is ritual
    assert ritual.add_edge("a", END) is ritual
    assert ritual.set_entry_point("a") is ritual
    assert ritual.add_sigil("b", noop).add_conditional_edge("b", lambda a: END) is ritual
    rite = ritual.add_edge("a", "b").compile()
    assert isinstance(rite, Rite)
    assert rite.recursion_limit == 25


@pytest.mark.parametrize("name", [START, END])
def test_add_sigil_rejects_reserved_names(name: str) -> None:
    with pytest.raises(RitualValidationError, match="reserved") as info:
        Ritual().add_sigil(name, noop)
    assert info.value.sigils == (name,)


def test_add_sigil_rejects_duplicate_uncallable_and_bad_join() -> None:
    ritual = Ritual().add_sigil("a", noop)
    with pytest.raises(RitualValidationError, match="already bound") as dup:
        ritual.add_sigil("a", noop)
    assert dup.value.sigils == ("a",)
    with pytest.raises(RitualValidationError, match="callable"):
        ritual.add_sigil("b", 42)  # type: ignore[arg-type]
    with pytest.raises(RitualValidationError, match="join"):
        ritual.add_sigil("c", noop, join="some")


def test_add_sigil_checks_in_spec_order() -> None:
    # START wins over "not callable"; "already bound" wins over a bad join.
    with pytest.raises(RitualValidationError, match="reserved"):
        Ritual().add_sigil(START, None, join="x")  # type: ignore[arg-type]
    ritual = Ritual().add_sigil("a", noop)
    with pytest.raises(RitualValidationError, match="already bound"):
        ritual.add_sigil("a", None, join="x")  # type: ignore[arg-type]
    with pytest.raises(RitualValidationError, match="callable"):
        ritual.add_sigil("b", None, join="x")  # type: ignore[arg-type]


def test_add_edge_rejections() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop)
    with pytest.raises(RitualValidationError, match="start at END"):
        ritual.add_edge(END, "a")
    with pytest.raises(RitualValidationError, match="end at START"):
        ritual.add_edge("a", START)
    ritual.add_edge("a", "b")
    with pytest.raises(RitualValidationError, match="already traced") as dup:
        ritual.add_edge("a", "b")
    assert dup.value.sigils == ("a", "b")
    ritual.add_conditional_edge("b", lambda a: END)
    with pytest.raises(RitualValidationError, match="conditional edge"):
        ritual.add_edge("b", "a")


def test_add_conditional_edge_rejections() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop)
    for source in (START, END):
        with pytest.raises(RitualValidationError, match="cannot start"):
            ritual.add_conditional_edge(source, lambda a: "a")
    with pytest.raises(RitualValidationError, match="callable"):
        ritual.add_conditional_edge("a", "not a function")  # type: ignore[arg-type]
    ritual.add_edge("a", "b")
    with pytest.raises(RitualValidationError, match="already has an outgoing edge"):
        ritual.add_conditional_edge("a", lambda a: "b")
    ritual.add_conditional_edge("b", lambda a: END)
    with pytest.raises(RitualValidationError, match="already has an outgoing edge"):
        ritual.add_conditional_edge("b", lambda a: END)


def test_set_entry_point_twice_fans_out_from_start() -> None:
    ritual = Ritual().add_sigil("a", lambda a: {"a": 1}).add_sigil("b", lambda a: {"b": 2})
    ritual.set_entry_point("a").set_entry_point("b").add_edge("a", END).add_edge("b", END)
    rite = ritual.compile()
    assert rite.manifest["entry"] == ["a", "b"]
    assert rite.invoke({}) == {"a": 1, "b": 2}
    with pytest.raises(RitualValidationError):
        ritual.set_entry_point("a")


def test_compile_rejects_bad_recursion_limit_and_policy() -> None:
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a").add_edge("a", END)
    for bad in (0, -1, True, 2.5):
        with pytest.raises(RitualValidationError, match="recursion_limit"):
            ritual.compile(recursion_limit=bad)  # type: ignore[arg-type]
    with pytest.raises(RitualValidationError, match="default_policy"):
        ritual.compile(default_policy="retry")  # type: ignore[arg-type]
    with pytest.raises(RitualValidationError, match="SigilPolicy"):
        ritual.add_sigil("b", noop, policy={"retries": 1})  # type: ignore[arg-type]


def test_schema_may_be_mapping_class_or_schema() -> None:
    class Shape:
        items: Annotated[list[Any], append]
        total: Annotated[int, add]

    for schema in (
        AetherSchema({"items": Conduit(reducer=append), "total": Annotated[int, add]}),
        {"items": Conduit(reducer=append), "total": Annotated[int, add]},
        Shape,
    ):
        ritual = Ritual(schema)
        ritual.add_sigil("a", lambda a: {"items": [1], "total": 2})
        rite = ritual.set_entry_point("a").add_edge("a", END).compile()
        assert rite.invoke({"items": [0], "total": 1}) == {"items": [0, 1], "total": 3}
        assert ritual.schema is rite.schema
    with pytest.raises(TypeError, match="schema"):
        Ritual(42)  # type: ignore[arg-type]


def test_compiled_rite_is_unaffected_by_later_builder_changes() -> None:
    ritual = Ritual().add_sigil("a", lambda a: {"x": 1}).set_entry_point("a").add_edge("a", END)
    rite = ritual.compile()
    ritual.add_sigil("b", noop)
    assert rite.manifest["sigils"] == ["a"]
    assert rite.invoke({}) == {"x": 1}
