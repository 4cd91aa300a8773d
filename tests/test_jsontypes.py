from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType

import pytest

from sanctum.jsontypes import JSON_TYPES, has_json_type, json_type_of


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (0, "integer"),
        (1.5, "number"),
        (float("nan"), "number"),
        ("", "string"),
        ([], "array"),
        ((1, 2), "array"),
        ({}, "object"),
        (OrderedDict(), "object"),
        (MappingProxyType({"a": 1}), "object"),
        (b"x", None),
        ({1, 2}, None),
        (object(), None),
    ],
)
def test_each_value_has_one_json_type_name(value: object, name: str | None) -> None:
    assert json_type_of(value) == name


def test_a_boolean_is_never_a_number() -> None:
    assert not has_json_type(True, "integer")
    assert not has_json_type(False, ("number", "integer"))
    assert has_json_type(True, "boolean")


def test_an_integer_is_a_number_but_a_float_is_not_an_integer() -> None:
    assert has_json_type(3, "number")
    assert not has_json_type(3.0, "integer")


def test_several_names_any_and_an_unknown_name() -> None:
    assert has_json_type("x", ["integer", "string"])
    assert has_json_type(object(), "any")
    assert not has_json_type(None, "object")
    with pytest.raises(ValueError, match="unknown JSON type 'strng'"):
        has_json_type("x", "strng")
    assert len(JSON_TYPES) == 7
