"""File-level checks: names, references, routes, paths, expressions in context."""

from __future__ import annotations

from pathlib import Path

from sanctum.spec.checks import exception_class, spell_names
from tests.spec.helpers import problems_of, write


def test_unknown_targets_with_did_you_mean(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {category: {}}
        entry: clasify
        sigils:
          classify:
            set: {category: "'x'"}
            routes:
              - when: "categroy == 'x'"
                to: finsh
              - to: END
          finish:
            set: {categry: "1"}
            next: ENDD
            policy: {on_error: clasify, retry_on: [TimeoutErr]}
        """,
    )
    assert problems_of(path) == [
        "4:8: `entry` names 'clasify', which is not a sigil; did you mean 'classify'?",
        "9:15: sigil 'classify': `categroy == 'x'`: 'categroy' is not a conduit or input; "
        "did you mean 'category'?",
        "10:13: sigil 'classify' points to 'finsh', which is not a sigil; did you mean 'finish'?",
        "13:11: sigil 'finish' sets 'categry', which is not a conduit; did you mean "
        "'category'?; declare it under `aether:`",
        "14:11: sigil 'finish' points to 'ENDD', which is not a sigil; did you mean 'END'?",
        "15:24: on_error of sigil 'finish' names 'clasify', which is not a sigil; "
        "did you mean 'classify'?",
        "15:44: unknown exception 'TimeoutErr'; did you mean 'TimeoutError'?; name a builtin "
        "exception or one from sanctum.errors",
    ]


def test_yaml11_boolean_names_need_quotes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether:
          on: {}
          "off": {}
        entry: yes
        sigils:
          "yes":
            set: {"off": "1"}
            next: no
          "no":
            set: {"off": "2"}
            next: END
        """,
    )
    assert problems_of(path) == [
        '4:3: `on` is read as a boolean by YAML 1.1 tools; quote it where a name is expected: "on"',
        "6:8: `yes` is read as a boolean by YAML 1.1 tools; quote it where a name is "
        'expected: "yes"',
        "10:11: `no` is read as a boolean by YAML 1.1 tools; quote it where a name is "
        'expected: "no"',
    ]


def test_routes_shape_and_braces(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a:
            set: {x: "{{ 1 }}"}
            routes:
              - to: END
              - when: "x == 1"
                to: a
        """,
    )
    assert problems_of(path) == [
        "7:14: sigil 'a': `{{ 1 }}`: braces in an expression field: conditions and set "
        "values are bare expressions; write `1`",
        "9:9: only the last route may omit `when` (it is the default)",
        "10:15: the last route of sigil 'a' has a `when`; end the list with a default route "
        "without `when` (e.g. `- to: END`)",
    ]


def test_tome_outside_project_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (tmp_path / "elsewhere").mkdir()
    path = write(
        project,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        tomes: {t: {path: ../elsewhere}}
        entry: a
        sigils:
          a: {set: {x: "1"}, next: END}
        """,
    )
    [message] = problems_of(path)
    assert message.startswith("4:19: tome folder '../elsewhere' resolves to ")
    assert "outside the project folder" in message


def test_spell_must_exist_in_tomes(tmp_path: Path) -> None:
    spell = tmp_path / "spells" / "text" / "shout"
    spell.mkdir(parents=True)
    (spell / "spell.json").write_text('{"name": "shout", "entrypoint": "spell.py:shout"}')
    assert spell_names(tmp_path / "spells") == {"shout"}
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        tomes: {t: {path: spells}}
        entry: a
        sigils:
          a: {spell: shuot, output: x, next: END}
        """,
    )
    assert problems_of(path) == ["7:14: spell 'shuot' is in no tome; did you mean 'shout'?"]


def test_exception_class() -> None:
    assert exception_class("TimeoutError") is TimeoutError
    assert exception_class("OracleTimeoutError").__name__ == "OracleTimeoutError"  # type: ignore[union-attr]
    assert exception_class("print") is None


def test_on_error_of_a_named_policy_names_the_policy(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        policies:
          p: {on_error: ghost}
          q:
            on_error: recovr
        default_policy: {on_error: END}
        entry: a
        sigils:
          a: {set: {x: "1"}, policy: p, next: recover}
          recover: {set: {x: "2"}, policy: q, next: END}
        """,
    )
    assert problems_of(path) == [
        "5:17: on_error of policy 'p' names 'ghost', which is not a sigil",
        "7:15: on_error of policy 'q' names 'recovr', which is not a sigil; "
        "did you mean 'recover'?",
        "8:28: on_error of `default_policy` must name a fallback sigil, not END",
    ]


def test_named_policy_falling_back_to_its_own_sigil(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        policies:
          q: {on_error: recover}
        entry: recover
        sigils:
          recover: {set: {x: "2"}, policy: q, next: END}
        """,
    )
    assert problems_of(path) == [
        "8:36: sigil 'recover' uses policy 'q', whose on_error is 'recover' itself; a "
        "sigil cannot be its own fallback — give it another policy",
    ]


def test_a_name_given_twice_in_next_or_entry(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: [a, a]
        sigils:
          a: {set: {x: "1"}, next: [b, b]}
          b: {set: {x: "2"}, next: [END, __end__]}
        """,
    )
    assert problems_of(path) == [
        "4:12: `entry` names 'a' twice; name it once",
        "6:32: sigil 'a' names 'b' twice in `next`; name it once",
        "7:34: sigil 'b' names '__end__' twice in `next`; name it once",
    ]
