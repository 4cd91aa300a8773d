"""Every command the README shows runs, in order, with the exit status it documents.

The README's command-line section is a walkthrough: each ```console block starts with
``$ sanctum ...`` and is followed by ``Exit status: N.``. This test replays them in a
scratch copy of the shipped rituals and spells, through the installed console script,
and checks the status and that no Python traceback is printed. Commands that need a
file the reader writes by hand (``typo.yaml``, ``greet.test.yaml``) or that run until
Ctrl-C (``watch``) are left to their own tests in ``tests/cli``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"```console\n\$ (sanctum [^\n]*)\n.*?```\nExit status: (\d+)", re.S)
_HAND_WRITTEN = ("typo.yaml", "greet.test.yaml")


def _documented() -> list[tuple[str, int]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(command, int(status)) for command, status in _BLOCK.findall(text)]


def test_the_readme_walkthrough_runs_with_its_documented_exit_statuses(tmp_path: Path) -> None:
    commands = _documented()
    assert len(commands) >= 15, "the README's command walkthrough went missing"
    shutil.copytree(ROOT / "rituals", tmp_path / "rituals")
    shutil.copytree(ROOT / "spells", tmp_path / "spells")
    (tmp_path / ".git").mkdir()  # the project root for path confinement
    script = Path(sys.executable).with_name("sanctum")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "88"}
    env.pop("SANCTUM_DEBUG", None)
    ran = 0
    for command, status in commands:
        if any(name in command for name in _HAND_WRITTEN) or " watch " in f"{command} ":
            continue
        shell = command.replace("sanctum ", f"{script} ", 1)
        done = subprocess.run(
            shell,
            shell=True,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == status, (command, done.stdout[-800:], done.stderr[-800:])
        assert "Traceback" not in done.stderr, (command, done.stderr)
        ran += 1
    assert ran >= 15
