"""Pure step logic: frontiers, joins, routes, merges, error records."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum import END, AetherSchema, Conduit, DeltaTypeError, Ritual
from sanctum.aether import append
from sanctum.errors import RouteError
from sanctum.ritual.algo import (
    check_delta,
    entry_frontier,
    error_entry,
    frontier_names,
    join_error,
    merge_deltas,
    next_frontier,
    pending_joins,
    resolve_route,
    restore_frontier,
    with_error,
    writers_of,
)
from sanctum.ritual.graph import Graph
from tests.ritual.helpers import noop


def _graph() -> Graph:
    ritual = Ritual()
    for name in ("a", "b", "c"):
        ritual.add_sigil(name, noop)
    ritual.add_sigil("j", noop, join="all").add_sigil("r", noop)
    ritual.set_entry_point("a").set_entry_point("b")
    ritual.add_edge("a", "j").add_edge("a", "c").add_edge("b", "j").add_edge("c", "r")
    ritual.add_edge("j", END)
    ritual.add_conditional_edge("r", lambda x: x["to"], {"c": "c", "end": END})
    return ritual.compile()._graph


def test_entry_frontier_in_bind_order() -> None:
    graph = _graph()
    frontier, joins = entry_frontier(graph, {})
    assert frontier_names(frontier) == ("a", "b")
    assert joins == {}


def test_join_bookkeeping_is_copy_on_write() -> None:
    graph = _graph()
    a = graph.by_name["a"]
    b = graph.by_name["b"]
    before: dict[str, frozenset[str]] = {}
    frontier, joins = next_frontier((a,), {}, before, graph)
    assert frontier_names(frontier) == ("c",)
    assert joins == {"j": frozenset({"a"})}
    assert before == {}
    frontier, after = next_frontier((b,), {}, joins, graph)
    assert frontier_names(frontier) == ("j",)
    assert after == {}
    assert joins == {"j": frozenset({"a"})}
    frontier, done = next_frontier((a, b), {}, {}, graph)
    assert frontier_names(frontier) == ("c", "j")  # bind order
    assert done == {}


def test_router_and_path_map_resolution() -> None:
    graph = _graph()
    r = graph.by_name["r"]
    frontier, _ = next_frontier((r,), {"to": "c"}, {}, graph)
    assert frontier_names(frontier) == ("c",)
    frontier, _ = next_frontier((r,), {"to": "end"}, {}, graph)
    assert frontier == ()
    with pytest.raises(RouteError) as info:
        resolve_route(r, "nowhere", graph)
    assert info.value.sigil == "r"
    assert info.value.value == "nowhere"
    assert resolve_route(r, "end", graph) is None


def test_pending_joins_and_join_error() -> None:
    graph = _graph()
    joins = {"j": frozenset({"a"})}
    assert pending_joins(joins, graph) == {"j": ["b"]}
    error = join_error(joins, graph, "inv")
    assert error is not None
    assert error.pending == {"j": ["b"]}
    assert "'inv'" in str(error)
    assert join_error({}, graph, "inv") is None


def test_merge_deltas_overwrite_and_schema() -> None:
    deltas: list[tuple[str, Any]] = [("a", {"x": 1, "l": [1]}), ("b", {"x": 2, "l": [2]})]
    base = {"l": [0]}
    assert merge_deltas(base, deltas, None) == {"x": 2, "l": [2]}
    schema = AetherSchema({"x": int, "l": Conduit(append)})
    assert merge_deltas(base, deltas, schema) == {"x": 2, "l": [0, 1, 2]}
    assert base == {"l": [0]}


def test_check_delta() -> None:
    assert check_delta("s", {"a": 1}) == {"a": 1}
    with pytest.raises(DeltaTypeError) as info:
        check_delta("s", None)
    assert isinstance(info.value, TypeError)
    assert info.value.returned == "NoneType"


def test_error_records() -> None:
    entry = error_entry("s", ValueError("bad"), 3, 2)
    assert entry == {
        "sigil": "s",
        "error": "bad",
        "type": "ValueError",
        "superstep": 3,
        "attempts": 2,
    }
    assert error_entry("s", KeyError(), 1, 1)["error"] == "KeyError"
    first = with_error({"k": 1}, entry)
    second = with_error(first, entry)
    assert len(first["__errors__"]) == 1
    assert len(second["__errors__"]) == 2


def test_writers_of_and_restore_frontier() -> None:
    assert writers_of([("a", {"x": 1}), ("b", {"x": 2, "y": 3})]) == {
        "x": ["a", "b"],
        "y": ["b"],
    }
    graph = _graph()
    assert frontier_names(restore_frontier(("c", "a", END), graph)) == ("a", "c")
    with pytest.raises(KeyError):
        restore_frontier(("ghost",), graph)
