"""The 0.x test-runner name, kept with the :mod:`sanctum.spec` alias for one release."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from sanctum.api import TestResult

__all__ = ["run_ritual_tests"]


def run_ritual_tests(
    path: str | Path, *, record: Literal["all", "missing"] | None = None
) -> list[TestResult]:
    """The 0.x name of :func:`sanctum.api.run_test_folder` (the test runner is the façade's).

    Runs every case of a ``*.test.yaml`` file, or of every one under a folder; a file
    that cannot be read yields one failed result carrying its ``path:line:column``
    messages.
    """
    from sanctum.api import run_test_folder

    return run_test_folder(path, record=record)
