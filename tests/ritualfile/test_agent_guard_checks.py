"""The agent block's `guard:` values, checked in the YAML layer with positions and in
words a YAML user knows (no pydantic locations), by validate and by run alike."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sanctum.ritualfile import check_ritual
from tests.cli.helpers import sanctum

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "approval"


def _guarded(tmp_path: Path, guard: str) -> Path:
    shutil.copytree(EXAMPLE, tmp_path / "approval")
    ritual = tmp_path / "approval" / "ticket.yaml"
    text = ritual.read_text(encoding="utf-8")
    assert "      guard: on\n" in text
    ritual.write_text(text.replace("      guard: on\n", f"      guard: {guard}\n"), "utf-8")
    return ritual


@pytest.mark.parametrize(
    ("guard", "expected", "column"),
    [
        (
            "{warn: {repeat_failure: 0}}",
            "`agent.guard.warn.repeat_failure` of sigil 'work' should be 1 or more, not 0",
            38,
        ),
        ("maybe", "`agent.guard` of sigil 'work' must be a mapping, on or off", 14),
        (
            "{stop: {bogus: 3}}",
            "unknown key 'bogus' in sigil 'work' (agent.guard.stop) "
            "(allowed: repeat_failure, same_result, tool_failure)",
            22,
        ),
        (
            "{wran: {}}",
            "unknown key 'wran' in sigil 'work' (agent.guard); did you mean 'warn'?",
            15,
        ),
        (
            "{warn: {repeat_failure: 6}}",
            "the loop guard warns at 6 repeat_failure but stops at 5 (the default)",
            38,
        ),
        (
            "{warn: {same_result: 4}, stop: {same_result: 3}}",
            "warns at 4 same_result but stops at 3; the warning must come first",
            35,
        ),
        (
            "{stop: {tool_failure: 2}}",
            "warns at 3 tool_failure (the default) but stops at 2",
            36,
        ),
    ],
)
def test_a_bad_guard_is_one_positioned_problem(
    tmp_path: Path, guard: str, expected: str, column: int
) -> None:
    ritual = _guarded(tmp_path, guard)
    (problem,) = check_ritual(ritual)
    assert expected in problem.message
    assert (problem.line, problem.column) == (40, column)
    for leak in ("literal[", "[key]", "function-after", "Input should"):
        assert leak not in problem.message


def test_a_warning_at_the_stop_is_allowed(tmp_path: Path) -> None:
    ritual = _guarded(tmp_path, "{warn: {repeat_failure: 3}, stop: {repeat_failure: 3}}")
    assert check_ritual(ritual, resolve=True) == []


@pytest.mark.parametrize("command", ["validate", "run"])
def test_validate_and_run_refuse_it_without_a_traceback(tmp_path: Path, command: str) -> None:
    ritual = _guarded(tmp_path, "{warn: {repeat_failure: 0}}")
    done = sanctum([command, str(ritual)], tmp_path)
    assert done.returncode == 2
    assert f"{ritual}:40:38: `agent.guard.warn.repeat_failure`" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
