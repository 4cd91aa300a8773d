"""Queue workers on one PostgreSQL: throughput, latency, takeover, and the cost of fencing.

Measures, each scenario on a fresh database of the server at ``--url`` (default
``$SANCTUM_TEST_POSTGRES_URL``), with real ``sanctum worker`` processes (concurrency 4):

* **throughput**: ``--invocations`` invocations of a three-superstep ritual, submitted
  at once, with 1, 2 and 4 workers; sigils that return at once (no-op) and sigils that
  sleep 50 ms. Reported: invocations/s and Seals/s from the submit to the last job done.
* **latency**: from a segment's defer (procrastinate's ``deferred`` event) to the first
  Seal of its invocation, p50/p95; *idle* (one submit at a time, every 0.2 s, two
  workers waiting) and *loaded* (the batch of the 2-worker no-op throughput run).
* **takeover**: two workers with test timings (heartbeat 0.5 s, stale 2 s, sweep
  0.5 s), six invocations of ten 0.2 s supersteps; one worker is SIGKILLed while it
  holds work. Reported per round: seconds from the kill to the first lease taken on a
  victim's invocation, and supersteps run twice per taken-over invocation (every sigil
  records its (input, sigil) in a file; a second record is a re-run).
* **handback**: the same, but one worker is stopped with SIGTERM instead (``--stale 60``,
  so no sweep can be what moves an invocation). Reported per round: seconds from the
  signal to the first lease another worker takes on a handed-back invocation, seconds
  from the signal to the stopped worker's exit, and supersteps run twice per handed-back
  invocation (0: the superstep in flight was completed and sealed, not cut).
* **fencing**: seconds per Seal of ``PostgresCodex.put_next`` in one process, with and
  without a lease (the fence adds one ``SELECT ... FOR UPDATE`` to each write's
  transaction), ``--seals`` Seals each, alternated in blocks of 50.

Figures go to docs/scale-out.md (they are not test assertions). Usage::

    .venv/bin/python benchmarks/scale_out.py [--url postgresql://...] [--invocations 120]
        [--seals 600] [--rounds 3] [--only throughput,latency,takeover,handback,fencing]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STEPS = """\
import asyncio
import os

def _step(name, seconds):
    async def step(aether):
        marks = os.environ.get("BENCH_MARKS")
        if marks:  # at the start: a superstep cut short by a kill is counted too
            with open(marks, "a", encoding="utf-8") as out:
                out.write(f"{aether['n']} {name}\\n")
        if seconds:
            await asyncio.sleep(seconds)
        return {"log": [name]}
    return step

a0, b0, c0 = (_step(n, 0.0) for n in "abc")
a50, b50, c50 = (_step(n, 0.05) for n in "abc")
S0, S1, S2, S3, S4, S5, S6, S7, S8, S9 = (_step(f"s{i}", 0.2) for i in range(10))
"""


def _ritual(name: str, calls: list[str]) -> str:
    lines = [
        "sanctum: 1",
        f"name: {name}",
        "inputs:",
        '  "n": {type: integer}',
        "aether:",
        "  log: {reducer: append, default: []}",
        f"entry: {calls[0].split(':')[1]}",
        "sigils:",
    ]
    names = [call.split(":")[1] for call in calls]
    for i, (call, sigil) in enumerate(zip(calls, names, strict=True)):
        after = names[i + 1] if i + 1 < len(names) else "END"
        lines.append(f'  {sigil}: {{call: "{call}", next: {after}}}')
    return "\n".join(lines) + "\n"


class Bench:
    """A scratch folder with the sigils' module and the rituals, and the server URL."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.folder = folder
        self.lib = folder / "lib"  # on the workers' PYTHONPATH, not beside the rituals
        self.lib.mkdir()
        (self.lib / "bench_steps.py").write_text(STEPS, encoding="utf-8")
        rituals = folder / "rituals"
        rituals.mkdir()
        self.noop = rituals / "noop.yaml"
        self.noop.write_text(_ritual("noop", [f"bench_steps:{s}0" for s in "abc"]))
        self.sleepy = rituals / "sleepy.yaml"
        self.sleepy.write_text(_ritual("sleepy", [f"bench_steps:{s}50" for s in "abc"]))
        self.slow = rituals / "slow.yaml"
        self.slow.write_text(_ritual("slow", [f"bench_steps:S{i}" for i in range(10)]))

    @contextmanager
    def database(self) -> Iterator[str]:
        import psycopg

        name = f"sanctum_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield self.url.rsplit("/", 1)[0] + "/" + name
        finally:
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    @contextmanager
    def workers(
        self, url: str, count: int, timings: list[str], marks: Path | None = None
    ) -> Iterator[list[tuple[str, subprocess.Popen[bytes], Path]]]:
        env = {**os.environ, "PYTHONPATH": f"{self.lib}{os.pathsep}{ROOT}"}
        if marks is not None:
            env["BENCH_MARKS"] = str(marks)
        crew = []
        for i in range(count):
            name = f"bench{i}-{uuid.uuid4().hex[:6]}"
            log = self.folder / f"{name}.log"
            with log.open("wb") as stream:
                proc = subprocess.Popen(
                    [*WORKER, "--codex", url, "--name", name, "-c", "4", *timings],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stream,
                    env=env,
                )
            crew.append((name, proc, log))
        try:
            for _, _, log in crew:
                _until(lambda log=log: b" ready:" in log.read_bytes(), 60)
            yield crew
        finally:
            for _, proc, _ in crew:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for _, proc, _ in crew:
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


WORKER = [sys.executable, "-m", "sanctum", "worker"]
FAST = ["--heartbeat", "0.5", "--stale", "2", "--sweep", "0.5", "--poll", "0.2"]
CALM = ["--heartbeat", "2", "--stale", "10", "--sweep", "2", "--poll", "0.5"]
STAYING = ["--heartbeat", "0.5", "--stale", "60", "--sweep", "0.5", "--poll", "0.2"]


def _until(check: Any, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := check()):
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting after {seconds} s")
        time.sleep(0.02)
    return value


def _one(url: str, sql: str, *params: object) -> Any:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(sql, params).fetchone()
    return row[0] if row is not None else None


def _rows(url: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return list(conn.execute(sql, params).fetchall())


def _succeeded(url: str) -> int:
    return int(_one(url, "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'"))


def _pending(url: str) -> int:
    return int(
        _one(url, "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")
    )


def _latencies(url: str) -> list[float]:
    """Seconds from each job's deferral to its invocation's first Seal."""
    rows = _rows(
        url,
        "SELECT extract(epoch FROM e.at), (SELECT min(s.timestamp) FROM sanctum_seals AS s "
        "WHERE s.invocation_id = j.lock) FROM procrastinate_jobs AS j JOIN "
        "procrastinate_events AS e ON e.job_id = j.id AND e.type = 'deferred'",
    )
    return [float(first) - float(deferred) for deferred, first in rows if first is not None]


def _holding(url: str, worker: str) -> list[str]:
    """The invocations whose segment ``worker`` runs now (its lease, a job doing)."""
    rows = _rows(
        url,
        "SELECT l.invocation_id FROM sanctum_leases AS l JOIN procrastinate_jobs AS j "
        "ON j.lock = l.invocation_id WHERE l.holder = %s AND j.status = 'doing'",
        worker,
    )
    return [str(row[0]) for row in rows]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def throughput(bench: Bench, count: int) -> tuple[list[str], list[float]]:
    """Rows of the throughput table, and the loaded latencies (2 workers, no-op)."""
    from sanctum import api

    rows, loaded = [], []
    for label, ritual in (("no-op", bench.noop), ("50 ms", bench.sleepy)):
        for workers in (1, 2, 4):
            with bench.database() as url, bench.workers(url, workers, CALM):
                began = time.monotonic()
                api.submit(ritual, [{"n": n} for n in range(count)], codex=url)
                _until(lambda url=url: _succeeded(url) >= count, 600)
                took = time.monotonic() - began
                seals = int(_one(url, "SELECT count(*) FROM sanctum_seals"))
                if label == "no-op" and workers == 2:
                    loaded = _latencies(url)
            rows.append(
                f"| {label} | {workers} | {count} | {took:.2f} | {count / took:.1f} "
                f"| {seals / took:.1f} |"
            )
            print(rows[-1], flush=True)
    return rows, loaded


def latency_idle(bench: Bench, count: int) -> list[float]:
    """Submit-to-first-Seal seconds, one submit at a time into idle workers."""
    from sanctum import api

    with bench.database() as url, bench.workers(url, 2, CALM):
        for n in range(count):
            api.submit(bench.noop, [{"n": n}], codex=url)
            time.sleep(0.2)
        _until(lambda: _succeeded(url) >= count, 120)
        return _latencies(url)


def takeover(bench: Bench, rounds: int) -> list[tuple[float, float, int]]:
    """Per round: (seconds kill -> first takeover lease, re-runs per taken-over invocation,
    invocations taken over)."""
    from sanctum import api

    out = []
    for _ in range(rounds):
        marks = bench.folder / f"marks-{uuid.uuid4().hex[:6]}.txt"
        with bench.database() as url, bench.workers(url, 2, FAST, marks) as crew:
            victim, proc, _ = crew[0]
            api.submit(bench.slow, [{"n": n} for n in range(6)], codex=url)
            _until(lambda victim=victim, url=url: _holding(url, victim), 60)
            time.sleep(0.5)  # let it be mid-run
            taken = _holding(url, victim)
            killed = time.time()
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            _until(lambda: _succeeded(url) >= 6, 120)
            since = _rows(
                url,
                "SELECT min(since) FROM sanctum_leases WHERE epoch >= 2 AND "
                "invocation_id = ANY(%s)",
                taken,
            )[0][0]
            inputs = dict(
                _rows(
                    url,
                    "SELECT j.lock, (j.args->'inputs'->>'n') FROM procrastinate_jobs AS j",
                )
            )
        lines = marks.read_text(encoding="utf-8").splitlines()
        victims = {inputs[ident] for ident in taken}
        reruns = sum(
            1 for line in set(lines) if line.split()[0] in victims and lines.count(line) > 1
        )
        out.append((float(since) - killed, reruns / max(1, len(taken)), len(taken)))
        print(f"takeover round: {out[-1]}", flush=True)
    return out


def _reruns(marks: Path, inputs: dict[str, Any], moved: list[str]) -> float:
    """Supersteps begun twice per moved invocation (each sigil marks its start)."""
    lines = marks.read_text(encoding="utf-8").splitlines()
    victims = {inputs[ident] for ident in moved}
    twice = sum(1 for line in set(lines) if line.split()[0] in victims and lines.count(line) > 1)
    return twice / max(1, len(moved))


def handback(bench: Bench, rounds: int) -> list[tuple[float, float, float, int]]:
    """Per round: (seconds SIGTERM -> first lease of a handed-back invocation elsewhere,
    seconds SIGTERM -> the stopped worker's exit, re-runs per handed-back invocation,
    invocations handed back)."""
    from sanctum import api

    out = []
    for _ in range(rounds):
        marks = bench.folder / f"marks-{uuid.uuid4().hex[:6]}.txt"
        with bench.database() as url, bench.workers(url, 2, STAYING, marks) as crew:
            stopped, proc, _ = crew[0]
            api.submit(bench.slow, [{"n": n} for n in range(6)], codex=url)
            _until(lambda stopped=stopped, url=url: _holding(url, stopped), 60)
            time.sleep(0.5)  # let it be mid-run
            moved = _holding(url, stopped)
            signalled = time.time()
            proc.send_signal(signal.SIGTERM)
            proc.wait()
            exited = time.time()
            _until(lambda url=url: _succeeded(url) >= 6 and not _pending(url), 120)
            moved = [
                str(row[0])
                for row in _rows(
                    url,
                    "SELECT invocation_id FROM sanctum_leases WHERE epoch >= 2 AND "
                    "invocation_id = ANY(%s)",
                    moved,
                )
            ]
            since = _rows(
                url,
                "SELECT min(since) FROM sanctum_leases WHERE epoch >= 2 AND "
                "invocation_id = ANY(%s)",
                moved,
            )[0][0]
            inputs = dict(
                _rows(url, "SELECT j.lock, (j.args->'inputs'->>'n') FROM procrastinate_jobs AS j")
            )
        reruns = _reruns(marks, inputs, moved)
        out.append((float(since) - signalled, exited - signalled, reruns, len(moved)))
        print(f"handback round: {out[-1]}", flush=True)
    return out


async def _fencing(url: str, seals: int) -> tuple[float, float]:
    from sanctum.codex.base import Seal
    from sanctum.codex.postgres import PostgresCodex

    codex = PostgresCodex(url)
    try:
        await codex.latest_seal_id("warm-up")
        await codex.lease("fenced", "bench")
        spent = {"fenced": 0.0, "plain": 0.0}
        heads: dict[str, str | None] = {"fenced": None, "plain": None}
        for block in range(seals // 50):
            for ident in ("fenced", "plain") if block % 2 == 0 else ("plain", "fenced"):
                for i in range(50):
                    seal = Seal(aether={"i": i}, frontier=("next",), superstep=block * 50 + i)
                    began = time.perf_counter()
                    await codex.put_next(ident, seal, expected_latest=heads[ident])
                    spent[ident] += time.perf_counter() - began
                    heads[ident] = seal.seal_id
        per = (seals // 50) * 50
        return spent["fenced"] / per, spent["plain"] / per
    finally:
        await codex.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("SANCTUM_TEST_POSTGRES_URL", ""))
    parser.add_argument("--invocations", type=int, default=120)
    parser.add_argument("--seals", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="throughput,latency,takeover,handback,fencing")
    args = parser.parse_args()
    if not args.url:
        raise SystemExit("give --url postgresql://... or set SANCTUM_TEST_POSTGRES_URL")
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory(prefix="sanctum-scale-") as scratch:
        bench = Bench(args.url, Path(scratch))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)
        loaded: list[float] = []
        if "throughput" in only:
            print("| sigils | workers | invocations | seconds | invocations/s | Seals/s |")
            print("|---|---|---|---|---|---|", flush=True)
            _, loaded = throughput(bench, args.invocations)
        if "latency" in only:
            idle = latency_idle(bench, 20)
            for label, values in (("idle", idle), ("loaded", loaded)):
                if values:
                    print(
                        f"submit -> first superstep, {label}: p50 {_pct(values, 0.5) * 1000:.0f} "
                        f"ms, p95 {_pct(values, 0.95) * 1000:.0f} ms ({len(values)} segments)"
                    )
        if "takeover" in only:
            rounds = takeover(bench, args.rounds)
            seconds = [r[0] for r in rounds]
            print(
                f"takeover after SIGKILL (stale 2 s, sweep 0.5 s): median "
                f"{statistics.median(seconds):.2f} s, max {max(seconds):.2f} s; re-runs per "
                f"taken-over invocation: {[round(r[1], 2) for r in rounds]}; taken over: "
                f"{[r[2] for r in rounds]}"
            )
        if "handback" in only:
            rounds_h = handback(bench, args.rounds)
            print(
                f"handback after SIGTERM (stale 60 s): next lease median "
                f"{statistics.median(r[0] for r in rounds_h):.2f} s, max "
                f"{max(r[0] for r in rounds_h):.2f} s; worker exit median "
                f"{statistics.median(r[1] for r in rounds_h):.2f} s; re-runs per handed-back "
                f"invocation: {[round(r[2], 2) for r in rounds_h]}; handed back: "
                f"{[r[3] for r in rounds_h]}"
            )
        if "fencing" in only:
            with bench.database() as url:
                fenced, plain = asyncio.run(_fencing(url, args.seals))
            print(
                f"put_next per Seal: fenced {fenced * 1000:.2f} ms, unfenced {plain * 1000:.2f} "
                f"ms, fence {(fenced - plain) * 1000:+.2f} ms"
            )


if __name__ == "__main__":
    main()
