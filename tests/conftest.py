"""What every test gets: a scrubbed environment, its own working directory, shared servers.

* The environment: sanctum's own variables (``SANCTUM_*``) are removed, except those
  that tell the tests where their services are (``SANCTUM_TEST_*``) and the two knobs
  that regenerate golden files or keep screenshots; the variables that change how a
  terminal draws are fixed (no colour, 100 columns, a dumb terminal), so CLI output
  compares exactly wherever the suite runs. ``CI`` is left alone: it decides whether a
  missing service skips a test or fails it.
* The working directory is the test's ``tmp_path``: nothing a test writes by accident
  (a ``.sanctum/`` store, an audit file) lands in the checkout. A test that needs a
  file of the repository names it through :data:`REPO_ROOT` (or the ``repo_root``
  fixture).
* ``server``: a loopback HTTP model server (:class:`tests.oracle.servers.ModelServer`)
  that answers scripted replies in the Ollama and OpenAI wire formats.
* Parallel workers: ``-n auto`` (pytest-xdist, in ``addopts``) starts one worker per
  core, at most :data:`MAX_WORKERS`: the tests that start real workers, servers and
  PostgreSQL databases would otherwise crowd a large machine's connection limits.
  ``-n 0`` runs everything in one process (for ``pdb`` or a single test).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.oracle.servers import ModelServer, running_server

MAX_WORKERS = 4
"""The most pytest-xdist workers ``-n auto`` starts."""

REPO_ROOT = Path(__file__).resolve().parent.parent
"""The checkout's root (where pyproject.toml is), for tests that read shipped files."""

_KEPT = ("SANCTUM_TEST_", "SANCTUM_REGENERATE_GOLDEN", "SANCTUM_KEEP_SCREENSHOT")
_DROPPED = (
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "PY_COLORS",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "LINES",
    "OLLAMA_HOST",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)
_FIXED = {"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"}


@pytest.fixture(autouse=True)
def _scrubbed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run each test in ``tmp_path`` with a fixed, sanctum-free environment."""
    for name in list(os.environ):
        if (name.startswith("SANCTUM_") and not name.startswith(_KEPT)) or name in _DROPPED:
            monkeypatch.delenv(name)
    for name, value in _FIXED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core the process may use, at most MAX_WORKERS."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return max(1, min(usable or os.cpu_count() or 1, MAX_WORKERS))


@pytest.fixture
def repo_root() -> Path:
    """The checkout's root directory (see :data:`REPO_ROOT`)."""
    return REPO_ROOT


@pytest.fixture
def server() -> Iterator[ModelServer]:
    """A started loopback model server, stopped when the test ends."""
    with running_server() as started:
        yield started
