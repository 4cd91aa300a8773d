"""Cold-start wall time of the command line, beside a one-command Typer hello-world.

Measures, in one run and with the same interpreter:

* ``hello --help``: a one-command Typer app (the baseline);
* ``sanctum --help``: target within 1.5x of the baseline;
* ``sanctum validate RITUAL``: a small ritual file, target within 2.5x of the baseline.

Each command runs ``--repeat`` times in a fresh process (after one warm-up run that
fills the OS file cache and ``__pycache__``); the median is compared. Usage::

    .venv/bin/python benchmarks/cli_startup.py [--repeat 15] [--ritual rituals/hello.yaml]
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


def _time(command: list[str], repeat: int) -> list[float]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    subprocess.run(command, capture_output=True, env=env, check=False)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, env=env, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(
                f"{' '.join(command)} exited {done.returncode}:\n"
                f"{done.stdout.decode()}{done.stderr.decode()}"
            )
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs per command")
    parser.add_argument("--ritual", type=Path, default=None, help="ritual file to validate")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        hello = Path(scratch) / "hello.py"
        hello.write_text(HELLO, encoding="utf-8")
        ritual = args.ritual
        if ritual is None:
            ritual = Path(scratch) / "bench.yaml"
            ritual.write_text(SMALL_RITUAL, encoding="utf-8")
        sanctum = _sanctum_command()
        rows = [
            ("typer hello-world --help", [sys.executable, str(hello), "--help"], None),
            ("sanctum --help", [*sanctum, "--help"], 1.5),
            ("sanctum validate", [*sanctum, "validate", str(ritual)], 2.5),
        ]
        results = [(label, _time(command, args.repeat), target) for label, command, target in rows]

    baseline = statistics.median(results[0][1])
    print(f"python {sys.version.split()[0]}, {args.repeat} runs each, median wall time")
    print(f"{'command':<28}{'median':>10}{'min':>10}{'ratio':>8}{'target':>9}  verdict")
    worst = 0
    for label, times, target in results:
        median = statistics.median(times)
        ratio = median / baseline
        verdict = ""
        if target is not None:
            verdict = "ok" if ratio <= target else "SLOW"
            worst |= ratio > target
        print(
            f"{label:<28}{median * 1000:>8.0f}ms{min(times) * 1000:>8.0f}ms{ratio:>7.2f}x"
            f"{(f'{target:.1f}x' if target else ''):>9}  {verdict}"
        )
    raise SystemExit(1 if worst else 0)


if __name__ == "__main__":
    main()
