"""``sanctum test`` at 30, 50 and 100 columns, and cases whose ``resume:`` goes unused.

The golden transcripts are taken through the real command (CliRunner, ``COLUMNS`` set);
times are replaced with ``<t>`` (with the spaces that right-align them).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.cli.helpers import APPROVE, GREET, invoke, write_ritual

GOLDEN = Path(__file__).parent / "golden"

CASES = """\
ritual: greet.yaml
cases:
  - name: a very long case name that says exactly what it checks for Ada
    inputs: {name: Ada}
    expect: {aether: {greeting: "hello Bob"}}
  - name: greets Ada
    inputs: {name: Ada}
    expect: {aether: {greeting: "hello Ada"}}
  - name: unused resume
    inputs: {name: Ada}
    resume: [{greeting: hi}]
    expect: {status: done}
"""

_TIME = re.compile(r" *\b\d+ms\b")


def _report(tmp_path: Path, columns: int) -> tuple[int, str]:
    write_ritual(tmp_path, "greet.yaml", GREET)
    (tmp_path / "greet.test.yaml").write_text(CASES, encoding="utf-8")
    done = invoke(["test", "greet.test.yaml"], tmp_path, env={"COLUMNS": str(columns)})
    return done.exit_code, _TIME.sub(" <t>", done.stdout)


@pytest.mark.parametrize("columns", [30, 50, 100])
def test_the_report_matches_its_golden_transcript(tmp_path: Path, columns: int) -> None:
    code, text = _report(tmp_path, columns)
    assert code == 1
    golden = GOLDEN / f"test_report_{columns}.txt"
    if os.environ.get("SANCTUM_REGENERATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("columns", [30, 50])
def test_narrow_reports_keep_the_mark_and_readable_names(tmp_path: Path, columns: int) -> None:
    _, text = _report(tmp_path, columns)
    lines = text.splitlines()
    assert all(len(line) <= columns for line in lines), lines
    marks = [line.split()[0] for line in lines if line.startswith((" PASS", " FAIL"))]
    assert marks == ["FAIL", "PASS", "FAIL"]
    assert any(line.startswith(" PASS") and line.endswith("  greets Ada") for line in lines)
    assert any(line.startswith(" FAIL") and "  a very long case name" in line for line in lines)
    assert all(line.endswith("…") for line in lines if "a very long case name" in line)
    reasons = [line for line in lines[4:] if line.startswith("       ") and line.strip()]
    assert len(reasons) >= 3
    words = [len(line.split()) for line in reasons]
    assert min(words) >= 2, "a reason wraps one word per line"


def test_an_unused_resume_fails_the_case(tmp_path: Path) -> None:
    _, text = _report(tmp_path, 200)
    assert (
        "       resume: lists 1 update, but the run never paused (it ended done); remove "
        "resume: or make the ritual interrupt"
    ) in text.splitlines()


def test_a_resume_longer_than_the_pauses_fails_the_case(tmp_path: Path) -> None:
    write_ritual(tmp_path, "approve.yaml", APPROVE)
    (tmp_path / "approve.test.yaml").write_text(
        "ritual: approve.yaml\n"
        "cases:\n"
        "  - name: two answers, one pause\n"
        "    inputs: {name: Ada}\n"
        "    resume: [{answered: true, approved: true}, {answered: true}]\n"
        "    expect: {status: done, aether: {status: sent}}\n"
        "  - name: one answer, one pause\n"
        "    inputs: {name: Ada}\n"
        "    resume: [{answered: true, approved: true}]\n"
        "    expect: {status: done, aether: {status: sent}}\n",
        encoding="utf-8",
    )
    done = invoke(["test", "approve.test.yaml"], tmp_path, env={"COLUMNS": "200"})
    assert done.exit_code == 1
    lines = done.stdout.splitlines()
    assert (
        "       resume: lists 2 updates, but the run paused only once (it ended done); 1 never used"
    ) in lines
    assert any(line.startswith(" PASS  approve.test.yaml  one answer, one pause") for line in lines)
    assert "1 of 2 failed" in lines
