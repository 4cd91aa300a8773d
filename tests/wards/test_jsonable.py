"""The private JSON sanitiser shared by AuditWard and the trace recorder."""

from __future__ import annotations

import json
import math
from enum import Enum, IntEnum
from typing import Any

from sanctum.wards._jsonable import MAX_DEPTH, jsonable


class Colour(str, Enum):  # noqa: UP042 - the str mixin is what is tested
    RED = "red"


class Level(IntEnum):
    HIGH = 3


def test_plain_json_data_is_kept() -> None:
    value = {"a": [1, 2.5, "x", None, True], "b": {"c": False}}
    assert jsonable(value) == value


def test_subclasses_become_plain_values() -> None:
    out = jsonable({"colour": Colour.RED, "level": Level.HIGH})
    assert out == {"colour": "red", "level": 3}
    assert type(out["colour"]) is str
    assert type(out["level"]) is int


def test_non_finite_floats_become_strings() -> None:
    assert jsonable([math.nan, math.inf, -math.inf]) == ["nan", "inf", "-inf"]


def test_deep_nesting_is_cut_instead_of_recursing_forever() -> None:
    deep: Any = "bottom"
    for _ in range(MAX_DEPTH * 5):
        deep = [deep]
    out = jsonable(deep)
    json.dumps(out)  # stays within json's own recursion limits
    text = json.dumps(out)
    assert "<nested too deep>" in text
    assert "bottom" not in text


def test_unprintable_objects_never_raise() -> None:
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no str")

        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert jsonable(Broken()) == "<unprintable Broken>"


def test_result_always_dumps_strictly() -> None:
    value = {(1, 2): {1.5: object(), True: {3, 1}}, "n": [math.nan]}
    json.dumps(jsonable(value), allow_nan=False)
    assert jsonable(value)["(1, 2)"]["true"] == [1, 3]
