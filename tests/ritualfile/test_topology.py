"""Graph checks in the file's words: unreachable sigils, barriers that never fire."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sanctum.errors import ErrorCode, GraphProblem
from sanctum.ritual import END, START
from sanctum.ritualfile import check_ritual, compiler, load_ritual, topology
from sanctum.ritualfile.diagnostics import Problems
from tests.ritualfile.helpers import write


def _problems(path: Path) -> list[str]:
    return [f"{p.line}:{p.column}: {p.message}" for p in check_ritual(path, resolve=False)]


def test_unreachable_sigil_is_reported_at_the_sigil(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a: {set: {x: "1"}, next: risky}
          lonely: {set: {x: "2"}, next: END}
          fallback: {set: {x: "3"}, next: END}
          risky: {set: {x: "4"}, next: END, policy: {on_error: fallback}}
          stray: {set: {x: "5"}, next: a}
        """,
    )
    message = (
        "cannot be reached: no `entry`, `next`, `routes` or `on_error` leads to it; "
        "add it to a `next:` (or a route) or remove it"
    )
    # `fallback` is reached through risky's on_error; stray leads somewhere, but
    # nothing leads to it
    assert _problems(path) == [
        f"7:3: sigil 'lonely' {message}",
        f"10:3: sigil 'stray' {message}",
    ]


def test_barriers_that_never_fire(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        policies:
          p: {on_error: gate}
        entry: a
        sigils:
          a:
            set: {x: "1"}
            policy: p
            routes:
              - when: "x == 1"
                to: gate
              - to: lone
          gate: {set: {x: "2"}, join: all, next: END}
          lone: {set: {x: "3"}, join: all, next: END}
        """,
    )
    assert _problems(path) == [
        "5:17: on_error of sigil 'a' names 'gate', which has `join: all`; a fallback runs on "
        "its own — use `join: any` on 'gate'",
        "13:13: a route of sigil 'a' leads to 'gate', which has `join: all`; a barrier waits "
        "only for the sigils whose `next:` names it — use `next:` here, or `join: any` on "
        "'gate'",
        "14:13: a route of sigil 'a' leads to 'lone', which has `join: all`; a barrier waits "
        "only for the sigils whose `next:` names it — use `next:` here, or `join: any` on "
        "'lone'",
        "15:31: sigil 'gate' has `join: all`, but no `entry` or `next:` names it, so the "
        "barrier has nothing to wait for; name it in its predecessors' `next:`, or use "
        "`join: any`",
        "16:31: sigil 'lone' has `join: all`, but no `entry` or `next:` names it, so the "
        "barrier has nothing to wait for; name it in its predecessors' `next:`, or use "
        "`join: any`",
    ]


def test_engine_messages_never_reach_the_file_wording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: [a, loop]
        sigils:
          a: {set: {x: "1"}, routes: [{when: "x == 1", to: gate}, {to: END}]}
          gate: {set: {x: "2"}, join: all, next: END}
          loop: {next: loop}
          lonely: {next: END}
        """,
    )
    before = _problems(path)
    # the route to a barrier, the idle barrier, an endless loop, an unreachable sigil
    assert [line.split(": ")[0] for line in before] == ["6:52", "7:31", "8:3", "9:3"]
    real = topology.graph_problems  # type: ignore[attr-defined]

    def garbled(*args: object, **kwargs: bool) -> list[GraphProblem]:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        return [dataclasses.replace(p, message="add_edge() path_map START") for p in found]

    monkeypatch.setattr(topology, "graph_problems", garbled)
    assert _problems(path) == before


def test_an_engine_refusal_at_compile_is_placed_by_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a: {set: {x: "1"}, next: END}
          lonely: {set: {x: "2"}, next: END}
        """,
    )
    expected = _problems(path)
    # Without the file's own pass, Ritual.compile() refuses the graph; the error's
    # structured problems land at the same place, in the same words.
    monkeypatch.setattr(compiler, "check_topology", lambda spec, problems: None)
    assert (
        _problems(path)
        == expected
        == [
            "7:3: sigil 'lonely' cannot be reached: no `entry`, `next`, `routes` or `on_error` "
            "leads to it; add it to a `next:` (or a route) or remove it"
        ]
    )


_PLACES = """
sanctum: 1
name: t
aether: {x: {}}
policies:
  p: {on_error: b}
default_policy: {on_error: b}
entry: [a, b]
sigils:
  a: {set: {x: "1"}, next: [b, END], policy: p}
  b: {routes: [{when: "x == 1", to: a}, {to: END}]}
"""


@pytest.mark.parametrize(
    ("problem", "expected"),
    [
        (
            GraphProblem(ErrorCode.NO_ENTRY, "m"),
            ["7:8: the ritual has no entry point; name a sigil in `entry:`"],
        ),
        (
            GraphProblem(ErrorCode.UNKNOWN_TARGET, "m", source=START, target="b"),
            ["7:12: `entry` names 'b', which is not a sigil; define it under `sigils:`"],
        ),
        (
            GraphProblem(ErrorCode.UNKNOWN_TARGET, "m", source="a", target=END),
            [
                "9:32: `next` of sigil 'a' names '__end__', which is not a sigil; define it "
                "under `sigils:`"
            ],
        ),
        (
            GraphProblem(ErrorCode.UNKNOWN_ROUTE_TARGET, "m", source="b", target="a"),
            [
                "10:37: a route of sigil 'b' leads to 'a', which is not a sigil; define it "
                "under `sigils:`"
            ],
        ),
        (
            GraphProblem(ErrorCode.SELF_FALLBACK, "m", sigil="a", target="a"),
            ["5:17: sigil 'a' cannot be its own on_error fallback"],
        ),
        (
            GraphProblem(ErrorCode.UNKNOWN_FALLBACK, "m", sigil=None, target="b"),
            [
                "6:28: on_error of `default_policy` names 'b', which is not a sigil; define it "
                "under `sigils:`"
            ],
        ),
        (
            GraphProblem(ErrorCode.UNKNOWN_FALLBACK, "m", sigil="b", target="b"),
            [
                "6:28: on_error of sigil 'b' names 'b', which is not a sigil; define it under "
                "`sigils:`"
            ],
        ),
        (
            GraphProblem(ErrorCode.DEAD_END, "m", sigils=("a", "b")),
            [
                "9:3: sigil 'a' has nowhere to go; add `next:` (a sigil, a list, or END) or "
                "`routes:`",
                "10:3: sigil 'b' has nowhere to go; add `next:` (a sigil, a list, or END) or "
                "`routes:`",
            ],
        ),
        (
            GraphProblem(ErrorCode.JOIN_UNWAITED, "m", sigil="a"),
            [
                "9:3: sigil 'a' has `join: all`, but no `entry` or `next:` names it, so the "
                "barrier has nothing to wait for; name it in its predecessors' `next:`, or use "
                "`join: any`"
            ],
        ),
        (
            GraphProblem(ErrorCode.UNKNOWN_ROUTER, "the engine's words", sigils=("b", "zz")),
            ["10:3: the graph cannot be compiled: the engine's words"],
        ),
        (
            GraphProblem(ErrorCode.INVALID_RITUAL, "the engine's words"),
            ["8:1: the graph cannot be compiled: the engine's words"],
        ),
    ],
    ids=lambda value: value.code if isinstance(value, GraphProblem) else "",
)
def test_each_code_is_placed_where_to_fix_it(
    tmp_path: Path, problem: GraphProblem, expected: list[str]
) -> None:
    # Codes the name checks make impossible in a loaded file still get file words.
    spec = load_ritual(write(tmp_path, _PLACES), env={})
    problems = Problems(spec._source.loaded)
    topology.place(problem, spec, problems)
    assert [f"{p.line}:{p.column}: {p.message}" for p in problems.sorted()] == expected


def test_the_file_graph_in_engine_names(tmp_path: Path) -> None:
    spec = load_ritual(write(tmp_path, _PLACES), env={})
    graph = topology.file_topology(spec)
    assert graph.edges == {START: ["a", "b"], "a": ["b", END]}
    assert graph.routes == {"b": {"a": "a", END: END}}
    assert graph.fallbacks == {"a": "b"}
    assert graph.default_fallback == "b"
    assert graph.fallback("b") is None  # the default policy's fallback is b itself


def test_cycles_without_a_way_to_end_are_reported_at_each_sigil(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {out: {default: 0}}
        policies:
          rescue: {on_error: done}
        entry: [a, c, e]
        sigils:
          a: {set: {out: "out + 1"}, next: b}
          b: {next: a}
          c: {next: c}
          d: {next: d, policy: rescue}
          e: {routes: [{when: "out > 3", to: e}, {to: d}]}
          done: {next: END}
        """,
    )
    # a and b loop together; c only on itself; d's on_error leads out, so it and e
    # (whose default route goes to d) can finish
    assert _problems(path) == [
        "8:3: sigil 'a' can never reach END: every path from it stays among 'a', 'b', so a "
        "run would loop until `recursion_limit`; give one of them a route (or `next`) "
        "to END",
        "9:3: sigil 'b' can never reach END: every path from it stays among 'a', 'b', so a "
        "run would loop until `recursion_limit`; give one of them a route (or `next`) "
        "to END",
        "10:3: sigil 'c' can never reach END: it only leads back to itself, so a run would "
        "loop until `recursion_limit`; give it a route (or `next`) to END",
    ]
