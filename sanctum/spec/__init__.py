"""Deprecated alias of :mod:`sanctum.ritualfile`; kept importable for one release.

``import sanctum.spec`` (and ``sanctum.spec.<module>``) warns with a
:class:`DeprecationWarning` and hands back the :mod:`sanctum.ritualfile` modules
themselves, so objects compare identical whichever name imported them.
"""

from __future__ import annotations

import importlib
import sys
import warnings

from sanctum.ritualfile import *  # noqa: F403
from sanctum.ritualfile import __all__ as _RITUALFILE_NAMES
from sanctum.spec._runner import run_ritual_tests

__all__ = [*_RITUALFILE_NAMES, "run_ritual_tests"]

warnings.warn(
    "sanctum.spec was renamed sanctum.ritualfile; import sanctum.ritualfile instead "
    "(the old name goes in the next release)",
    DeprecationWarning,
    stacklevel=2,
)

_MODULES = (
    "checks",
    "compiler",
    "diagnostics",
    "env",
    "expressions",
    "graph",
    "loader",
    "models",
    "resolve",
    "schema",
    "shape",
    "topology",
)

for _name in _MODULES:
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"sanctum.ritualfile.{_name}")
# sanctum.spec.testcases is a module of its own (sanctum/spec/testcases.py): it adds the
# 0.x runner name to the test-file models.
