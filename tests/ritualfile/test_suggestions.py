"""Unknown keys: a close match, a known alias, where the key belongs — or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.ritualfile._homes import key_homes, where_it_belongs
from sanctum.ritualfile._suggest import edits, is_close, suggest
from tests.ritualfile.helpers import problems_of, write

_ORACLE = """
sanctum: 1
name: t
oracles:
  local:
    provider: openai
    model: m
    {key}: {value}
aether: {{x: {{}}}}
entry: a
sigils:
  a:
    set: {{x: "1"}}
    next: END
"""


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("nxt", "next", 1), ("rotues", "routes", 1), ("kitten", "sitting", 3), ("", "ab", 2)],
)
def test_edits_counts_insertions_deletions_substitutions_and_swaps(
    a: str, b: str, distance: int
) -> None:
    assert edits(a, b) == distance
    assert edits(b, a) == distance


def test_only_close_words_are_suggested() -> None:
    assert suggest("redact", ["project", "name", "wards"]) is None  # was 'project'
    assert suggest("retry", ["retries", "name"]) == "retries"
    assert suggest("inputz", ["inputs", "name"]) == "inputs"
    assert suggest("ENTRY", ["entry"]) == "entry"
    assert is_close("greting", "greeting")
    assert not is_close("url", "base_url")


@pytest.mark.parametrize("alias", ["url", "endpoint", "api_base"])
def test_an_oracle_address_under_another_tool_s_name_suggests_base_url(
    tmp_path: Path, alias: str
) -> None:
    text = _ORACLE.format(key=alias, value="http://127.0.0.1:8080/v1")
    problems = problems_of(write(tmp_path, text))
    assert len(problems) == 1, problems  # no second line for the missing base_url
    assert problems[0].startswith(
        f"7:5: unknown key {alias!r} in `oracles.local`; did you mean 'base_url'? (allowed: "
    )


def test_model_name_suggests_model(tmp_path: Path) -> None:
    text = _ORACLE.replace("    model: m\n", "    base_url: http://h/v1\n")
    text = text.format(key="model_name", value="m")
    (problem,) = problems_of(write(tmp_path, text))
    assert "unknown key 'model_name' in `oracles.local`; did you mean 'model'?" in problem


def test_a_sampling_option_beside_the_oracle_is_sent_under_options(tmp_path: Path) -> None:
    text = _ORACLE.format(key="temperature", value="0.2")
    text = text.replace("    model: m\n", "    model: m\n    base_url: http://h/v1\n")
    (problem,) = problems_of(write(tmp_path, text))
    assert "unknown key 'temperature' in `oracles.local`; `temperature` is a model option: " in (
        problem
    )
    assert "write it under `options:`" in problem


def test_a_ward_key_at_the_top_level_says_where_it_belongs(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        redact:
          patterns: ["sk-[a-z]+"]
        aether: {x: {}}
        entry: a
        sigils:
          a:
            set: {x: "1"}
            next: END
        """,
    )
    (problem,) = problems_of(path)
    assert problem.startswith(
        "3:1: unknown key 'redact' at the top level; `redact` belongs elsewhere: "
        "wards[].redact (allowed: "
    )
    assert "project" not in problem.split("(allowed:")[0]


def test_a_ward_key_inside_a_sigil_says_where_it_belongs(tmp_path: Path) -> None:
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
            redact: {patterns: ["x"]}
            next: END
        """,
    )
    (problem,) = problems_of(path)
    assert "unknown key 'redact' in sigil 'a'; `redact` belongs elsewhere: wards[].redact" in (
        problem
    )


def test_a_key_that_is_nowhere_and_like_nothing_gets_no_hint(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        zebra: 1
        aether: {x: {}}
        entry: a
        sigils:
          a:
            set: {x: "1"}
            next: END
        """,
    )
    (problem,) = problems_of(path)
    assert problem.startswith("3:1: unknown key 'zebra' at the top level (allowed: ")


def test_key_homes_name_every_place_shallowest_first() -> None:
    assert key_homes("redact") == ["wards[].redact"]
    assert key_homes("base_url") == ["oracles.<name>.base_url"]
    retries = key_homes("retries")
    assert retries[0] == "default_policy.retries"
    assert "policies.<name>.retries" in retries
    assert key_homes("zebra") == []
    assert where_it_belongs("zebra") == ""
