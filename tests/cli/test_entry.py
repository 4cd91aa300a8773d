"""The console script's entry point: Ctrl-C while the command line loads."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.cli.helpers import REPO

_CTRL_C_WHILE_LOADING = """
import builtins, signal
from sanctum.cli import entry

original = builtins.__import__

def importing(name, *args, **kwargs):
    if name == "sanctum.cli.app":
        signal.raise_signal(signal.SIGINT)  # as if Ctrl-C landed in the import
    return original(name, *args, **kwargs)

builtins.__import__ = importing
entry.main()
"""


def test_ctrl_c_while_loading_exits_130_without_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_WHILE_LOADING],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 130
    assert done.stderr == ""


def test_after_loading_the_app_runs_with_python_s_own_ctrl_c_handler() -> None:
    code = (
        "import signal, sys\n"
        "from sanctum.cli import entry\n"
        "sys.argv = ['sanctum', '--version']\n"
        "try:\n"
        "    entry.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip().splitlines()[-1] == "True", done.stdout + done.stderr


def test_the_console_script_is_this_entry_point() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["sanctum"] == "sanctum.cli.entry:main"
