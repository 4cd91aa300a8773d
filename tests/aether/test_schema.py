"""AetherSchema and Conduit: declarations, validation, deterministic merges."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from sanctum.aether import (
    ERRORS_CONDUIT,
    AetherSchema,
    AetherValidationError,
    Conduit,
    add,
    append,
    merge_dict,
    overwrite,
)


def test_constructor_accepts_conduits_annotated_and_plain_types() -> None:
    schema = AetherSchema(
        {"messages": Conduit(reducer=append), "score": Annotated[int, add], "verdict": str}
    )
    conduits = schema.conduits
    assert conduits["messages"].reducer is append
    assert conduits["score"].reducer is add
    assert conduits["score"].type is int
    assert conduits["verdict"].reducer is overwrite
    conduits["extra"] = Conduit()
    assert "extra" not in schema.conduits  # a copy
    assert "messages" in schema
    assert ERRORS_CONDUIT in schema


def test_from_class() -> None:
    class Chant:
        messages: Annotated[list[Any], append]
        score: int
        notes: Annotated[dict[str, Any], "doc", merge_dict]

    schema = AetherSchema.from_class(Chant)
    assert schema.conduits["messages"].reducer is append
    assert schema.conduits["score"].reducer is overwrite
    assert schema.conduits["notes"].reducer is merge_dict


def test_validate_input() -> None:
    schema = AetherSchema({"a": int})
    schema.validate_input({"a": 1, ERRORS_CONDUIT: []})
    with pytest.raises(AetherValidationError, match="'b'") as info:
        schema.validate_input({"a": 1, "b": 2})
    assert info.value.keys == ("b",)
    assert info.value.sigil is None


def test_apply_delta_names_the_sigil_and_skips_reducer_for_missing_key() -> None:
    calls: list[tuple[Any, Any]] = []

    def spy(current: Any, update: Any) -> Any:
        calls.append((current, update))
        return current + update

    schema = AetherSchema({"n": Conduit(reducer=spy)})
    aether = {"other": 1}
    assert schema.apply_delta({}, {"n": 5}, sigil="s") == {"n": 5}
    assert calls == []  # the reducer never sees a missing current value
    assert schema.apply_delta({"n": 1}, {"n": 2}, sigil="s") == {"n": 3}
    with pytest.raises(AetherValidationError, match="sigil 'writer'") as info:
        schema.apply_delta(aether, {"zzz": 1}, sigil="writer")
    assert info.value.sigil == "writer"
    assert aether == {"other": 1}


def test_apply_deltas_in_the_given_order() -> None:
    schema = AetherSchema({"log": Conduit(append), "last": str})
    base = {"log": ["0"]}
    result = schema.apply_deltas(
        base, [("b", {"log": ["b"], "last": "b"}), ("a", {"log": ["a"], "last": "a"})]
    )
    assert result == {"log": ["0", "b", "a"], "last": "a"}
    assert base == {"log": ["0"]}


def test_errors_conduit_appends() -> None:
    schema = AetherSchema({})
    out = schema.apply_delta({ERRORS_CONDUIT: [1]}, {ERRORS_CONDUIT: [2]}, sigil="s")
    assert out == {ERRORS_CONDUIT: [1, 2]}


def test_validate_updates() -> None:
    schema = AetherSchema({"a": int})
    with pytest.raises(AetherValidationError, match="updates"):
        schema.validate_updates({"nope": 1})


def test_conduit_defaults_seed_a_fresh_aether_under_the_input() -> None:
    from sanctum.aether import NO_DEFAULT

    schema = AetherSchema(
        {"messages": Conduit(reducer=append, default=[]), "n": Conduit(default=0), "x": int}
    )
    first = schema.initial({"n": 5})
    assert first == {"messages": [], "n": 5}
    first["messages"].append("mutated")
    # Each fresh Aether gets its own copy of a mutable default.
    assert schema.initial({}) == {"messages": [], "n": 0}
    assert Conduit().default is NO_DEFAULT
    assert repr(NO_DEFAULT) == "NO_DEFAULT"


def test_from_class_reads_class_attribute_defaults() -> None:
    class Chant:
        messages: Annotated[list[str], append] = []  # noqa: RUF012 - a declared default
        score: int = 1
        verdict: str

    schema = AetherSchema.from_class(Chant)
    assert schema.conduits["messages"].reducer is append
    assert schema.initial({}) == {"messages": [], "score": 1}
