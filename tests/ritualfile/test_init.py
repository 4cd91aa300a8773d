"""``sanctum.ritualfile``: every public name resolves, and lazily (PEP 562)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import sanctum.ritualfile
from sanctum.errors import ExpressionError, FileProblem, RitualFileError


@pytest.mark.parametrize("name", sanctum.ritualfile.__all__)
def test_every_public_name_resolves_to_its_home(name: str) -> None:
    value = getattr(sanctum.ritualfile, name)
    assert getattr(value, "__name__", name) == name
    assert name in dir(sanctum.ritualfile)


def test_errors_are_the_errors_module_classes() -> None:
    assert sanctum.ritualfile.ExpressionError is ExpressionError
    assert sanctum.ritualfile.FileProblem is FileProblem
    assert sanctum.ritualfile.RitualFileError is RitualFileError


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'compile_spell'"):
        _ = sanctum.ritualfile.compile_spell  # type: ignore[attr-defined]


def test_check_ritual_loads_neither_the_test_runner_nor_the_drawer_nor_the_schema() -> None:
    probe = (
        "import json, sys\n"
        "import sanctum.ritualfile\n"
        "from sanctum.ritualfile import check_ritual\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('sanctum.ritualfile.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "sanctum.ritualfile.compiler" in loaded
    assert not {
        "sanctum.ritualfile.testcases",
        "sanctum.ritualfile.graph",
        "sanctum.ritualfile.schema",
    } & set(loaded)
