"""``sanctum test``: the shipped rituals' cases, failures, JUnit XML."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

from tests.cli.helpers import GREET, REPO, invoke, sanctum, write_ritual


def test_the_example_rituals_pass_in_a_subprocess(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    done = sanctum(["test", str(REPO / "rituals"), "--junit-xml", str(report)], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout
    assert "FAIL" not in done.stdout
    root = ET.parse(report).getroot()
    assert root.tag == "testsuites"
    assert int(root.get("tests", "0")) >= 5
    assert root.get("failures") == "0"


def _cases(tmp_path: Path, expected: str) -> Path:
    write_ritual(tmp_path, "greet.yaml", GREET)
    cases = tmp_path / "greet.test.yaml"
    cases.write_text(
        "ritual: greet.yaml\n"
        "cases:\n"
        "  - name: greets Ada\n"
        "    inputs: {name: Ada}\n"
        f"    expect: {{aether: {{greeting: {expected}}}}}\n",
        encoding="utf-8",
    )
    return cases


def test_a_failing_case_exits_1_and_is_reported(tmp_path: Path) -> None:
    _cases(tmp_path, "'hi Ada'")
    report = tmp_path / "r.xml"
    result = invoke(["test", "--junit-xml", str(report)], tmp_path)
    assert result.exit_code == 1
    assert "FAIL" in result.stdout
    assert "1 of 1 failed" in result.stdout
    failure = ET.parse(report).getroot().find(".//testcase/failure")
    assert failure is not None
    assert "hello Ada" in (failure.get("message") or "")


def test_a_ritual_path_finds_its_sibling_test_file(tmp_path: Path) -> None:
    _cases(tmp_path, "'hello Ada'")
    result = invoke(["test", "greet.yaml"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "1 passed" in result.stdout


def test_nothing_to_test(tmp_path: Path) -> None:
    result = invoke(["test"], tmp_path)
    assert result.exit_code == 2
    assert "no ritual tests found" in result.stderr
    write_ritual(tmp_path, "greet.yaml", GREET)
    lonely = invoke(["test", "greet.yaml"], tmp_path)
    assert lonely.exit_code == 2
    assert "greet.test.yaml" in lonely.stderr


def test_a_malformed_test_file_is_bad_input(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    (tmp_path / "greet.test.yaml").write_text(
        "ritual: greet.yaml\ncases:\n  - name: typo\n    inputz: {name: Ada}\n", encoding="utf-8"
    )
    result = invoke(["test", "greet.test.yaml"], tmp_path)
    assert result.exit_code == 2, result.output
    assert "greet.test.yaml:4:5:" in result.stderr
    assert "inputz" in result.stderr
    assert "FAIL" not in result.output


def test_a_test_file_naming_a_missing_ritual_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "ghost.test.yaml").write_text("cases: []\nritual: ghost.yaml\n", encoding="utf-8")
    result = invoke(["test", "ghost.test.yaml"], tmp_path)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("ghost.test.yaml:2:")
    assert "ghost.yaml" in result.stderr.partition(": ")[2]


def test_broken_yaml_in_a_test_file_names_its_position(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    (tmp_path / "greet.test.yaml").write_text("ritual: greet.yaml\ncases: [\n", encoding="utf-8")
    done = sanctum(["test", str(tmp_path)], tmp_path)
    assert done.returncode == 2
    assert "greet.test.yaml:" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_named_pipe_among_the_test_files_is_refused(tmp_path: Path) -> None:
    import os

    import pytest

    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes are POSIX")
    write_ritual(tmp_path, "greet.yaml", GREET)
    os.mkfifo(tmp_path / "greet.test.yaml")
    for target in (".", "greet.test.yaml"):
        done = sanctum(["test", target], tmp_path, timeout=20)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr == (
            f"{Path(target) / 'greet.test.yaml' if target == '.' else Path(target)}:1:1: cannot "
            "read the test file: it is a named pipe (FIFO), not a regular file\n"
        )
