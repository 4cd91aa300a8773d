"""Graph checks in the file's words: unreachable sigils, barriers that never fire."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.errors import RitualValidationError
from sanctum.ritual import END, Ritual, SigilPolicy
from sanctum.ritualfile import check_ritual
from sanctum.ritualfile.topology import file_wording
from tests.ritualfile.helpers import write

PYTHON_WORDS = ("add_edge", "add_sigil", "set_entry_point", "path_map", "join='", "START")


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


def _noop(aether: object) -> dict[str, int]:
    return {}


def _engine_messages() -> list[str]:
    builds = [
        lambda r: r.add_sigil("a", _noop),
        lambda r: r.add_sigil("a", _noop).set_entry_point("a").add_edge("a", "zz"),
        lambda r: (
            r.add_sigil("a", _noop, SigilPolicy(on_error="nope"))
            .set_entry_point("a")
            .add_edge("a", END)
        ),
        lambda r: (
            r.add_sigil("a", _noop)
            .add_sigil("b", _noop)
            .set_entry_point("a")
            .add_edge("a", END)
            .add_edge("b", END)
        ),
        lambda r: r.add_sigil("a", _noop).set_entry_point("a"),
        lambda r: (
            r.add_sigil("a", _noop)
            .add_sigil("b", _noop, join="all")
            .set_entry_point("a")
            .add_conditional_edge("a", lambda _: "b", ["b"])
            .add_edge("b", END)
        ),
    ]
    messages = []
    for build in builds:
        with pytest.raises(RitualValidationError) as caught:
            build(Ritual()).compile()
        messages.append(str(caught.value))
    return messages


def test_engine_messages_are_put_in_file_words() -> None:
    messages = _engine_messages()
    assert any("add_edge()" in m for m in messages)  # the engine speaks Python
    for message in messages:
        worded = file_wording(message)
        for word in PYTHON_WORDS:
            assert word not in worded, (message, worded)
    assert file_wording(
        "sigil(s) 'b' cannot be reached from START; connect them with add_edge() or remove them"
    ) == ("sigil(s) 'b' cannot be reached from `entry`; add them to a `next:` or remove them")


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
