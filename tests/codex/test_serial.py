"""The shared encoding: the quick path writes exactly the encoder's text, and is strict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sanctum.codex._serial import _quick, encode_json

PLAIN: list[Any] = [
    {"parent": "3f" * 16, "joins": {}, "writers": {"answer": ["think", "act"]}},
    {"a": [1, True, False, None, 'é\n"\\', {"x": []}], "b": {}, "c": -12},
    [],
    {},
    ("t", 1),
    [[[["deep"]]]],
    {"emoji": "🜁", "ctrl": "\x01\t"},
]


@pytest.mark.parametrize("value", PLAIN)
def test_quick_text_is_the_encoders_text(value: Any) -> None:
    assert _quick(value) == encode_json(value)
    assert _quick(value) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key"},
        {"nested": {None: 1}},
        [{"x": {True: 1}}],
        {"f": 1.5},
        {"big": list(range(100))},
        {"s": {1, 2}},
    ],
)
def test_quick_leaves_anything_else_to_the_checked_path(value: Any) -> None:
    assert _quick(value) is None


def test_quick_leaves_circular_values_to_the_checked_path() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert _quick(loop) is None
