"""``sanctum validate``: path:line:column lines and exit 2 on any bad file."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import (
    GREET,
    REPO,
    imported_modules,
    invoke,
    modules_under,
    sanctum,
    write_ritual,
)


def test_good_files_are_ok(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["validate", str(ritual)], tmp_path)
    assert result.exit_code == 0
    assert result.stdout == f"{ritual}: ok\n"


def test_golden_broken_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(GREET.replace("next: END", "nxt: END"), encoding="utf-8")
    result = invoke(["validate", "broken.yaml"], tmp_path)
    assert result.exit_code == 2
    assert result.stdout == (
        "broken.yaml:11:5: unknown key 'nxt' in sigil 'greet'; did you mean 'next'? "
        "(allowed: description, join, next, policy, routes, set)\n"
    )
    assert result.stderr == "1 file with problems\n"


def test_every_file_is_checked_and_quiet_hides_good_ones(tmp_path: Path) -> None:
    good = write_ritual(tmp_path, "greet.yaml", GREET)
    bad = tmp_path / "bad.yaml"
    bad.write_text("sanctum: 2\n", encoding="utf-8")
    result = invoke(["validate", "-q", str(bad), str(good), "missing.yaml"], tmp_path)
    assert result.exit_code == 2
    assert str(good) not in result.stdout
    assert result.stdout.startswith(f"{bad}:1:")
    assert "missing.yaml:1:1:" in result.stdout
    assert result.stderr == "2 files with problems\n"


def test_test_files_are_checked_as_test_files(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    cases = tmp_path / "greet.test.yaml"
    cases.write_text("ritual: greet.yaml\ncases: []\n", encoding="utf-8")
    assert invoke(["validate", str(cases)], tmp_path).exit_code == 0
    cases.write_text("ritual: greet.yaml\ncasez: []\n", encoding="utf-8")
    assert invoke(["validate", str(cases)], tmp_path).exit_code == 2


def test_the_shipped_rituals_validate_in_a_subprocess(tmp_path: Path) -> None:
    files = sorted(str(p) for p in (REPO / "rituals").glob("*.yaml"))
    done = sanctum(["validate", *files], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_broken_files_in_a_subprocess(tmp_path: Path) -> None:
    broken = tmp_path / "tabs.yaml"
    broken.write_text("sanctum: 1\nname: x\n\tentry: a\n", encoding="utf-8")
    done = sanctum(["validate", str(broken)], tmp_path)
    assert done.returncode == 2
    assert done.stdout.startswith(f"{broken}:3:1: ")
    assert "Traceback" not in done.stderr


def test_validate_in_a_fresh_interpreter_loads_only_what_it_checks_with(tmp_path: Path) -> None:
    """No rich (Typer's help and error drawing), test runner, drawer, schema or client."""
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    modules, done = imported_modules(["validate", str(ritual)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{ritual}: ok\n"
    assert "sanctum.ritualfile.compiler" in modules  # the probe does see our imports
    unneeded = (
        "rich",
        "typer.rich_utils",
        "httpx",
        "sanctum.ritualfile.testcases",
        "sanctum.ritualfile.graph",
        "sanctum.ritualfile.schema",
        "sanctum.grimoire",  # a ritual of set sigils needs no oracle/agent/spell factory
        "sanctum.oracle.robust",
        "sanctum.codex.sqlite",
        "sanctum.tracing",
        # sanctum.api loads each name's module on first use (PEP 562): not the runner
        "sanctum.api._perform",
        "sanctum.api._run",
        "sanctum.api._testing",
        "sanctum.api._manage",
        "sanctum.api._queue",
        "sanctum.api._pending",
        "sanctum.api._batch",
        "sanctum.api._stores",
    )
    assert modules_under(modules, unneeded) == []


def test_a_usage_error_still_prints_one_line_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """The one-line usage error is installed only when one escapes, and it still is."""
    _, done = imported_modules(["validate", "--bogus", "x.yaml"], tmp_path)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert lines == ["error: No such option: --bogus (see `sanctum validate --help`)"]


def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os

    import pytest

    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes are POSIX")
    os.mkfifo(tmp_path / "pipe.yaml")
    os.mkfifo(tmp_path / "pipe.test.yaml")
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    done = sanctum(["validate", "pipe.yaml", "pipe.test.yaml", str(ritual)], tmp_path, timeout=20)
    assert done.returncode == 2
    assert done.stdout == (
        "pipe.yaml:1:1: cannot read the ritual file: it is a named pipe (FIFO), not a regular "
        "file\n"
        "pipe.test.yaml:1:1: cannot read the test file: it is a named pipe (FIFO), not a "
        "regular file\n"
        f"{ritual}: ok\n"
    )
    assert done.stderr == "2 files with problems\n"
    drawn = sanctum(["graph", "pipe.yaml"], tmp_path, timeout=20)
    assert drawn.returncode == 2
    assert "pipe.yaml:1:1: cannot read the ritual file: it is a named pipe" in drawn.stderr
