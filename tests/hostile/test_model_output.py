"""Hostile model output: extract_json and parse_spell_blocks on pathological text.

Both must finish in time linear in their input and never raise. The sizes below make
any quadratic path run for minutes, so the per-test timeout (a hang guard, not a
timing assertion) catches a regression.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sanctum.grimoire import repair_spell_call
from sanctum.oracle.base import SpellCall
from sanctum.oracle.robust import (
    MAX_MODEL_OUTPUT_CHARS,
    extract_json,
    extract_json_with_mend,
    parse_spell_blocks,
)
from tests.grimoire.spells import corpus_tome

MEGABYTE = 1024 * 1024

PATHOLOGICAL = {
    "nested_braces": "{" * 100_000,
    "closed_nested_braces": "{" * 100_000 + "}" * 100_000,
    "nested_objects": '{"a":' * 100_000,
    "nested_single_quoted": "{'a': " * 100_000,
    "nested_brackets": "[" * 100_000,
    "alternating_closers": "{" * 50_000 + "]" * 50_000,
    "mixed_nesting": '{"a":[' * 50_000,
    "megabyte_of_double_quotes": '"' * MEGABYTE,
    "megabyte_of_single_quotes": "'" * MEGABYTE,
    "quotes_in_braces": "{" + '"' * MEGABYTE + "}",
    "backslashes": '{"a": "' + "\\" * MEGABYTE,
    "unterminated_fences": "```json\n" * 100_000,
    "unterminated_fence_with_braces": "```json\n" + "{" * 100_000,
    "unclosed_spell_blocks": "<spell_call>" * 100_000,
    "unclosed_tool_call_tags": "<tool_call>{" * 50_000,
    "closing_tags_only": "</spell_call>" * 100_000,
    "many_small_objects": '{"spell": "add"} ' * 50_000,
    "commas": "{" + "," * MEGABYTE,
    "colons": '{"a"' + ":" * MEGABYTE,
    "words": "{" + "word " * 200_000,
    "slashes": "{" + "/" * MEGABYTE,
    "nul_and_control": "{\x00\x01\x02" * 100_000,
    "surrogates_and_emoji": '{"a": "\ud800\U0001f600' * 50_000,
    "over_the_size_limit": "{" * (MAX_MODEL_OUTPUT_CHARS + 1),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_extract_json_survives_pathological_text(name: str) -> None:
    text = PATHOLOGICAL[name]
    result = extract_json(text)
    assert result is None or isinstance(result, dict)
    value, how = extract_json_with_mend(text)
    assert value == result
    assert isinstance(how, str)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_parse_spell_blocks_survives_pathological_text(name: str) -> None:
    prose, calls = parse_spell_blocks(PATHOLOGICAL[name])
    assert isinstance(prose, str)
    assert isinstance(calls, list)
    assert len(calls) <= 64
    assert all(isinstance(c, SpellCall) and isinstance(c.arguments, dict) for c in calls)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_the_repair_layer_survives_pathological_arguments(name: str) -> None:
    call = SpellCall("add", {"__malformed_json__": PATHOLOGICAL[name]})
    outcome = repair_spell_call(call, corpus_tome())
    assert (outcome.call is None) != (outcome.correction is None)


def test_the_expected_answers_on_simple_pathologies() -> None:
    assert extract_json("{" * 100_000) is None
    assert extract_json('"' * MEGABYTE) is None
    assert extract_json("```json\n" * 1000) is None
    assert extract_json("```json\n" + '{"a": 1}') == {"a": 1}  # unterminated fence
    # each unclosed block ends where the next opens: three empty (unreadable) calls
    assert parse_spell_blocks("<spell_call>" * 3) == (
        "",
        [SpellCall("", {"__malformed_json__": ""})] * 3,
    )


def test_a_deeply_nested_but_valid_object_is_refused_not_crashed() -> None:
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    assert extract_json(deep) is None or isinstance(extract_json(deep), dict)
    shallow = '{"a":' * 50 + "1" + "}" * 50
    value = extract_json(shallow)
    assert value is not None
    for _ in range(49):
        value = value["a"]
    assert value == {"a": 1}


JSONISH = st.text(alphabet=st.sampled_from(list("{}[]\"':,\\ \ntrueTNnl01aé`<>/_spelcalx")))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), JSONISH))
def test_extract_json_returns_a_dict_or_none_for_any_string(text: str) -> None:
    result = extract_json(text)
    assert result is None or isinstance(result, dict)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), JSONISH))
def test_parse_spell_blocks_returns_prose_and_a_list_of_calls_for_any_string(text: str) -> None:
    prose, calls = parse_spell_blocks(text)
    assert isinstance(prose, str)
    assert isinstance(calls, list)
    for call in calls:
        assert isinstance(call, SpellCall)
        assert isinstance(call.spell, str)
        assert isinstance(call.arguments, dict)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=10,
    ),
    st.text(max_size=40),
    st.text(max_size=40),
)
def test_any_json_object_survives_prose_and_a_fence(value: object, before: str, after: str) -> None:
    obj = {"spell": "add", "arguments": {"payload": value}}
    text = f"{before.replace('`', '')}\n```json\n{json.dumps(obj)}\n```\n{after.replace('`', '')}"
    assert extract_json(text) == obj


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), JSONISH), st.sampled_from(["add", "nope", "", "get_time"]))
def test_the_repair_layer_always_decides(text: str, name: str) -> None:
    outcome = repair_spell_call(SpellCall(name, {"__malformed_json__": text}), corpus_tome())
    assert (outcome.call is None) != (outcome.correction is None)
