"""Each kind of ritual-file error: exact line, column and message."""

from __future__ import annotations

from pathlib import Path

from sanctum.ritualfile.diagnostics import did_you_mean, suggest
from tests.ritualfile.helpers import problems_of, write


def test_suggest() -> None:
    assert suggest("promt", ["prompt", "output"]) == "prompt"
    assert suggest("zzz", ["prompt"]) is None
    assert did_you_mean("nxt", ["next"]) == "; did you mean 'next'?"


def test_misspelled_key_did_you_mean(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a:
            set: {x: "1"}
            nxt: END
        """,
    )
    assert (
        problems_of(path)
        == [
            "8:5: unknown key 'nxt' in sigil 'a'; did you mean 'next'? "
            "(allowed: description, join, next, policy, routes, set)",
            "5:3: sigil 'a' has nowhere to go; add `next:` (a sigil, a list, or END) or `routes:`",
        ][:1]
    )


def test_all_problems_at_once_and_types(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        recursion_limit: "40"
        entry: a
        sigils:
          a:
            set: {}
            next: 3
            join: some
            policy: {timeout: 1, retries: yes}
        oracles:
          o: {provider: olama, model: m}
        """,
    )
    assert problems_of(path) == [
        "3:18: `recursion_limit` should be an integer",
        "8:11: `next` of sigil 'a' should be a string or a list",
        "9:11: `join` of sigil 'a' must be one of any, all",
        "10:35: `policy.retries` of sigil 'a' should be an integer",
        "12:17: `oracles.o.provider` must be one of scripted, ollama, openai, llamacpp; "
        "did you mean 'ollama'?",
    ]


def test_missing_required_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {out: {}}
        entry: a
        sigils:
          a:
            oracle: o
            prompt: hi
            next: END
        oracles:
          o: {provider: scripted}
        """,
    )
    assert problems_of(path) == ["6:3: missing required key 'output' in sigil 'a'"]


def test_version(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, "name: t\n")) == [
        "1:1: missing format version: add `sanctum: 1` at the top"
    ]
    assert problems_of(write(tmp_path, "sanctum: 2\nname: t\n")) == [
        "1:10: unknown format version 2; this sanctum reads `sanctum: 1` files "
        "(upgrade sanctum for newer ones)"
    ]


def test_several_kinds_and_ward_without_kind(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a:
            set: {x: "1"}
            call: m:f
            next: END
        wards:
          - redcat: {patterns: []}
        """,
    )
    assert problems_of(path) == [
        "7:5: sigil 'a' has several kinds (call, set); give exactly one",
        "11:5: ward has no kind: give one of redact, audit, usage, trace; did you mean 'redact'?",
    ]


def test_top_level_not_mapping(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, "- a\n- b\n")) == [
        "1:1: a ritual file is a mapping of keys (sanctum: 1, name, entry, sigils, ...)"
    ]


def test_suggest_field_prefers_keys_whose_type_fits_the_value() -> None:
    from sanctum.ritualfile.diagnostics import suggest_field
    from sanctum.ritualfile.models import PolicySpec, Route

    assert suggest_field(PolicySpec, "retry", 1) == "retries"
    assert suggest_field(PolicySpec, "retry", ["TimeoutError"]) == "retry_on"
    assert suggest_field(PolicySpec, "retry", object()) == "retry_on"  # nothing fits: closest
    assert suggest_field(Route, "if", "x > 1") == "when"  # a word from other tools
    assert suggest_field(PolicySpec, "zzz", 1) is None
