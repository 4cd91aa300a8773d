"""invocation_call: how a Sigil asking for its context (or a named writer) is called."""

from __future__ import annotations

from typing import Any

from sanctum.ritual import InvocationContext
from sanctum.ritual.graph import detect_writer
from sanctum.ritual.invocation import invocation_call

HERE = InvocationContext("inv", 2)
PEN = object()


def _call(fn: Any) -> Any:
    call = invocation_call(fn, detect_writer(fn))
    assert call is not None
    return call({"k": 1}, PEN, HERE)


def test_functions_that_ask_for_nothing_by_name_are_left_alone() -> None:
    assert invocation_call(lambda a: a, False) is None
    assert invocation_call(lambda a, w: a, True) is None
    assert invocation_call(lambda a, *, other=1: a, False) is None
    assert invocation_call(lambda **kw: kw, False) is None
    assert invocation_call(len, False) is None


def test_each_parameter_gets_its_value_wherever_it_stands() -> None:
    assert _call(lambda a, invocation: (a, invocation)) == ({"k": 1}, HERE)
    assert _call(lambda a, w, invocation: (w, invocation)) == (PEN, HERE)
    assert _call(lambda a, invocation, w: (w, invocation)) == (PEN, HERE)
    assert _call(lambda a, *, invocation: invocation) == HERE
    assert _call(lambda a, *, writer: writer) is PEN
    assert _call(lambda a, *, writer, invocation: (writer, invocation)) == (PEN, HERE)


def test_positional_only_parameters_are_passed_by_position() -> None:
    def context(a: Any, invocation: Any, /) -> Any:
        return invocation

    def pen_first(a: Any, w: Any, /, invocation: Any) -> Any:
        return w, invocation

    def both(a: Any, w: Any, invocation: Any, /) -> Any:
        return w, invocation

    assert _call(context) == HERE
    assert _call(pen_first) == (PEN, HERE)
    assert _call(both) == (PEN, HERE)
