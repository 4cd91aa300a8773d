"""Shared helpers of the command-line tests: the runner, the console script, rituals.

``invoke`` drives the Typer app in-process (CliRunner) with a deterministic
environment: no colour, a fixed width, a scratch working directory. ``sanctum``
runs the installed console script in a real subprocess. ``imported_modules`` lists
what a fresh ``python -X importtime -m sanctum ...`` imports. ``write_ritual`` writes the
small rituals the tests share.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from typer.testing import CliRunner, Result

from sanctum.cli.app import app

__all__ = [
    "APPROVE",
    "COUNTER",
    "COUNTER_PY",
    "GREET",
    "REPO",
    "console_script",
    "imported_modules",
    "invoke",
    "mask",
    "modules_under",
    "sanctum",
    "write_ritual",
]

REPO = Path(__file__).resolve().parents[2]

GREET = """\
sanctum: 1
name: greet
inputs:
  name: {type: string, default: world}
aether:
  greeting: {type: string}
entry: greet
sigils:
  greet:
    set: {greeting: "'hello ' ~ name"}
    next: END
"""

APPROVE = """\
sanctum: 1
name: approve
inputs:
  name: {type: string}
aether:
  greeting: {type: string}
  approved: {type: boolean, default: false}
  answered: {type: boolean, default: false}
  status: {type: string}
entry: greet
sigils:
  greet:
    set: {greeting: "'hello ' ~ name"}
    next: approve
  approve:
    interrupt: "Send {{ greeting }}?"
    until: "answered"
    next: finish
  finish:
    set: {status: "'sent' if approved else 'held'"}
    next: END
"""

COUNTER = """\
sanctum: 1
name: counter
inputs:
  limit: {type: integer, default: 5}
  delay: {type: number, default: 0.0}
aether:
  count: {type: integer, default: 0}
  trail: {reducer: append, default: []}
entry: tick
sigils:
  tick:
    call: "counter_steps:tick"
    routes:
      - when: "count < limit"
        to: tick
      - to: END
"""

COUNTER_PY = """\
import time


def tick(aether):
    time.sleep(aether["delay"])
    count = aether.get("count", 0) + 1
    return {"count": count, "trail": [count]}
"""


def write_ritual(directory: Path, name: str, text: str) -> Path:
    """Write a ritual file (and, for the counter, its Python module) into ``directory``."""
    path = directory / name
    path.write_text(text, encoding="utf-8")
    if text is COUNTER:
        (directory / "counter_steps.py").write_text(COUNTER_PY, encoding="utf-8")
    return path


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SANCTUM_")}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"})
    env.update(extra or {})
    return env


def invoke(
    args: Sequence[str],
    cwd: Path,
    *,
    input: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> Result:
    """Run the app in-process from ``cwd`` (deterministic console); return the Result."""
    runner = CliRunner()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, list(args), input=input, env=_env(env), catch_exceptions=False)
    finally:
        os.chdir(old)


def console_script() -> list[str]:
    """The installed ``sanctum`` script (``python -m sanctum`` when it is missing)."""
    script = Path(sys.executable).with_name("sanctum")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sanctum"]


def sanctum(
    args: Sequence[str],
    cwd: Path,
    *,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the console script in a real subprocess and capture its output."""
    return subprocess.run(
        [*console_script(), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env=_env(env),
        timeout=timeout,
        check=False,
    )


_DURATION = re.compile(r"\b\d+(\.\d+)?(s|ms|µs)\b")


def mask(text: str) -> str:
    """Replace durations (``0.01s``, ``12.3ms``) with ``<t>`` for golden comparisons."""
    return _DURATION.sub("<t>", text)


def imported_modules(
    args: Sequence[str], cwd: Path
) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Every module a fresh ``python -X importtime -m sanctum ARGS`` imports, and the run.

    The import-time report goes to stderr; the returned run keeps it there too (the
    command's own stderr lines are those not starting with ``import time:``).
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sanctum", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return modules, done


def modules_under(modules: set[str], roots: Sequence[str]) -> list[str]:
    """The modules that are one of ``roots`` or inside one of them, sorted."""
    return sorted(m for m in modules if any(m == r or m.startswith(f"{r}.") for r in roots))
