"""The root app: help, version, completion, ``python -m sanctum``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sanctum.__about__ import __version__
from tests.cli.helpers import REPO, imported_modules, invoke, modules_under, sanctum

COMMANDS = (
    "run",
    "resume",
    "invocations",
    "seals",
    "trace",
    "validate",
    "graph",
    "schema",
    "test",
    "watch",
)


def test_help_lists_every_command(tmp_path: Path) -> None:
    result = invoke(["--help"], tmp_path)
    assert result.exit_code == 0
    for command in COMMANDS:
        assert f" {command} " in result.stdout


def test_no_arguments_shows_help(tmp_path: Path) -> None:
    result = invoke([], tmp_path)
    assert "Usage" in result.output
    assert "run" in result.output


def test_version(tmp_path: Path) -> None:
    result = invoke(["--version"], tmp_path)
    assert result.exit_code == 0
    assert result.stdout.strip() == f"sanctum {__version__}"


def test_shell_completion_is_offered(tmp_path: Path) -> None:
    result = invoke(["--help"], tmp_path)
    assert "--install-completion" in result.stdout
    assert "--show-completion" in result.stdout


def test_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(["conjure"], tmp_path)
    assert result.exit_code == 2
    assert "conjure" in result.output


def test_usage_errors_are_one_line_naming_the_help(tmp_path: Path) -> None:
    result = invoke(["run", "--bogus", "r.yaml"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr == "error: No such option: --bogus (see `sanctum run --help`)\n"


@pytest.mark.parametrize("command", ["", "run", "resume", "invocations", "seals", "test"])
def test_flags_show_no_type_placeholder(tmp_path: Path, command: str) -> None:
    result = invoke([*command.split(), "--help"], tmp_path, env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "<bool>" not in result.stdout
    flags = [line for line in result.stdout.splitlines() if "--json" in line or "--help" in line]
    assert flags
    for line in flags:
        assert "<" not in line, line
    assert "URL" in invoke(["run", "--help"], tmp_path).stdout  # valued options keep theirs


def test_console_script_and_module_agree(tmp_path: Path) -> None:
    script = sanctum(["--version"], tmp_path)
    module = subprocess.run(
        [sys.executable, "-m", "sanctum", "--version"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert script.returncode == 0, script.stderr
    assert module.returncode == 0, module.stderr
    assert script.stdout == module.stdout == f"sanctum {__version__}\n"


def test_help_loads_no_heavy_dependency(tmp_path: Path) -> None:
    """--help stays quick: no pydantic, yaml, jinja2, httpx or engine scheduler loaded."""
    probe = (
        "import sys\n"
        "from sanctum.cli.app import app\n"
        "try:\n"
        "    app(['--help'], prog_name='sanctum')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('pydantic', 'yaml', 'jinja2', 'httpx', 'sanctum.ritualfile', "
        "'sanctum.api', 'sanctum.ritual.scheduler', 'watchfiles') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert "HEAVY []" in done.stdout, done.stdout + done.stderr


def test_help_in_a_fresh_interpreter_imports_no_heavy_layer(tmp_path: Path) -> None:
    """``python -X importtime -m sanctum --help``: no YAML layer, engine or model client."""
    modules, done = imported_modules(["--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "sanctum.cli.app" in modules  # the probe does see our imports
    heavy = (
        "pydantic",
        "jinja2",
        "httpx",
        "yaml",
        "asyncio",
        "sanctum.ritualfile",
        "sanctum.api",
        "sanctum.api",
        "sanctum.ritual",
        "sanctum.grimoire",
        "sanctum.oracle",
        "sanctum.codex",
        "sanctum.tracing",
    )
    assert modules_under(modules, heavy) == []


def test_warnings_are_one_plain_line(tmp_path: Path) -> None:
    import subprocess

    from tests.cli.helpers import console_script

    (tmp_path / "noisy.py").write_text(
        "import warnings\n\n\ndef step(aether):\n"
        "    warnings.warn('the abacus is old', RuntimeWarning)\n    return {}\n",
        encoding="utf-8",
    )
    ritual = tmp_path / "noisy.yaml"
    ritual.write_text(
        "sanctum: 1\nname: noisy\nentry: s\nsigils:\n  s: {call: 'noisy:step', next: END}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [*console_script(), "run", str(ritual), "--codex", "memory:"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "warning: the abacus is old" in done.stderr
    assert "RuntimeWarning" not in done.stderr
