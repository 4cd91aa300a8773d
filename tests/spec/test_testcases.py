from __future__ import annotations

from pathlib import Path

from sanctum.spec import run_ritual_tests
from tests.spec.helpers import MINIMAL, write


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
    good, bad = run_ritual_tests(tmp_path)
    assert (good.name, good.passed, good.status) == ("good", True, "done")
    assert bad.passed is False
    assert bad.message == "expected status interrupted, got done; aether['x'] is 1, expected 2"


def test_bad_test_file_is_a_failed_result(tmp_path: Path) -> None:
    path = tmp_path / "x.test.yaml"
    path.write_text("ritual: r.yaml\ncases:\n  - nam: x\n")
    [result] = run_ritual_tests(path)
    assert result.passed is False
    assert "3:5: unknown key 'nam'" in result.message
