"""The repair layer: the three checks, corrections, and the held corpus of model fumbles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sanctum.grimoire import MALFORMED_KEY, RepairOutcome, Tome, repair_spell_call, spell
from sanctum.oracle.base import SpellCall
from sanctum.oracle.robust import parse_spell_blocks
from tests.grimoire.spells import corpus_tome

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.json"))


def test_the_corpus_is_large_and_covers_every_kind() -> None:
    kinds = {json.loads(p.read_text())["kind"] for p in CORPUS}
    assert len(CORPUS) >= 40
    assert kinds >= {
        "fences",
        "prose",
        "single quotes",
        "trailing commas",
        "missing braces",
        "python literals",
        "tool_call tags",
        "double-encoded arguments",
        "two calls",
        "unknown names",
        "missing arguments",
        "extra arguments",
    }


def _calls_of(case: dict[str, Any]) -> tuple[str | None, list[SpellCall]]:
    if case["source"] == "text":
        prose, calls = parse_spell_blocks(case["input"])
        return prose, calls
    given = case["input"]
    return None, [SpellCall(given["spell"], dict(given["arguments"]), "call_1")]


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_case_reaches_its_exact_outcome(path: Path) -> None:
    case = json.loads(path.read_text())
    expected = case["expected"]
    prose, calls = _calls_of(case)
    if "prose" in expected:
        assert prose == expected["prose"]
    outcomes = [repair_spell_call(call, corpus_tome()) for call in calls]
    assert len(outcomes) == len(expected["outcomes"])
    for outcome, want in zip(outcomes, expected["outcomes"], strict=True):
        if "cast" in want:
            assert outcome.correction is None, outcome.correction
            assert outcome.call is not None
            assert outcome.call.spell == want["cast"]["spell"]
            assert outcome.call.arguments == want["cast"]["arguments"]
            assert (outcome.repaired is not None) is want["repaired"], outcome.repaired
        else:
            assert outcome.call is None
            assert outcome.correction is not None
            for fragment in want["correction_contains"]:
                assert fragment in outcome.correction
            assert outcome.raw is not None


def test_every_castable_corpus_call_really_casts() -> None:
    tome = corpus_tome()
    for path in CORPUS:
        case = json.loads(path.read_text())
        _prose, calls = _calls_of(case)
        for call in calls:
            outcome = repair_spell_call(call, tome)
            if outcome.call is not None:
                spell_ = tome.get(outcome.call.spell)
                spell_.fn(**outcome.call.arguments)  # raises if the arguments do not fit


# --------------------------------------------------------------------------- the checks


def test_a_valid_call_passes_untouched() -> None:
    call = SpellCall("add", {"a": 1, "b": 2}, "c1")
    outcome = repair_spell_call(call, corpus_tome())
    assert outcome == RepairOutcome(call=SpellCall("add", {"a": 1, "b": 2}, "c1"))
    assert outcome.ok
    assert outcome.repaired is None
    assert outcome.raw is None


def test_malformed_json_is_recovered_locally_and_the_raw_text_kept() -> None:
    raw = "```json\n{'a': 1, 'b': 2}\n```"
    outcome = repair_spell_call(SpellCall("add", {MALFORMED_KEY: raw}, "c1"), corpus_tome())
    assert outcome.call == SpellCall("add", {"a": 1, "b": 2}, "c1")
    assert outcome.raw == raw
    assert outcome.repaired is not None
    assert "fenced json block" in outcome.repaired


def test_a_recovered_full_call_object_replaces_name_and_arguments() -> None:
    raw = '{"spell": "get_weather", "arguments": {"city": "Paris"}'
    outcome = repair_spell_call(SpellCall("add", {MALFORMED_KEY: raw}), corpus_tome())
    assert outcome.call == SpellCall("get_weather", {"city": "Paris"})
    assert outcome.repaired is not None
    assert "full call" in outcome.repaired


def test_a_spell_whose_argument_is_called_spell_keeps_its_arguments() -> None:
    @spell
    def cast(spell: str, power: int = 1) -> str:
        """Cast by name."""
        return spell * power

    outcome = repair_spell_call(
        SpellCall("cast", {MALFORMED_KEY: "{'spell': 'fireball'}"}), Tome([cast])
    )
    assert outcome.call == SpellCall("cast", {"spell": "fireball"})


def test_unrecoverable_text_becomes_a_correction_with_the_original_preserved() -> None:
    outcome = repair_spell_call(SpellCall("add", {MALFORMED_KEY: "no json"}), corpus_tome())
    assert outcome.call is None
    assert outcome.raw == "no json"
    assert outcome.correction is not None
    assert "not valid JSON" in outcome.correction
    assert '"arguments": {"a": 0, "b": 0}' in outcome.correction


def test_malformed_json_is_checked_before_the_name() -> None:
    # An unreadable call to an unknown spell is reported as unreadable (check 1 first).
    outcome = repair_spell_call(SpellCall("nope", {MALFORMED_KEY: "???"}), corpus_tome())
    assert outcome.correction is not None
    assert "could not be read" in outcome.correction


def test_unknown_spell_lists_the_available_spells_in_order() -> None:
    outcome = repair_spell_call(SpellCall("ad", {"a": 1, "b": 2}), corpus_tome())
    assert outcome.correction == (
        'There is no spell named "ad". Did you mean "add"? The available spells are: '
        "get_weather, add, search_notes, set_alarm, get_time. Cast one of them by its exact "
        "name, or answer without casting a spell."
    )
    assert json.loads(outcome.raw or "") == {"spell": "ad", "arguments": {"a": 1, "b": 2}}


def test_without_a_tome_every_call_is_corrected() -> None:
    for tome in (None, Tome()):
        outcome = repair_spell_call(SpellCall("add", {"a": 1}), tome)
        assert outcome.correction is not None
        assert "no spells are available" in outcome.correction


def test_argument_problems_are_all_named_in_one_correction() -> None:
    outcome = repair_spell_call(
        SpellCall("search_notes", {"limit": "many", "sort": "date"}), corpus_tome()
    )
    assert outcome.correction is not None
    assert outcome.correction.splitlines()[1:4] == [
        '- missing required argument "query" (string)',
        '- unexpected argument "sort"',
        '- argument "limit" must be an integer, got "many"',
    ]
    assert "search_notes takes these arguments: query (string, required)" in outcome.correction


def test_schemas_without_properties_accept_any_arguments() -> None:
    loose = spell(lambda **kw: kw, name="loose")
    loose.parameters = {"type": "object"}
    outcome = repair_spell_call(SpellCall("loose", {"x": 1}), Tome([loose]))
    assert outcome.call == SpellCall("loose", {"x": 1})


def test_additional_properties_true_allows_extra_keys() -> None:
    open_spell = spell(lambda **kw: kw, name="open")
    open_spell.parameters = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": True,
    }
    outcome = repair_spell_call(SpellCall("open", {"a": 1, "b": 2}), Tome([open_spell]))
    assert outcome.call == SpellCall("open", {"a": 1, "b": 2})


def test_arguments_that_are_a_plain_string_are_treated_as_malformed() -> None:
    call = SpellCall("add", {})
    call.arguments = '{"a": 1, "b": 2}'  # type: ignore[assignment]
    outcome = repair_spell_call(call, corpus_tome())
    assert outcome.call == SpellCall("add", {"a": 1, "b": 2})
    assert outcome.repaired is not None


def test_repair_outcome_needs_exactly_one_of_call_and_correction() -> None:
    with pytest.raises(ValueError):
        RepairOutcome()
    with pytest.raises(ValueError):
        RepairOutcome(call=SpellCall("a"), correction="no")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), [1.0, float("nan")]])
def test_non_finite_numbers_get_a_correction_not_a_failed_run(bad: object) -> None:
    from sanctum.grimoire import Tome, spell
    from sanctum.grimoire.repair import repair_spell_call
    from sanctum.oracle.base import SpellCall

    @spell
    def scale(x: object) -> str:
        """Scale a value."""
        return "ok"

    outcome = repair_spell_call(SpellCall("scale", {"x": bad}), Tome([scale]))
    assert outcome.call is None
    assert outcome.correction is not None
    assert '"x' in outcome.correction
    assert "finite number" in outcome.correction


def _correction(arguments: Any, name: str = "add") -> str:
    outcome = repair_spell_call(SpellCall(name, arguments), corpus_tome())
    assert outcome.correction is not None, outcome
    return outcome.correction


def test_array_items_and_nested_values_follow_the_whole_schema() -> None:
    correction = _correction({"query": "x", "tags": ["ok", 1]}, "search_notes")
    assert 'argument "tags[1]"' in correction
    assert "is not of type 'string'" in correction
    fine = repair_spell_call(
        SpellCall("search_notes", {"query": "x", "tags": ["a"]}), corpus_tome()
    )
    assert fine.ok


def test_unreadable_arguments_say_what_is_wrong() -> None:
    assert "cut off" in _correction({MALFORMED_KEY: '{"a": 1, "b": "2'})
    assert "a JSON array" in _correction({MALFORMED_KEY: "[1, 2]"})
    assert "several JSON objects" in _correction({MALFORMED_KEY: '{"a":1,"b":2}{"a":3,"b":4}'})
    assert "not valid JSON" in _correction({MALFORMED_KEY: "a is one"})


def test_empty_or_null_wire_arguments_mean_no_arguments() -> None:
    for text in ("", "null", "  "):
        outcome = repair_spell_call(SpellCall("get_time", {MALFORMED_KEY: text}), corpus_tome())
        assert outcome.call == SpellCall("get_time", {})


def test_odd_python_arguments_never_raise() -> None:
    odd: dict[Any, Any] = {1: "x", "a": 1, "b": 2}
    assert "unexpected argument" in _correction(odd)
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    outcome = repair_spell_call(SpellCall("search_notes", {"query": deep}), corpus_tome())
    assert outcome.correction is not None
    assert outcome.raw


def test_a_value_correction_never_repeats_the_rejected_value() -> None:
    outcome = repair_spell_call(
        SpellCall("get_weather", {"city": "Paris", "unit": "kelvin"}), corpus_tome()
    )
    assert outcome.correction is not None
    example = outcome.correction.rsplit("for example:", 1)[1]
    assert "kelvin" not in example
    assert '"city": "Paris"' in example

    @spell
    def pick(n: int, label: str) -> str:
        """Pick one."""
        return label * n

    tome = Tome([pick])
    tome.get("pick").parameters["properties"]["n"]["minimum"] = 2
    corrected = repair_spell_call(SpellCall("pick", {"n": -5, "label": "x"}), tome).correction
    assert corrected is not None
    assert corrected.rsplit("for example:", 1)[1].strip() == '{"n": 2, "label": "x"}'


def test_an_unreadable_call_is_answered_with_a_real_example() -> None:
    outcome = repair_spell_call(SpellCall("", {MALFORMED_KEY: "The spell is:\n<"}), corpus_tome())
    assert outcome.correction is not None
    assert "NAME" not in outcome.correction
    assert 'like {"spell": "get_weather", "arguments": {"city": "..."}}' in outcome.correction
