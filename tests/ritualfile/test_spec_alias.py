from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT


def test_the_old_name_warns_and_hands_back_the_same_modules() -> None:
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from sanctum.spec.loader import load_yaml_file\n"
        "    import sanctum.spec\n"
        "import sanctum.ritualfile as package\n"
        "import sanctum.ritualfile.loader as new\n"
        "assert load_yaml_file is new.load_yaml_file\n"
        "assert sanctum.spec.compile_ritual is package.compile_ritual\n"
        "kinds = {w.category.__name__ for w in caught}\n"
        "texts = [str(w.message) for w in caught]\n"
        "print(kinds, texts[0])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "DeprecationWarning" in done.stdout
    assert "import sanctum.ritualfile instead" in done.stdout


def test_the_old_test_runner_name_still_runs_cases(tmp_path: Path) -> None:
    shutil.copytree(REPO_ROOT / "rituals", tmp_path / "rituals")
    shutil.copytree(REPO_ROOT / "spells", tmp_path / "spells")
    with pytest.warns(DeprecationWarning, match="sanctum.ritualfile"):
        spec = importlib.reload(importlib.import_module("sanctum.spec"))
    results = spec.run_ritual_tests(tmp_path / "rituals" / "hello.test.yaml")
    assert results
    assert all(result.passed for result in results), results


def test_the_old_testcases_module_keeps_its_runner() -> None:
    code = (
        "import warnings\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "from sanctum.spec.testcases import RitualTestSpec, run_ritual_tests\n"
        "from sanctum.ritualfile.testcases import RitualTestSpec as New\n"
        "assert RitualTestSpec is New and callable(run_ritual_tests)\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "ok"
