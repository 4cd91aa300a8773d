from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.api import run_test_folder
from sanctum.errors import RitualFileError
from sanctum.ritualfile.testcases import load_test_file
from tests.ritualfile.helpers import MINIMAL, write


def test_runner_reports_pass_and_fail(tmp_path: Path) -> None:
    write(tmp_path, MINIMAL)
    (tmp_path / "ritual.test.yaml").write_text(
        "ritual: ritual.yaml\n"
        "cases:\n"
        "  - name: good\n"
        "    expect: {aether: {x: 1}}\n"
        "  - name: bad\n"
        "    expect: {status: interrupted, aether: {x: 2}}\n"
    )
    good, bad = run_test_folder(tmp_path)
    assert (good.name, good.passed, good.status) == ("good", True, "done")
    assert bad.passed is False
    assert bad.message == "expected status interrupted, got done; aether['x'] is 1, expected 2"


def test_bad_test_file_is_a_failed_result(tmp_path: Path) -> None:
    path = tmp_path / "x.test.yaml"
    path.write_text("ritual: r.yaml\ncases:\n  - nam: x\n")
    [result] = run_test_folder(path)
    assert result.passed is False
    assert "3:5: unknown key 'nam'" in result.message


def _test_file_problems(path: Path) -> list[str]:
    with pytest.raises(RitualFileError) as caught:
        load_test_file(path, env={})
    return [f"{p.line}:{p.column}: {p.message}" for p in caught.value.problems]


RITUAL = """
sanctum: 1
name: greet
inputs:
  name: {type: string}
  mood: {type: string, default: calm}
aether: {greeting: {}}
oracles: {bard: {provider: scripted, responses: ["hi"]}}
entry: a
sigils:
  a: {oracle: bard, prompt: "Greet {{ name }}", output: greeting, next: END}
"""


def test_missing_ritual_file_is_reported_with_a_did_you_mean(tmp_path: Path) -> None:
    write(tmp_path, RITUAL, "greet.yaml")
    path = tmp_path / "greet.test.yaml"
    path.write_text("ritual: gret.yaml\ncases: []\n")
    assert _test_file_problems(path) == [
        f"1:9: ritual file 'gret.yaml' does not exist (looked for {tmp_path.resolve()}/gret.yaml; "
        "the path is relative to this test file); did you mean 'greet.yaml'?"
    ]
    [result] = run_test_folder(path)
    assert result.passed is False
    assert "1:9: ritual file 'gret.yaml' does not exist" in result.message


def test_case_names_are_checked_against_the_ritual(tmp_path: Path) -> None:
    write(tmp_path, RITUAL, "greet.yaml")
    path = tmp_path / "greet.test.yaml"
    path.write_text(
        "ritual: greet.yaml\n"
        "cases:\n"
        "  - name: one\n"
        "    inputs: {nmae: Ada, qq: hi}\n"
        "    responses: {brd: [x]}\n"
        "    resume: [{greting: x}]\n"
        "    expect: {aether: {greetin: x, mood: calm}}\n"
        "  - name: two\n"
        "    inputs: {name: Ada}\n"
    )
    assert _test_file_problems(path) == [
        "4:5: case 'one' does not give the required input(s) 'name' of ritual 'greet'; "
        "add them under `inputs:`",
        "4:14: case 'one': ritual 'greet' declares no input 'nmae'; did you mean 'name'? "
        "(declared inputs: mood, name)",
        "4:25: case 'one': ritual 'greet' declares no input 'qq' (declared inputs: mood, name)",
        "5:17: case 'one': ritual 'greet' has no oracle 'brd' to script; did you mean 'bard'?",
        "6:15: case 'one': ritual 'greet' has no conduit 'greting' to resume with; "
        "did you mean 'greeting'?",
        "7:23: case 'one': ritual 'greet' has no conduit 'greetin'; did you mean 'greeting'?",
    ]


def test_ritual_with_problems_is_listed_after_the_test_file(tmp_path: Path) -> None:
    ritual = write(tmp_path, RITUAL.replace("next: END", "next: ENDD"), "greet.yaml")
    path = tmp_path / "greet.test.yaml"
    path.write_text("ritual: greet.yaml\ncases: []\n")
    with pytest.raises(RitualFileError) as caught:
        load_test_file(path, env={})
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:1:9: ritual file 'greet.yaml' has problems (see below)",
        f"{ritual}:10:73: sigil 'a' points to 'ENDD', which is not a sigil; did you mean 'END'?",
    ]


def test_sound_test_file_loads(tmp_path: Path) -> None:
    write(tmp_path, RITUAL, "greet.yaml")
    path = tmp_path / "greet.test.yaml"
    path.write_text(
        "ritual: greet.yaml\ncases:\n  - name: one\n    inputs: {name: Ada}\n"
        "    expect: {aether: {greeting: hi, mood: calm}}\n"
    )
    assert [c.name for c in load_test_file(path, env={}).cases] == ["one"]
    [result] = run_test_folder(path)
    assert result.passed, result.message
    assert result.aether == {"name": "Ada", "mood": "calm", "greeting": "hi"}


def test_empty_test_file_speaks_of_a_test_file(tmp_path: Path) -> None:
    path = tmp_path / "x.test.yaml"
    path.write_text("# nothing yet\n")
    assert _test_file_problems(path) == [
        "1:1: the test file is empty; write `ritual: NAME.yaml` and a list of `cases:`"
    ]


def test_an_empty_cases_list_is_a_failed_result_that_says_so(tmp_path: Path) -> None:
    write(tmp_path, MINIMAL)
    path = tmp_path / "ritual.test.yaml"
    path.write_text("ritual: ritual.yaml\ncases: []\n")
    load_test_file(path)  # well formed: `sanctum validate` accepts it
    (result,) = run_test_folder(path)
    assert (result.passed, result.status) == (False, "failed")
    assert result.message == (
        f"{path}:2:8: the `cases` list is empty, so nothing was tested; add a case "
        "(e.g. `- name: greets Ada` with its `inputs:` and `expect:`)"
    )


def test_case_inputs_must_have_the_declared_type_and_enum(tmp_path: Path) -> None:
    write(
        tmp_path,
        """
        sanctum: 1
        name: t
        inputs:
          who: {}
          mood: {enum: [happy, sad]}
        entry: a
        sigils:
          a: {next: END}
        """,
    )
    path = tmp_path / "ritual.test.yaml"
    path.write_text(
        "ritual: ritual.yaml\ncases:\n"
        "  - name: c\n    inputs: {who: 5, mood: angry}\n"
        "  - name: fine\n    inputs: {who: Ada, mood: sad}\n"
    )
    with pytest.raises(RitualFileError) as caught:
        load_test_file(path)
    assert [f"{p.line}:{p.column}: {p.message}" for p in caught.value.problems] == [
        "4:19: case 'c': input 'who' of ritual 't' must be of type string, got int 5",
        "4:28: case 'c': input 'mood' of ritual 't' must be one of 'happy', 'sad', got 'angry'",
    ]
