"""What a TraceRecorder costs: the sequential cycle, bare vs traced, per superstep.

The cycle is the superstep benchmark's (``benchmarks/superstep.py``: four Sigils in a
ring). Each configuration runs at two sizes, in interleaved rounds so that a noisy
neighbour slows all of them alike, and the best time of each is kept:

* the **per-superstep** cost is the marginal one, ``(T(large) - T(small)) / (large -
  small)`` — what every further superstep adds, with no one-time work mixed in;
* the **one-time** cost is what remains at the small size: for the recorder, mostly
  writing the ``.sanctum-trace.json`` file when the Rite manifests (one file, however
  long the run).

Configurations: ``bare`` (no Ward), ``traced`` (a :class:`~sanctum.tracing.TraceRecorder`
that records every superstep and writes its file at the end — the target is traced <=
2x bare per superstep), and ``observed`` (a Ward whose async ``on_omen`` does nothing:
what building and delivering every Omen costs, which a recorder avoids by taking each
superstep of one synchronous Sigil whole through its superstep hook, a capability of
the Ward contract: ``sanctum.wards.base.ObservesOmens``). The HTML
rendering of the resulting trace is timed separately (it is done once, after the run,
by ``sanctum trace render``).

Usage::

    .venv/bin/python benchmarks/tracing.py [--small 1000] [--large 10000] [--rounds 25]
        [--repeats 1] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from superstep import build_sanctum_cycle, sanctum_cycle_input

from sanctum import Rite
from sanctum.omens import Omen
from sanctum.tracing import TraceRecorder, render_trace
from sanctum.wards import Ward

TARGET_RATIO = 2.0
"""The traced cycle may cost at most this many times the bare cycle per superstep."""


class Listener(Ward):
    """A Ward whose ``on_omen`` does nothing: the engine's cost of being observed."""

    async def on_omen(self, omen: Omen) -> None:
        """Ignore the Omen."""


def marginal(
    builds: dict[str, Callable[[int], Rite]],
    small: int,
    large: int,
    rounds: int,
    repeats: int,
) -> dict[str, dict[str, float]]:
    """Per-superstep and one-time seconds of each configuration.

    Args:
        builds: Name -> function building the cycle Rite for a number of supersteps.
        small: The smaller number of supersteps.
        large: The larger number of supersteps.
        rounds: Interleaved rounds over every configuration and size.
        repeats: Timed runs per configuration, size and round (after one warm-up); a
            recorder's trace file is removed before each run, untimed (replacing a
            large file costs the file system time unrelated to the run).

    Returns:
        Name -> ``{"per_superstep_s", "one_time_s", "small_s", "large_s"}``.
    """
    rites = {(name, n): build(n) for name, build in builds.items() for n in (small, large)}
    loop = asyncio.new_event_loop()
    best: dict[tuple[str, int], float] = {}
    try:
        for _ in range(rounds):
            for key, rite in rites.items():
                for _ in range(repeats + 1):  # the first is a warm-up
                    for ward in rite.wards:  # each run writes a new trace file, as
                        if isinstance(ward, TraceRecorder):  # `sanctum run --trace` does
                            ward.path.unlink(missing_ok=True)
                    gc.collect()
                    started = time.perf_counter()
                    loop.run_until_complete(rite.ainvoke(sanctum_cycle_input()))
                    seconds = time.perf_counter() - started
                best[key] = min(best.get(key, seconds), seconds)
    finally:
        loop.close()
    out: dict[str, dict[str, float]] = {}
    for name in builds:
        t_small, t_large = best[(name, small)], best[(name, large)]
        per = (t_large - t_small) / (large - small)
        out[name] = {
            "per_superstep_s": per,
            "one_time_s": max(t_small - per * small, 0.0),
            "small_s": t_small,
            "large_s": t_large,
        }
    return out


def measure(small: int, large: int, rounds: int, repeats: int) -> dict[str, Any]:
    """Time bare, traced and observed cycles; returns µs per superstep and ratios."""
    with tempfile.TemporaryDirectory() as folder:
        paths: list[Path] = []

        def traced(n: int) -> Rite:
            path = Path(folder) / f"cycle-{len(paths)}.sanctum-trace.json"
            paths.append(path)
            return build_sanctum_cycle(n, wards=[TraceRecorder(path)])

        figures = marginal(
            {
                "bare": build_sanctum_cycle,
                "traced": traced,
                "observed": lambda n: build_sanctum_cycle(n, wards=[Listener()]),
            },
            small,
            large,
            rounds,
            repeats,
        )
        largest = max(paths, key=lambda p: p.stat().st_size)
        trace_bytes = largest.stat().st_size
        gc.collect()
        started = time.perf_counter()
        html = render_trace(largest)
        render_s = time.perf_counter() - started
        html_bytes = html.stat().st_size
    bare = figures["bare"]["per_superstep_s"]
    traced_s = figures["traced"]["per_superstep_s"]
    return {
        "small": small,
        "large": large,
        "bare_us_per_superstep": bare * 1e6,
        "traced_us_per_superstep": traced_s * 1e6,
        "observed_us_per_superstep": figures["observed"]["per_superstep_s"] * 1e6,
        "ratio": traced_s / bare,
        "target_ratio": TARGET_RATIO,
        "within_target": traced_s / bare <= TARGET_RATIO,
        "traced_one_time_ms": (figures["traced"]["one_time_s"] - figures["bare"]["one_time_s"])
        * 1e3,
        "trace_bytes_large": trace_bytes,
        "render_s_large": render_s,
        "html_bytes_large": html_bytes,
    }


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, measure, print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = measure(args.small, args.large, args.rounds, args.repeats)
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"sequential cycle, per superstep (marginal between {args.small} and {args.large} "
        f"supersteps, best of {args.rounds} interleaved rounds)"
    )
    print(f"  bare            {result['bare_us_per_superstep']:8.2f} µs")
    print(f"  TraceRecorder   {result['traced_us_per_superstep']:8.2f} µs")
    print(f"  no-op on_omen   {result['observed_us_per_superstep']:8.2f} µs  (every Omen built)")
    verdict = "ok" if result["within_target"] else "OVER TARGET"
    print(f"  ratio           {result['ratio']:8.2f}x  (target <= {TARGET_RATIO}x: {verdict})")
    print(
        f"  one-time cost of tracing per invocation: {result['traced_one_time_ms']:.2f} ms "
        "(writing the trace file)"
    )
    print(
        f"  trace of {args.large} supersteps: {result['trace_bytes_large'] / 1024:.0f} KiB; "
        f"render_trace {result['render_s_large'] * 1e3:.0f} ms -> "
        f"{result['html_bytes_large'] / 1024:.0f} KiB HTML"
    )


if __name__ == "__main__":
    main()
