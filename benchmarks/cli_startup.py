"""Cold-start wall time of the command line, beside a one-command Typer hello-world.

Measures, in one run and with the same interpreter:

* ``hello --help``: a one-command Typer app (the baseline);
* ``sanctum --help``: target within 1.5x of the baseline;
* ``sanctum validate RITUAL``: a small ritual file, target within 2.5x of the baseline.

Each command runs once as a warm-up (it fills the OS file cache and ``__pycache__``),
then ``--rounds`` times in a fresh process. The runs are interleaved — every round runs
each command once, in a rotating order — so that a burst of load on the machine hits
all three alike. Reported per command: the median and the minimum wall time, and three
ratios to the baseline: of the medians, the median of the per-round ratios (each
round's command over the same round's baseline), and of the minimums (the least noisy
estimate of the cost on an idle machine). The verdict uses the ratio of the medians.

Bytecode: an installed sanctum has its ``.pyc`` files (pip writes them), so by default
the commands run with ``PYTHONPYCACHEPREFIX`` pointing at a scratch directory and
``PYTHONDONTWRITEBYTECODE`` cleared: the warm-up writes the bytecode there (the working
tree is left alone) and the measured runs read it. ``--source`` keeps the environment
as it is: with ``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` in the checkout,
every run compiles sanctum's own modules from source (the baseline, all in
site-packages, does not), which costs sanctum tens of milliseconds more. Usage::

    .venv/bin/python benchmarks/cli_startup.py [--rounds 30] [--source] [--ritual FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HELLO = '''\
import typer

app = typer.Typer()


@app.command()
def hello(name: str = "world") -> None:
    """Say hello."""
    print(f"hello {name}")


if __name__ == "__main__":
    app()
'''

SMALL_RITUAL = """\
sanctum: 1
name: bench
inputs:
  name: {type: string, default: world}
aether:
  greeting: {}
entry: greet
sigils:
  greet:
    set: {greeting: "'hello ' ~ name"}
    next: END
"""

ROOT = Path(__file__).resolve().parent.parent


def _sanctum_command() -> list[str]:
    script = Path(sys.executable).with_name("sanctum")
    if script.exists():
        return [str(script)]
    found = shutil.which("sanctum")
    return [found] if found else [sys.executable, "-m", "sanctum"]


def _run_once(command: list[str], env: dict[str, str]) -> float:
    """Wall time (s) of one fresh process running ``command``; exit on failure."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)} exited {done.returncode}:\n"
            f"{done.stdout.decode()}{done.stderr.decode()}"
        )
    return elapsed


def _time_interleaved(
    commands: list[list[str]], rounds: int, env: dict[str, str]
) -> list[list[float]]:
    """Wall times (s), one list of ``rounds`` runs per command, interleaved."""
    for command in commands:  # warm-up
        _run_once(command, env)
    times: list[list[float]] = [[] for _ in commands]
    order = list(range(len(commands)))
    for number in range(rounds):
        shift = number % len(order)
        for index in order[shift:] + order[:shift]:
            times[index].append(_run_once(commands[index], env))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", "--repeat", type=int, default=30, help="runs per command (interleaved)"
    )
    parser.add_argument("--ritual", type=Path, default=None, help="ritual file to validate")
    parser.add_argument(
        "--source",
        action="store_true",
        help="keep the environment's bytecode settings (no scratch bytecode cache)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        hello = Path(scratch) / "hello.py"
        hello.write_text(HELLO, encoding="utf-8")
        ritual = args.ritual
        if ritual is None:
            ritual = Path(scratch) / "bench.yaml"
            ritual.write_text(SMALL_RITUAL, encoding="utf-8")
        sanctum = _sanctum_command()
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
        if not args.source:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        bytecode = "environment as is" if args.source else "bytecode cached in a scratch dir"
        rows = [
            ("typer hello-world --help", [sys.executable, str(hello), "--help"], None),
            ("sanctum --help", [*sanctum, "--help"], 1.5),
            ("sanctum validate", [*sanctum, "validate", str(ritual)], 2.5),
        ]
        times = _time_interleaved([command for _, command, _ in rows], args.rounds, env)

    base = times[0]
    baseline = statistics.median(base)
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
        f"{args.rounds} interleaved runs per command (wall time), {bytecode}"
    )
    print(
        f"{'command':<26}{'median':>9}{'min':>8}{'ratio':>8}{'paired':>8}{'min/min':>9}"
        f"{'target':>8}  verdict"
    )
    worst = False
    for (label, _, target), runs in zip(rows, times, strict=True):
        median = statistics.median(runs)
        ratio = median / baseline
        paired = statistics.median(run / first for run, first in zip(runs, base, strict=True))
        least = min(runs) / min(base)
        verdict = ""
        if target is not None:
            verdict = "ok" if ratio <= target else "SLOW"
            worst |= ratio > target
        print(
            f"{label:<26}{median * 1000:>7.0f}ms{min(runs) * 1000:>6.0f}ms{ratio:>7.2f}x"
            f"{paired:>7.2f}x{least:>8.2f}x{(f'{target:.1f}x' if target else ''):>8}  {verdict}"
        )
    print("ratio: median over the baseline's median; paired: median of per-round ratios;")
    print("min/min: fastest over the baseline's fastest. The verdict uses ratio.")
    raise SystemExit(1 if worst else 0)


if __name__ == "__main__":
    main()
