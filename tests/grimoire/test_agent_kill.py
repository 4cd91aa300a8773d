"""SIGKILL an Entity's process mid-run, across compactions and a fallback; resume it elsewhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from tests.grimoire.agent_crash_worker import TASK


def _spawn(store: Path, invocation: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.grimoire.agent_crash_worker", str(store), invocation],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )


def _finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    finals = [line[6:] for line in out.splitlines() if line.startswith("FINAL ")]
    assert len(finals) == 1, out
    final: dict[str, Any] = json.loads(finals[0])
    return final


def _kill_after(proc: subprocess.Popen[str], seals: int) -> None:
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        if line.startswith("SEAL "):
            seen += 1
            if seen >= seals:
                break
        assert not line.startswith("FINAL"), "the run ended before the kill"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The final Aether of a run no one interrupted."""
    store = tmp_path_factory.mktemp("whole") / "seals.db"
    return _finish(_spawn(store, "whole"))


def test_the_uninterrupted_run_compacts_and_falls_back(whole: dict[str, Any]) -> None:
    answers = [m for m in whole["messages"] if m["role"] == "assistant"]
    assert answers[-1]["content"] == "Page 5 mentions the reset pin."
    assert {m.get("oracle") for m in answers} == {"reader"}
    assert whole["compaction"]["count"] >= 2
    assert TASK in whole["compaction"]["summary"]
    assert whole["messages"][0] == {"role": "user", "content": TASK}  # stored whole


@pytest.mark.parametrize("seals", [2, 5, 9, 14])
def test_a_run_killed_after_some_seals_resumes_to_the_same_aether(
    tmp_path: Path, whole: dict[str, Any], seals: int
) -> None:
    store = tmp_path / "seals.db"
    _kill_after(_spawn(store, "split"), seals)
    assert _finish(_spawn(store, "split")) == whole
