"""Inputs and updates a Seal cannot store are refused up front, with the path inside.

A Seal keeps values as JSON: strings, finite numbers of at most the interpreter's digit
limit, booleans, null, lists and mappings with string keys. Anything else used to reach
the engine and fail there (AttributeError, TypeError, a Seal that cannot be written).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from sanctum import api
from sanctum.errors import RitualInputError
from sanctum.ritualfile import RitualFile, load

RITUAL = """\
sanctum: 1
name: b
inputs:
  tags: {type: array, default: []}
  blob: {type: object, default: {}}
  count: {type: integer, default: 1}
aether:
  out: {}
entry: s
sigils:
  s: {set: {out: "tags"}, next: END}
"""

JSON_HINT = (
    "; a Seal stores values as JSON, so give strings, numbers, true/false, null, lists "
    "and mappings with string keys"
)


@pytest.fixture
def ritual(tmp_path: Path) -> RitualFile:
    path = tmp_path / "b.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    return load(path)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"tags": [{1: 2}]}, "input tags[0]: the key 1 of type int is no string" + JSON_HINT),
        (
            {"tags": [1, {2, 3}]},
            "input tags[1]: {2, 3} of type set is no JSON value" + JSON_HINT,
        ),
        (
            {"blob": {"a b": [1, {"x": float("nan")}]}},
            'input blob["a b"][1].x: NaN and Infinity are not allowed (a Seal stores values '
            "as JSON, which has no such numbers); give a finite number",
        ),
        (
            {"count": 10**5000},
            f"input count: an integer of about 5001 digits (at most "
            f"{sys.get_int_max_str_digits()})" + JSON_HINT,
        ),
    ],
)
def test_bind_inputs_names_the_input_and_the_path(
    ritual: RitualFile, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(RitualInputError) as caught:
        ritual.bind_inputs(values)
    assert str(caught.value) == message
    assert caught.value.name == next(iter(values))


def test_an_object_is_refused_by_its_type(ritual: RitualFile) -> None:
    with pytest.raises(
        RitualInputError,
        match=r"^input tags\[0\]: <object object at \w+> of type object is no JSON",
    ):
        ritual.bind_inputs({"tags": [object()]})


def test_a_list_of_pairs_and_a_number_for_a_name_are_refused(ritual: RitualFile) -> None:
    with pytest.raises(RitualInputError) as caught:
        ritual.bind_inputs([("tags", [1])])  # type: ignore[arg-type]
    assert str(caught.value) == (
        "inputs must be a mapping of names to values, not list [('tags', [1])]; "
        "e.g. {'n': 3} (a list of pairs: dict(pairs))"
    )
    with pytest.raises(RitualInputError, match=r"^input names must be strings, not int 1$"):
        ritual.bind_inputs({1: 2})  # type: ignore[dict-item]


def test_bind_updates_refuses_the_same(ritual: RitualFile) -> None:
    with pytest.raises(RitualInputError) as caught:
        ritual.bind_updates({"tags": [{1: 2}]})
    assert str(caught.value) == "update tags[0]: the key 1 of type int is no string" + JSON_HINT
    with pytest.raises(RitualInputError, match=r"^updates must be a mapping"):
        ritual.bind_updates([("tags", [])])  # type: ignore[arg-type]


def test_storable_values_still_bind(ritual: RitualFile) -> None:
    bound = ritual.bind_inputs({"tags": [1, "a", None, True, 2.5, ("t",)], "blob": {"k": [{}]}})
    assert bound == {"tags": [1, "a", None, True, 2.5, ("t",)], "blob": {"k": [{}]}, "count": 1}


def test_the_api_refuses_before_the_first_superstep(ritual: RitualFile) -> None:
    performance = api.run(ritual, {"tags": [object()]}, codex="memory:")
    with pytest.raises(RitualInputError, match=r"^input tags\[0\]"):
        asyncio.run(performance.wait())
