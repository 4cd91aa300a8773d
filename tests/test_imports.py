"""``import sanctum`` (and the engine packages) load no third-party module."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_PROBE = textwrap.dedent(
    """
    import sys
    before = set(sys.modules)
    import {module}
    loaded = {{m.split('.')[0] for m in set(sys.modules) - before}}
    stdlib = set(sys.stdlib_module_names)
    print(sorted(m for m in loaded if m not in stdlib and m != 'sanctum' and not m.startswith('_')))
    """
)


@pytest.mark.parametrize(
    "module",
    [
        "sanctum",
        "sanctum.ritual",
        "sanctum.aether",
        "sanctum.omens",
        "sanctum.codex",
        "sanctum.wards",
        "sanctum.ritual.scheduler",
    ],
)
def test_engine_imports_only_the_standard_library(module: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "[]", result.stdout
