"""The agent block's approve, spells, max_turns and guard keys, checked and compiled."""

from __future__ import annotations

import shutil
from pathlib import Path

from sanctum.ritualfile import check_ritual

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "approval"


def _copy(tmp_path: Path, old: str, new: str) -> Path:
    shutil.copytree(EXAMPLE, tmp_path / "approval")
    ritual = tmp_path / "approval" / "ticket.yaml"
    text = ritual.read_text(encoding="utf-8")
    assert old in text
    ritual.write_text(text.replace(old, new), encoding="utf-8")
    return ritual


def test_the_example_validates_and_resolves() -> None:
    assert check_ritual(EXAMPLE / "ticket.yaml") == []
    assert check_ritual(EXAMPLE / "ticket.yaml", resolve=True) == []


def test_approvals_need_a_merge_dict_conduit(tmp_path: Path) -> None:
    ritual = _copy(tmp_path, "  approvals: {reducer: merge_dict}\n", "")
    (problem,) = [str(p) for p in check_ritual(ritual)]
    assert "pauses for approvals, which need a conduit `approvals`" in problem
    assert problem.startswith(f"{ritual}:")


def test_an_allowlist_names_spells_of_the_tome(tmp_path: Path) -> None:
    ritual = _copy(
        tmp_path,
        "      approve: [write]\n",
        "      approve: [write]\n      spells: [read_tikcet]\n",
    )
    problems = [str(p) for p in check_ritual(ritual, resolve=True)]
    assert any("no spell named 'read_tikcet' in tome 'desk'" in p for p in problems)


def test_guard_limits_are_checked_by_the_schema(tmp_path: Path) -> None:
    ritual = _copy(tmp_path, "      guard: on\n", "      guard: {warn: {loops: 2}}\n")
    assert check_ritual(ritual) != []
    ritual.write_text(
        ritual.read_text(encoding="utf-8").replace(
            "guard: {warn: {loops: 2}}",
            "guard: {warn: {repeat_failure: 3}, stop: {tool_failure: 4}}",
        ),
        encoding="utf-8",
    )
    assert check_ritual(ritual, resolve=True) == []
