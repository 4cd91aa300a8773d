"""The 0.x ``sanctum.spec.testcases``: the test-file models, and the old runner name."""

from __future__ import annotations

from sanctum.ritualfile.testcases import *  # noqa: F403
from sanctum.ritualfile.testcases import __all__ as _NAMES
from sanctum.spec._runner import run_ritual_tests

__all__ = [*_NAMES, "run_ritual_tests"]
