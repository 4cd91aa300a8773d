"""Spell arguments are typed by sanctum.jsontypes, the predicate every layer shares.

Arguments built in Python (a template whose value is a tuple, a read-only mapping)
used to be refused as "not an array/object"; they are JSON arrays and objects, and
``json.dumps`` writes them so, hence the deliberate change.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from sanctum.grimoire import Tome, repair_spell_call, spell
from sanctum.oracle.base import SpellCall


def _typed(kind: str) -> Tome:
    def takes(value: Any) -> Any:
        return value

    typed = spell(takes, name="takes")
    typed.parameters = {
        "type": "object",
        "properties": {"value": {"type": kind}},
        "required": ["value"],
    }
    return Tome([typed])


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("array", (1, 2)),
        ("object", MappingProxyType({"a": 1})),
        ("number", 3),
        ("null", None),
    ],
)
def test_python_values_of_the_json_type_pass_untouched(kind: str, value: Any) -> None:
    outcome = repair_spell_call(SpellCall("takes", {"value": value}), _typed(kind))
    assert outcome.call == SpellCall("takes", {"value": value})
    assert outcome.repaired is None


@pytest.mark.parametrize(
    ("kind", "value", "wanted"),
    [
        ("integer", True, "an integer"),
        ("number", False, "a number"),
        ("array", "abc", "an array"),
        ("object", [1], "an object"),
    ],
)
def test_a_boolean_is_no_number_and_a_string_no_array(kind: str, value: Any, wanted: str) -> None:
    outcome = repair_spell_call(SpellCall("takes", {"value": value}), _typed(kind))
    assert outcome.correction is not None
    assert f'argument "value" must be {wanted}' in outcome.correction


def test_a_whole_float_is_still_mended_to_an_integer() -> None:
    outcome = repair_spell_call(SpellCall("takes", {"value": 2.0}), _typed("integer"))
    assert outcome.call == SpellCall("takes", {"value": 2})


def test_a_type_name_that_is_no_json_type_accepts_any_value() -> None:
    outcome = repair_spell_call(SpellCall("takes", {"value": [1.5]}), _typed("anything"))
    assert outcome.call == SpellCall("takes", {"value": [1.5]})


def test_nested_values_follow_the_same_rules() -> None:
    tome = _typed("array")
    tome.get("takes").parameters["properties"]["value"]["items"] = {"type": "integer"}
    outcome = repair_spell_call(SpellCall("takes", {"value": [1, 2.0, True]}), tome)
    assert outcome.correction is not None
    assert "argument \"value[1]\": 2.0 is not of type 'integer'" in outcome.correction
    assert "argument \"value[2]\": True is not of type 'integer'" in outcome.correction
    assert repair_spell_call(SpellCall("takes", {"value": (1, 2)}), tome).call is not None
