"""What a TraceRecorder costs: the sequential cycle, bare vs traced.

Runs the superstep benchmark's sequential cycle (``benchmarks/superstep.py``: four
Sigils in a ring, N supersteps) twice in one process — without any Ward, and with a
:class:`~sanctum.tracing.TraceRecorder` attached (it records every Omen and writes
the ``.sanctum-trace.json`` file when the Rite manifests; that write is included) —
and prints the per-superstep time of each and their ratio. Target: traced <= 2x bare.
A third run attaches a Ward whose ``on_omen`` does nothing, to separate what the engine
pays for being observed at all (Omens built and dispatched; without any observer it
takes a much faster path) from what the recorder itself adds.
The HTML rendering of the resulting trace is timed separately (it is done once, after
the run, by ``sanctum trace render``).

Usage::

    .venv/bin/python benchmarks/tracing.py [--supersteps 1000] [--repeats 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from superstep import best_of, build_sanctum_cycle, sanctum_cycle_input, time_sanctum

from sanctum.omens import Omen
from sanctum.tracing import TraceRecorder, render_trace
from sanctum.wards import Ward

TARGET_RATIO = 2.0
"""The traced cycle may take at most this many times the bare cycle's time."""


class Listener(Ward):
    """A Ward whose ``on_omen`` does nothing: the engine's cost of being observed."""

    async def on_omen(self, omen: Omen) -> None:
        """Ignore the Omen."""


def measure(supersteps: int, repeats: int) -> dict[str, Any]:
    """Time the bare and the traced cycle; returns seconds and per-superstep µs."""
    with tempfile.TemporaryDirectory() as folder:
        trace_path = Path(folder) / "cycle.sanctum-trace.json"
        bare = time_sanctum(build_sanctum_cycle(supersteps), sanctum_cycle_input, repeats)
        observed_rite = build_sanctum_cycle(supersteps, wards=[Listener()])
        observed = time_sanctum(observed_rite, sanctum_cycle_input, repeats)
        recorder = TraceRecorder(trace_path)
        traced_rite = build_sanctum_cycle(supersteps, wards=[recorder])
        traced = time_sanctum(traced_rite, sanctum_cycle_input, repeats)
        trace_bytes = trace_path.stat().st_size
        render = best_of(lambda: render_trace(trace_path), max(1, repeats // 3))
        html_bytes = trace_path.with_suffix(".html").stat().st_size
    return {
        "supersteps": supersteps,
        "bare_s": bare,
        "traced_s": traced,
        "observed_s": observed,
        "bare_us_per_superstep": bare / supersteps * 1e6,
        "observed_us_per_superstep": observed / supersteps * 1e6,
        "traced_us_per_superstep": traced / supersteps * 1e6,
        "ratio": traced / bare,
        "ratio_vs_observed": traced / observed,
        "target_ratio": TARGET_RATIO,
        "within_target": traced / bare <= TARGET_RATIO,
        "trace_bytes": trace_bytes,
        "render_s": render,
        "html_bytes": html_bytes,
    }


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, measure, print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--supersteps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = measure(args.supersteps, args.repeats)
    if args.json:
        print(json.dumps(result))
        return
    print(f"sequential cycle, {result['supersteps']} supersteps (best of {args.repeats})")
    print(f"  bare            {result['bare_us_per_superstep']:8.1f} µs/superstep")
    print(f"  no-op on_omen   {result['observed_us_per_superstep']:8.1f} µs/superstep")
    print(f"  TraceRecorder   {result['traced_us_per_superstep']:8.1f} µs/superstep")
    verdict = "ok" if result["within_target"] else "OVER TARGET"
    print(f"  ratio vs bare   {result['ratio']:8.2f}x  (target <= {TARGET_RATIO}x: {verdict})")
    print(f"  ratio vs no-op  {result['ratio_vs_observed']:8.2f}x  (the recorder's own share)")
    print(
        f"  trace file {result['trace_bytes'] / 1024:.0f} KiB; render_trace "
        f"{result['render_s'] * 1e3:.0f} ms -> {result['html_bytes'] / 1024:.0f} KiB HTML"
    )


if __name__ == "__main__":
    main()
