"""Each graph rule raises its ErrorCode with the names involved, never only words."""

from __future__ import annotations

import pytest

from sanctum import END, START, Ritual, RitualValidationError, SigilPolicy
from sanctum.errors import ErrorCode, GraphProblem
from sanctum.ritual.validation import Topology, graph_problems
from tests.ritual.helpers import noop


def _refusal(ritual: Ritual, default_policy: SigilPolicy | None = None) -> RitualValidationError:
    with pytest.raises(RitualValidationError) as caught:
        ritual.compile(default_policy=default_policy)
    return caught.value


def _fields(problem: GraphProblem) -> tuple[object, ...]:
    return (problem.code, problem.sigil, problem.source, problem.target, problem.sigils)


def test_no_entry() -> None:
    error = _refusal(Ritual().add_sigil("a", noop).add_edge("a", END))
    assert _fields(error.problems[0]) == (ErrorCode.NO_ENTRY, None, None, None, ())
    assert error.code == ErrorCode.NO_ENTRY == "no-entry"


def test_unknown_source_and_target() -> None:
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a").add_edge("a", "zz")
    ritual.add_edge("ghost", "a")
    error = _refusal(ritual)
    assert [_fields(p) for p in error.problems] == [
        (ErrorCode.UNKNOWN_TARGET, None, "a", "zz", ("a", "zz")),
        (ErrorCode.UNKNOWN_SOURCE, None, "ghost", "a", ("ghost",)),
    ]
    assert (error.code, error.source, error.target) == (ErrorCode.UNKNOWN_TARGET, "a", "zz")


def test_unknown_router_and_route_target() -> None:
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a").add_edge("a", END)
    ritual.add_conditional_edge("ghost", lambda _: "go", {"go": "phantom"})
    problems = _refusal(ritual).problems
    assert [_fields(p) for p in problems[:2]] == [
        (ErrorCode.UNKNOWN_ROUTER, None, "ghost", None, ("ghost",)),
        (ErrorCode.UNKNOWN_ROUTE_TARGET, None, "ghost", "phantom", ("ghost", "phantom")),
    ]
    assert problems[1].key == "go"


def test_fallbacks() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="a"))
    ritual.add_sigil("b", noop, SigilPolicy(on_error="nobody"))
    ritual.set_entry_point("a").set_entry_point("b").add_edge("a", END).add_edge("b", END)
    problems = _refusal(ritual, SigilPolicy(on_error="ghost")).problems
    assert [_fields(p) for p in problems] == [
        (ErrorCode.SELF_FALLBACK, "a", None, "a", ("a",)),
        (ErrorCode.UNKNOWN_FALLBACK, "b", None, "nobody", ("b", "nobody")),
        (ErrorCode.UNKNOWN_FALLBACK, None, None, "ghost", ("ghost",)),
    ]


def test_unreachable_and_dead_end() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("y", noop).add_sigil("x", noop)
    ritual.set_entry_point("a").add_edge("a", END).add_edge("x", "y")
    problems = _refusal(ritual).problems
    assert [_fields(p) for p in problems] == [
        (ErrorCode.UNREACHABLE, None, None, None, ("y", "x")),
        (ErrorCode.DEAD_END, None, None, None, ("y",)),
    ]


def test_joins() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="j")).add_sigil("b", noop)
    ritual.add_sigil("j", noop, join="all").add_sigil("k", noop, join="all")
    ritual.set_entry_point("a").set_entry_point("b").add_edge("a", "j").add_edge("j", END)
    ritual.add_conditional_edge("b", lambda _: "k", ["j", "k"]).add_edge("k", END)
    problems = _refusal(ritual).problems
    assert [_fields(p) for p in problems] == [
        (ErrorCode.JOIN_UNWAITED, "k", None, None, ("k",)),
        (ErrorCode.JOIN_ROUTED, None, "b", "j", ("b", "j")),
        (ErrorCode.JOIN_ROUTED, None, "b", "k", ("b", "k")),
        (ErrorCode.JOIN_FALLBACK, "a", None, "j", ("a", "j")),
    ]


def test_endless_is_found_only_on_request() -> None:
    topology = Topology(
        sigils=("a", "b", "c", "d"),
        edges={START: ["a", "d"], "a": ["b"], "b": ["a"], "c": [END], "d": ["d"]},
        routes={},
        fallbacks={"d": "c"},
    )
    # d's fallback leads out; c is reached through it; a and b loop together
    assert [_fields(p) for p in graph_problems(topology, endless=True)] == [
        (ErrorCode.ENDLESS, "a", None, None, ("a", "b")),
        (ErrorCode.ENDLESS, "b", None, None, ("a", "b")),
    ]
    assert graph_problems(topology) == []


def test_a_router_without_path_map_may_end() -> None:
    topology = Topology(sigils=("a",), edges={START: ["a"]}, routes={"a": None}, fallbacks={})
    assert graph_problems(topology, endless=True) == []


def test_the_message_is_the_first_problems() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).set_entry_point("a")
    error = _refusal(ritual)  # a and b lead nowhere, b cannot be reached
    assert str(error) == error.problems[0].message == str(error.problems[0])
    assert [p.code for p in error.problems] == [ErrorCode.UNREACHABLE, ErrorCode.DEAD_END]
    assert error.sigils == ("b",)
