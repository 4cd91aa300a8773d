"""Per-endpoint limits and project checkouts: what they cost, what they hold back.

Measures, on the PostgreSQL server at ``--url`` (default ``$SANCTUM_TEST_POSTGRES_URL``):

* **cost per call**, in one process, of an Oracle call that does nothing (a scripted
  answer): bare, behind ``max_concurrency`` (the process's gate), and behind
  ``max_concurrency_global`` (one ``pg_try_advisory_lock`` and one
  ``pg_advisory_unlock`` on the slots' connection), ``--calls`` calls each, uncontended.
* **two workers, one model server**: two real ``sanctum worker`` processes
  (concurrency 4 each) run ``--invocations`` invocations of a one-sigil ritual whose
  oracle is a loopback OpenAI-compatible server answering each request after 50 ms
  (streamed). Three settings: no bound, ``max_concurrency: 2`` (per worker) and
  ``max_concurrency: 2, max_concurrency_global: 2``. Reported: the most requests the
  server held at once, and the seconds from the submit to the last invocation done.
* **project check**: seconds a worker spends checking a ``--parts-from-worker`` job's
  files (reading and hashing each) for a ritual with one module, and with a spell
  folder of 50 files.

Figures go to docs/scale-out.md (they are not test assertions). Usage::

    .venv/bin/python benchmarks/endpoint_limits.py [--url postgresql://...] \
        [--calls 2000] [--invocations 40]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RITUAL = """\
sanctum: 1
name: bench-gpu
inputs:
  q: {{type: string}}
aether:
  a: {{}}
oracles:
  gpu: {{provider: openai, base_url: "{url}/v1", model: m{bounds}}}
entry: ask
sigils:
  ask: {{oracle: gpu, prompt: "{{{{ q }}}}", output: a, next: END}}
"""


async def _per_call(url: str, calls: int) -> dict[str, float]:
    from sanctum.oracle.limits import LimitedOracle, shared_slots
    from sanctum.oracle.scripted import ScriptedOracle
    from sanctum.queue import PostgresSlots

    def fresh() -> ScriptedOracle:
        return ScriptedOracle(["ok"] * calls)

    endpoint = f"bench http://gpu-{uuid.uuid4().hex[:6]}:8080 m"
    oracles: dict[str, Any] = {
        "bare": fresh(),
        "max_concurrency": LimitedOracle(fresh(), endpoint=endpoint, max_concurrency=2),
        "max_concurrency_global": LimitedOracle(
            fresh(), endpoint=endpoint, max_concurrency_global=2
        ),
    }
    slots = PostgresSlots(url)
    spent: dict[str, float] = {}
    try:
        with shared_slots(slots):
            for label, oracle in oracles.items():
                await oracle.generate([])  # warm up (the slots' connection opens here)
                began = time.perf_counter()
                for _ in range(calls - 1):
                    await oracle.generate([])
                spent[label] = (time.perf_counter() - began) / (calls - 1)
    finally:
        await slots.aclose()
    return spent


def _two_workers(folder: Path, count: int) -> list[tuple[str, int, float]]:
    from sanctum import api
    from tests.oracle.counting import InFlight
    from tests.oracle.servers import running_server
    from tests.queue.harness import fresh_database, wait_all, workers

    settings = [
        ("no bound", ""),
        ("max_concurrency: 2 (per worker)", ", max_concurrency: 2"),
        ("max_concurrency: 2, max_concurrency_global: 2", ", max_concurrency: 2, "
         "max_concurrency_global: 2"),
    ]  # fmt: skip
    out = []
    for label, bounds in settings:
        with running_server() as server:
            counter = InFlight(crowd=10_000, hold=0.05)  # every request answered after 50 ms
            server.respond = counter
            ritual = folder / f"gpu-{uuid.uuid4().hex[:6]}.yaml"
            ritual.write_text(RITUAL.format(url=server.url, bounds=bounds), encoding="utf-8")
            with fresh_database() as db, workers(db, folder, 2):
                began = time.monotonic()
                ids = api.submit(ritual, [{"q": str(n)} for n in range(count)], codex=db)
                wait_all(db, ids, "done", 300)
                seconds = time.monotonic() - began
        out.append((label, counter.most, seconds))
        print(f"| {label} | {counter.most} | {seconds:.2f} |", flush=True)
    return out


def _project_check(folder: Path) -> tuple[float, float]:
    from sanctum.queue._project import Checkout, manifest
    from sanctum.ritualfile import load

    project = folder / "project"
    (project / "rituals" / "spells").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    (project / "rituals" / "steps.py").write_text("def f(a):\n    return {}\n" * 200)
    (project / "rituals" / "one.yaml").write_text(
        "sanctum: 1\nname: one\naether:\n  a: {}\nentry: s\nsigils:\n"
        '  s: {call: "steps:f", next: END}\n',
        encoding="utf-8",
    )
    for i in range(50):
        (project / "rituals" / "spells" / f"spell_{i}.py").write_text("x = 1\n" * 300)
    one = manifest(load(project / "rituals" / "one.yaml"))
    spells = {}
    for path in sorted((project / "rituals" / "spells").iterdir()):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        spells[path.relative_to(project).as_posix()] = f"sha256:{digest}"
    many = {"ritual": one["ritual"], "files": {**one["files"], **spells}}
    timings = []
    for job in (one, many):
        checkout = Checkout(project)
        began = time.perf_counter()
        for _ in range(200):
            checkout.ritual(job)
        timings.append((time.perf_counter() - began) / 200)
    return timings[0], timings[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("SANCTUM_TEST_POSTGRES_URL", ""))
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--invocations", type=int, default=40)
    args = parser.parse_args()
    if not args.url:
        raise SystemExit("give --url postgresql://... or set SANCTUM_TEST_POSTGRES_URL")
    os.environ["SANCTUM_TEST_POSTGRES_URL"] = args.url  # the test harness reads it
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)
    spent = asyncio.run(_per_call(args.url, args.calls))
    for label, seconds in spent.items():
        print(f"per call, {label}: {seconds * 1e6:.0f} us", flush=True)
    with tempfile.TemporaryDirectory(prefix="sanctum-limits-") as scratch:
        folder = Path(scratch)
        one, many = _project_check(folder)
        print(
            f"project check per job: 2 files {one * 1000:.2f} ms, 52 files {many * 1000:.2f} ms",
            flush=True,
        )
        print("| setting | most requests at once | seconds |")
        print("|---|---|---|", flush=True)
        _two_workers(folder, args.invocations)


if __name__ == "__main__":
    main()
