"""The kill-a-worker scenario again and again: how many rounds end identical.

Runs ``tests/queue/test_kill.py`` (three real ``sanctum worker`` processes, 30
invocations of a ten-superstep ritual with a fan-out and a queued resume, one worker
SIGKILLed while it holds work; every invocation must end ``done`` with the Aether of
a one-process run, one Seal per superstep on the head branch, the update applied
once) ``--rounds`` times, each in a fresh pytest process and a fresh database, and
prints one line per round and the count that passed. A failed round keeps its pytest
output and its workers' logs under ``--keep`` (a fresh temporary folder by default).

The design asks for 20 of 20 (docs/scale-out.md); this is a script, not a test, so
the default suite stays as fast as it is. Usage::

    SANCTUM_TEST_POSTGRES_URL=postgresql://... .venv/bin/python benchmarks/kill_loop.py \
        [--rounds 20] [--keep DIR] [--test tests/queue/test_kill.py]

Exit status: 0 when every round passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_round(test: str, folder: Path) -> tuple[bool, float, str]:
    """One pytest run of ``test`` with its temporary files under ``folder``.

    Returns:
        ``(passed, seconds, last lines of its output)``.
    """
    began = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(folder),
            test,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    output = done.stdout + done.stderr
    (folder.parent / f"{folder.name}.out").write_text(output, encoding="utf-8")
    tail = "\n".join(output.strip().splitlines()[-3:])
    return done.returncode == 0, time.monotonic() - began, tail


def main() -> None:
    """Run the rounds; print one line each and the tally."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--test", default="tests/queue/test_kill.py")
    args = parser.parse_args()
    if not os.environ.get("SANCTUM_TEST_POSTGRES_URL"):
        sys.exit("set SANCTUM_TEST_POSTGRES_URL to the PostgreSQL server to use")
    keep = args.keep or Path(tempfile.mkdtemp(prefix="sanctum-kill-loop-"))
    keep.mkdir(parents=True, exist_ok=True)
    passed = 0
    for number in range(1, args.rounds + 1):
        ok, seconds, tail = one_round(args.test, keep / f"round-{number:02d}")
        passed += ok
        verdict = "passed" if ok else "FAILED"
        print(f"round {number:2d}: {verdict} in {seconds:.1f} s", flush=True)
        if not ok:
            print(f"  {tail}\n  output and worker logs: {keep}/round-{number:02d}*", flush=True)
    print(f"{passed}/{args.rounds} rounds passed (files in {keep})", flush=True)
    sys.exit(0 if passed == args.rounds else 1)


if __name__ == "__main__":
    main()
