"""File-level checks: names, references, routes, paths, expressions in context."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.ritualfile.checks import exception_class, spell_names
from tests.ritualfile.helpers import problems_of, write


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
        "'category'? If not, declare it under `aether:`",
        "14:11: sigil 'finish' points to 'ENDD', which is not a sigil; did you mean 'END'?",
        "15:24: on_error of sigil 'finish' names 'clasify', which is not a sigil; "
        "did you mean 'classify'?",
        "15:44: unknown exception 'TimeoutErr'; did you mean 'TimeoutError'? If not, name a "
        "builtin exception or one from sanctum.errors",
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


@pytest.mark.parametrize(
    ("manifest", "why"),
    [("{bad json", "not valid JSON"), ("", "empty"), ("[]", "object")],
)
def test_a_broken_spell_manifest_is_named_not_hidden(
    tmp_path: Path, manifest: str, why: str
) -> None:
    spell = tmp_path / "spells" / "text" / "shout"
    spell.mkdir(parents=True)
    (spell / "spell.json").write_text(manifest)
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        tomes: {t: {path: spells}}
        entry: a
        sigils:
          a: {spell: shout, output: x, next: END}
        """,
    )
    (problem,) = problems_of(path)  # one problem: no "is in no tome" after it
    assert problem.startswith("4:19: tome 't': ")
    assert "spell.json" in problem
    assert why in problem


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


HEADER = """
sanctum: 1
name: t
entry: a
sigils:
  a: {next: END}
"""


def test_oracle_timeout_and_base_url_are_checked(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + """
        oracles:
          a: {provider: ollama, model: m, timeout: 0, base_url: "ftp://x"}
          b: {provider: openai, model: m, timeout: -1, base_url: "not a url"}
          c: {provider: openai, model: m, base_url: "http://h:99999/v1"}
          d: {provider: ollama, model: m, base_url: "127.0.0.1:11434", timeout: 2.5}
          e: {provider: openai, model: m, base_url: "https://[::1]:8080/v1"}
        """.replace("\n        ", "\n"),
    )
    url = "must be an http:// or https:// URL with a host, e.g. 'http://127.0.0.1:11434'"
    assert problems_of(path) == [
        "8:44: `oracles.a.timeout` must be a number of seconds greater than 0; got 0",
        f"8:57: `oracles.a.base_url` {url}; got 'ftp://x'",
        "9:44: `oracles.b.timeout` must be a number of seconds greater than 0; got -1",
        f"9:58: `oracles.b.base_url` {url}; got 'not a url'",
        f"10:45: `oracles.c.base_url` {url}; got 'http://h:99999/v1'",
    ]


def test_non_finite_numbers_are_refused_everywhere(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {out: {default: .nan}, big: {}}
        policies: {p: {retries: 1, backoff: {base: .inf, cap: .inf}}}
        entry: a
        sigils:
          a: {set: {big: -.inf}, next: END, policy: p}
        """,
    )
    assert [p.split(": ", 1)[0] + ": " + p.split(": ", 1)[1][:8] for p in problems_of(path)] == [
        "3:25: `.nan` i",
        "4:44: `.inf` i",
        "4:55: `.inf` i",
        "7:18: `-.inf` ",
    ]


def test_conduit_defaults_must_suit_the_reducer_and_type(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + """
        aether:
          a1: {reducer: append, default: 5}
          a2: {reducer: add, default: "x"}
          a3: {reducer: merge_dict, default: []}
          a4: {type: integer, default: "x"}
          a5: {reducer: append, type: string}
          a6: {reducer: add, default: true}
          fine1: {reducer: append, default: []}
          fine2: {reducer: add, default: 0.5}
          fine3: {reducer: merge_dict, type: object, default: {}}
          fine4: {type: string, default: null}
        """.replace("\n        ", "\n"),
    )
    combines = "combines each write with it"
    assert problems_of(path) == [
        f"8:34: default of conduit 'a1' must be a list: its reducer append {combines} (got int 5)",
        f"9:31: default of conduit 'a2' must be a number: its reducer add {combines} (got str 'x')",
        f"10:38: default of conduit 'a3' must be a mapping: its reducer merge_dict {combines} "
        "(got list [])",
        "11:32: default of conduit 'a4' must be of type integer",
        "12:31: conduit 'a5' has reducer append, which needs type array, not string",
        f"13:31: default of conduit 'a6' must be a number: its reducer add {combines} "
        "(got bool True)",
    ]


def test_inputs_enum_and_names_shared_with_conduits(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + """
        inputs:
          topic: {}
          mood: {enum: []}
          level: {type: integer, enum: [1, "2"]}
        aether:
          topic: {}
        """.replace("\n        ", "\n"),
    )
    assert problems_of(path) == [
        "9:16: `enum` of input 'mood' is empty, so no value could be given; list the allowed "
        "values or remove `enum`",
        "10:36: enum value str '2' of input 'level' is not of type integer",
        "12:3: 'topic' is declared under both `inputs:` and `aether:`; an input is a conduit "
        "already — remove it from one of them",
    ]


def test_sigil_names_say_the_real_rule_and_null_keys_are_refused_like_booleans(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether:
          null: {}
          true: {}
        entry: a
        sigils:
          a: {next: ["1"]}
          "1": {next: END}
        """,
    )
    assert problems_of(path) == [
        '4:3: `null` is read as null (no name) by YAML; quote it where a name is expected: "null"',
        "5:3: `true` is read as a boolean by YAML 1.1 tools; quote it where a name is "
        'expected: "true"',
        "9:3: '1' cannot name a sigil: a sigil name starts with an ASCII letter or _, "
        "followed by ASCII letters, digits, _, - and . (e.g. `step_1`)",
    ]


def test_project_folder_must_exist_and_hold_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "project: missing_dir\n")
    (message,) = problems_of(path)
    assert message.startswith("6:10: project folder 'missing_dir' does not exist (")
    (tmp_path / "elsewhere").mkdir()
    path = write(tmp_path, HEADER + "project: elsewhere\n")
    (message,) = problems_of(path)
    assert message.startswith("6:10: project folder 'elsewhere' (")
    assert message.endswith(
        "does not hold this ritual file; name a folder above it, e.g. `project: ..`"
    )


def test_scatter_pick_must_be_a_key_of_the_result(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {nums: {default: [1]}, out: {}}
        entry: a
        sigils:
          a:
            scatter: {over: nums, into: out, pick: reslt, sigil: {set: {result: "item"}}}
            next: END
        """,
    )
    assert problems_of(path) == [
        "7:44: scatter of sigil 'a' picks 'reslt', a key its sigil's result never has; "
        "did you mean 'result'? (its keys: result)"
    ]


def test_a_did_you_mean_and_the_advice_read_as_two_sentences(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {said: {}}
        oracles:
          tiny: {provider: scripted, responses: ["hi"]}
        entry: ask
        sigils:
          ask: {oracle: tny, prompt: "hi", output: said, next: END}
        """,
    )
    assert problems_of(path) == [
        "8:17: oracle 'tny' does not exist; did you mean 'tiny'? If not, define it under `oracles:`"
    ]
