"""Hostile use of the command line: every misuse is one line on stderr, never a traceback.

Each row is a command a confused (or malicious) user might type, the exit status it
must give (2: bad usage or input) and a fragment of the one-line message. The rows
run in-process (CliRunner); a few run the real console script in a subprocess, where
the process's own stdin and exit status are what is tested.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.helpers import APPROVE, invoke, sanctum, write_ritual


@dataclass(frozen=True)
class Case:
    """One hostile command: its arguments, stdin, exit status and message fragment."""

    name: str
    args: list[str]
    status: int
    message: str
    stdin: str | None = None
    absent: str | None = None  # a file the command must not create


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a ritual, a paused invocation p1, and p2 whose ritual changed."""
    root = tmp_path_factory.mktemp("hostile-cli")
    write_ritual(root, "approve.yaml", APPROVE)
    changed = write_ritual(root, "changed.yaml", APPROVE)
    (root / "a-folder").mkdir()
    (root / "broken.yaml").write_text("a: [1, 2\n", encoding="utf-8")
    (root / "list.json").write_text("[1, 2]", encoding="utf-8")
    (root / "nan.json").write_text('{"name": "x", "n": NaN}', encoding="utf-8")
    for ritual, invocation in (("approve.yaml", "p1"), ("changed.yaml", "p2")):
        paused = invoke(["run", ritual, "-i", "name=Ada", "--invocation", invocation], root)
        assert paused.exit_code == 3, paused.output
    changed.write_text(APPROVE.replace("'held'", "'kept'"), encoding="utf-8")
    return root


RUN = ["run", "approve.yaml", "-i", "name=Ada"]

CASES = [
    Case("unknown flag", ["run", "--bogus", "approve.yaml"], 2, "No such option: --bogus"),
    Case("unknown command", ["conjure"], 2, "No such command"),
    Case("missing option value", ["resume", "--invocation"], 2, "requires an argument"),
    Case("missing ritual file", ["run", "nope.yaml"], 2, "nope.yaml"),
    Case("a directory as the ritual", ["run", "a-folder"], 2, "a-folder"),
    Case("garbage codex", [*RUN, "--codex", "garbage"], 2, "unknown codex", absent="garbage"),
    Case("memory:foo codex", [*RUN, "--codex", "memory:foo"], 2, "unknown codex URL"),
    Case("upper-case MEMORY:", ["invocations", "--codex", "MEMORY:"], 2, "unknown codex URL"),
    Case("colons as codex", ["invocations", "--codex", "::::"], 2, "unknown codex", absent="::::"),
    Case(
        "sqlite:///:memory:",
        ["invocations", "--codex", "sqlite:///:memory:"],
        2,
        "write memory:",
        absent=":memory:",
    ),
    Case(
        "missing sqlite codex, read-only",
        ["seals", "--invocation", "p1", "--codex", "sqlite:///missing.db"],
        2,
        "does not exist",
        absent="missing.db",
    ),
    Case(
        "missing codex on resume",
        ["resume", "--invocation", "p1", "--codex", "elsewhere.db"],
        2,
        "does not exist",
        absent="elsewhere.db",
    ),
    Case(
        "dead PostgreSQL",
        ["invocations", "--codex", "postgresql://nobody@127.0.0.1:1/x"],
        1,  # the store is down, not misused: retried, then exit 1
        "PostgreSQL",
    ),
    Case("unknown invocation", ["resume", "--invocation", "ghost"], 2, "unknown invocation"),
    Case("unknown invocation seals", ["seals", "--invocation", "ghost"], 2, "unknown invocation"),
    Case("resume after the ritual changed", ["resume", "--invocation", "p2"], 2, "changed since"),
    Case(
        "misspelled update",
        ["resume", "--invocation", "p1", "-u", "aproved=true"],
        2,
        "did you mean 'approved'",
    ),
    Case(
        "update of a wrong type",
        ["resume", "--invocation", "p1", "-u", "approved=yes"],
        2,
        "boolean",
    ),
    Case("non-finite update", ["resume", "--invocation", "p1", "-u", "answered=NaN"], 2, "NaN"),
    Case("input without =", ["run", "approve.yaml", "-i", "novalue"], 2, "key=value"),
    Case("input with an empty key", ["run", "approve.yaml", "-i", "=3"], 2, "key=value"),
    Case("misspelled input", ["run", "approve.yaml", "-i", "nmae=Ada"], 2, "did you mean 'name'"),
    Case("missing required input", ["run", "approve.yaml"], 2, "needs the input 'name'"),
    Case("garbage input file", [*RUN, "--input-file", "broken.yaml"], 2, "broken.yaml"),
    Case("input file holding a list", [*RUN, "--input-file", "list.json"], 2, "mapping"),
    Case("input file with NaN", ["run", "approve.yaml", "--input-file", "nan.json"], 2, "NaN"),
    Case("missing input file", [*RUN, "--input-file", "nope.json"], 2, "nope.json"),
    Case("directory as input file", [*RUN, "--input-file", "a-folder"], 2, "a-folder"),
    Case("garbage on stdin", [*RUN, "--input-file", "-"], 2, "standard input", stdin="::: [\n"),
    Case("garbage oracle", [*RUN, "--oracle", "nonsense"], 2, "NAME=provider:model"),
    Case("oracle at ftp", [*RUN, "--oracle", "local=openai:qwen@ftp://x"], 2, "http://"),
    Case("oracle of no name", [*RUN, "--oracle", "ghost=ollama:m"], 2, "declares no oracle"),
    Case("unknown stream mode", [*RUN, "--stream", "bogus"], 2, "unknown stream mode"),
]


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    return lines[0]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_hostile_command_in_process(workdir: Path, case: Case) -> None:
    result = invoke(case.args, workdir, input=case.stdin)
    assert result.exit_code == case.status, result.output
    line = _one_line(result.stderr)
    assert case.message in line
    assert "Traceback" not in result.output
    if case.absent is not None:
        assert not (workdir / case.absent).exists()


SUBPROCESS_CASES: list[tuple[str, list[str], bytes, str]] = [
    ("binary garbage on stdin", [*RUN, "--input-file", "-"], b"\xff\xfe\x00\x9c", "not UTF-8"),
    ("unknown flag", ["invocations", "--bogus"], b"", "No such option"),
    ("garbage codex", ["invocations", "--codex", "garbage"], b"", "unknown codex"),
]


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [case[1:] for case in SUBPROCESS_CASES],
    ids=[case[0] for case in SUBPROCESS_CASES],
)
def test_hostile_command_in_a_subprocess(
    workdir: Path, args: list[str], stdin: bytes, message: str
) -> None:
    import subprocess

    from tests.cli.helpers import console_script

    done = subprocess.run(
        [*console_script(), *args],
        cwd=workdir,
        input=stdin,
        capture_output=True,
        env=_plain_env(),
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, stderr
    assert message in _one_line(stderr)
    assert b"Traceback" not in done.stdout + done.stderr


def _plain_env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("SANCTUM_")}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"})
    return env


EXITS_IN_USER_CODE: list[tuple[str, str, int]] = [
    ("import sys\nsys.exit(3)\n\ndef tick(aether):\n    return {}\n", "at import", 2),
    ("import sys\n\ndef tick(aether):\n    sys.exit(3)\n", "while running", 1),
]


@pytest.mark.parametrize(
    ("module", "when", "status"), EXITS_IN_USER_CODE, ids=[row[1] for row in EXITS_IN_USER_CODE]
)
def test_sys_exit_in_a_step_module_never_becomes_the_exit_status(
    tmp_path: Path, module: str, when: str, status: int
) -> None:
    (tmp_path / "steps.py").write_text(module, encoding="utf-8")
    (tmp_path / "exits.yaml").write_text(
        "sanctum: 1\nname: exits\naether:\n  count: {type: integer, default: 0}\n"
        "entry: tick\nsigils:\n  tick:\n    call: 'steps:tick'\n    next: END\n",
        encoding="utf-8",
    )
    done = sanctum(["run", "exits.yaml"], tmp_path)
    assert done.returncode == status, (when, done.stdout, done.stderr)
    assert "sys.exit(3)" in done.stderr
    assert "Traceback" not in done.stderr
