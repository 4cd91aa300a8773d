"""Kind keys checked before the model, and carrying on past broken entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ritualfile.helpers import problems_of, write

KINDS = "call, oracle, agent, spell, interrupt, set, circle, scatter"
COMMON = "description, join, next, policy, routes"

HEAD = """
sanctum: 1
name: t
aether: {x: {}, said: {}, messages: {reducer: append}}
oracles: {o: {provider: scripted}}
entry: a
sigils:
  a:
"""


@pytest.mark.parametrize(
    ("body", "typo", "meant"),
    [
        ('    sett: {x: "1"}\n    next: END\n', "sett", "set"),
        ("    orcale: o\n    prompt: hi\n    output: said\n    next: END\n", "orcale", "oracle"),
        ('    intterupt: "Go?"\n    until: x\n    next: END\n', "intterupt", "interrupt"),
        (
            "    agnet: {oracle: o}\n    prompt: hi\n    output: said\n    next: END\n",
            "agnet",
            "agent",
        ),
    ],
)
def test_misspelled_kind_key_is_one_problem(
    tmp_path: Path, body: str, typo: str, meant: str
) -> None:
    path = write(tmp_path, HEAD + body)
    assert problems_of(path) == [
        f"8:5: unknown key {typo!r} in sigil 'a'; did you mean {meant!r}? "
        f"(kind keys: {KINDS}; other keys: {COMMON})"
    ]


def test_misspelled_kind_still_checks_the_sigil(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD
        + "    orcale: oo\n    prompt: 'hi {{ nme }}'\n    output: said\n    bogus: 1\n"
        + "    next: END\n",
    )
    assert problems_of(path) == [
        f"8:5: unknown key 'orcale' in sigil 'a'; did you mean 'oracle'? "
        f"(kind keys: {KINDS}; other keys: {COMMON})",
        "8:13: oracle 'oo' does not exist; did you mean 'o'? If not, define it under `oracles:`",
        "9:13: sigil 'a': 'nme' is not a conduit or input; declare it under `aether:` or "
        "`inputs:` (to write the text nme, quote it inside the expression: \"'nme'\")",
        "11:5: unknown key 'bogus' in sigil 'a' (allowed: description, join, messages, next, "
        "oracle, output, policy, prompt, routes, stream, system)",
    ]


def test_companions_without_a_kind_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "    prompt: hi\n    output: said\n    next: END\n")
    assert problems_of(path) == [
        "8:5: sigil 'a' has no kind key, but `prompt`, `output` belong to an oracle or an "
        "agent sigil; add its kind key (e.g. `oracle:`)"
    ]


def test_routing_sigil_unknown_key_lists_the_kind_keys(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "    nxet: END\n    colour: red\n")
    assert problems_of(path) == [
        f"8:5: unknown key 'nxet' in sigil 'a'; did you mean 'next'? (allowed: {COMMON}, "
        f"or one kind key: {KINDS})",
        f"9:5: unknown key 'colour' in sigil 'a' (allowed: {COMMON}, or one kind key: {KINDS})",
    ]


def test_companion_key_on_another_kind(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + '    set: {x: "1"}\n    promt: hi\n    next: END\n')
    assert problems_of(path) == [
        "9:5: unknown key 'promt' in sigil 'a'; did you mean 'prompt'? (it belongs to oracle "
        "and agent sigils) (allowed: description, join, next, policy, routes, set)"
    ]


def test_several_kinds_do_not_hide_other_problems(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a:
            call: m:f
            set: {x: "1"}
            next: b
          b:
            set: {x: "2"}
            next: bardd
          bard:
            set: {z: "2"}
            next: END
        """,
    )
    assert problems_of(path) == [
        "8:5: sigil 'a' has several kinds (call, set); give exactly one",
        "12:11: sigil 'b' points to 'bardd', which is not a sigil; did you mean 'bard'?",
        "14:11: sigil 'bard' sets 'z', which is not a conduit; declare it under `aether:`",
    ]


def test_broken_entries_are_set_aside_but_stay_known(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {reducer: 3}}
        oracles: {o: {provider: scripted, model: [1]}}
        entry: a
        sigils:
          a: {oracle: o, prompt: "{{ x }}", output: x, next: b}
          b: {set: {x: "1"}, next: [c], join: maybe}
          c: {set: {x: "1"}, next: ENDD}
        """,
    )
    assert problems_of(path) == [
        "3:23: `aether.x.reducer` should be a string",
        "4:42: `oracles.o.model` should be a string",
        "8:39: `join` of sigil 'b' must be one of any, all",
        "9:28: sigil 'c' points to 'ENDD', which is not a sigil; did you mean 'END'?",
    ]


def test_sigils_and_wards_that_are_no_mapping(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: b
        sigils:
          a: 3
          b: {set: {x: "1"}, next: a}
          e:
          s: {scatter: {over: "[1]", into: x, sigil: 4}, next: END}
        wards: [3]
        """,
    )
    assert problems_of(path) == [
        "6:3: `sigils.a` should be a mapping",
        "8:3: `sigils.e` should be a mapping, not empty",
        "9:39: `scatter.sigil` of sigil 's' should be a mapping",
        "10:9: `wards.0` should be a mapping",
    ]


HEADER = """
sanctum: 1
name: t
entry: a
sigils:
  a: {next: END}
"""


@pytest.mark.parametrize(
    ("oracles", "expected"),
    [
        (
            "{bard: {model: m}}",
            "6:11: missing required key 'provider' in `oracles.bard` "
            "(one of scripted, ollama, openai, llamacpp)",
        ),
        (
            "{bard: {}}",
            "6:11: missing required key 'provider' in `oracles.bard` "
            "(one of scripted, ollama, openai, llamacpp)",
        ),
        (
            "{bard: {provder: ollama, model: m}}",
            "6:18: unknown key 'provder' in `oracles.bard`; did you mean 'provider'?",
        ),
    ],
)
def test_oracle_without_provider_is_positioned(tmp_path: Path, oracles: str, expected: str) -> None:
    path = write(tmp_path, HEADER + f"oracles: {oracles}\n")
    assert problems_of(path) == [expected]


def test_a_misspelled_key_is_matched_by_its_value_type(tmp_path: Path) -> None:
    # `retry_on` looks closer to `retry`, but only `retries` takes a number; and the
    # key is set aside under that name, so no second, bogus problem follows
    path = write(tmp_path, HEADER + "policies: {p: {retry: 1}}\n")
    assert problems_of(path) == [
        "6:16: unknown key 'retry' in `policies.p`; did you mean 'retries'? "
        "(allowed: backoff, on_error, retries, retry_on, timeout)"
    ]


def test_a_route_with_if_is_one_problem(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {default: 1}}
        entry: a
        sigils:
          a:
            routes:
              - if: "x > 0"
                to: END
              - to: END
        """,
    )
    assert problems_of(path) == [
        "8:9: unknown key 'if' in sigil 'a' (routes.0); did you mean 'when'? (allowed: to, when)"
    ]
