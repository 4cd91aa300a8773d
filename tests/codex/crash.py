"""Crash and race drills on a real store, driving ``tests.codex.cycle_worker`` children."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["final_of", "kill_and_resume", "partial_run", "race", "run_worker"]

_ROOT = Path(__file__).resolve().parents[2]


def _spawn(store: str, invocation: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.codex.cycle_worker", store, invocation, *extra],
        cwd=_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(_ROOT)},
    )


def run_worker(store: str, invocation: str, *extra: str) -> tuple[int, str, str]:
    """Run a worker to its end; return (exit status, stdout, stderr)."""
    proc = _spawn(store, invocation, *extra)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def final_of(out: str) -> dict[str, Any] | None:
    """The ``FINAL`` Aether a worker printed, if any."""
    for line in out.splitlines():
        if line.startswith("FINAL "):
            return json.loads(line[6:])  # type: ignore[no-any-return]
    return None


def _kill_after(proc: subprocess.Popen[str], seals: int, jitter: float) -> int:
    """Read ``SEAL`` lines; SIGKILL after the ``seals``-th; return the last superstep."""
    assert proc.stdout is not None
    seen = last = 0
    for line in proc.stdout:
        if line.startswith("SEAL "):
            seen += 1
            last = int(line.split()[1])
            if seen >= seals:
                time.sleep(jitter)  # land anywhere in the next superstep
                break
        if line.startswith("FINAL"):
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    if proc.stderr is not None:
        proc.stderr.close()
    return last


def partial_run(store: str, invocation: str, turns: int, seals: int) -> int:
    """Start ``invocation`` and SIGKILL it after ``seals`` Seals; return its last superstep."""
    return _kill_after(_spawn(store, invocation, "--turns", str(turns)), seals, 0.0)


def kill_and_resume(
    store: str, invocation: str, turns: int, kills: int, seed: int
) -> tuple[dict[str, Any] | None, list[int]]:
    """SIGKILL workers at random supersteps ``kills`` times, then run one to the end.

    Returns:
        The final Aether of the last worker, and the superstep each kill followed.
    """
    rng = random.Random(seed)
    killed_after: list[int] = []
    for _ in range(kills):
        proc = _spawn(store, invocation, "--turns", str(turns))
        killed_after.append(_kill_after(proc, rng.randint(1, 4), rng.uniform(0, 0.004)))
    code, out, err = run_worker(store, invocation, "--turns", str(turns))
    assert code == 0, f"final worker failed (seed {seed}): {out}\n{err}"
    return final_of(out), killed_after


def race(store: str, invocation: str, turns: int, go: Path) -> list[tuple[int, str, str]]:
    """Start two workers resuming ``invocation`` at the same instant; wait for both."""
    racers = [
        _spawn(store, invocation, "--turns", str(turns), "--go", str(go), "--slow", "0.3")
        for _ in range(2)
    ]
    time.sleep(0.3)  # both interpreters are up and polling for the go file
    go.write_text("go")
    results = []
    for proc in racers:
        out, err = proc.communicate(timeout=60)
        results.append((proc.returncode, out, err))
    return results
