"""Load and compile a generated ritual of 500 sigils and 1,000 edges (target < 300 ms).

Run: .venv/bin/python benchmarks/ritual_file.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from sanctum.ritualfile import compile_ritual, load_ritual

SIGILS = 499  # plus one more fed from START: 500 sigils


def generate() -> str:
    """A ritual where each sigil fans out to the next two (999 edges) plus one route."""
    lines = [
        "sanctum: 1",
        "name: big",
        "aether:",
        "  count: {reducer: add, default: 0}",
        "entry: s0",
        "sigils:",
    ]
    edges = 0
    for i in range(SIGILS):
        targets = [f"s{j}" for j in (i + 1, i + 2) if j < SIGILS]
        lines.append(f"  s{i}:")
        lines.append('    set: {count: "1"}')
        if targets:
            lines.append(f"    next: [{', '.join(targets)}]")
            edges += len(targets)
        else:
            lines.append("    routes:")
            lines.append('      - when: "count < 0"')
            lines.append("        to: s0")
            lines.append('      - when: "count < -1"')
            lines.append("        to: s1")
            lines.append("      - to: END")
            edges += 3
    lines += ["  extra:", '    set: {count: "1"}', "    next: END"]
    lines[4] = "entry: [s0, extra]"
    edges += 2
    assert edges >= 1000, edges
    return "\n".join(lines) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.yaml"
        path.write_text(generate(), encoding="utf-8")
        times = []
        for _ in range(7):
            started = time.perf_counter()
            rite = compile_ritual(load_ritual(path))
            times.append(time.perf_counter() - started)
        assert len(rite.manifest["sigils"]) == SIGILS + 1
    best, median = min(times) * 1000, statistics.median(times) * 1000
    verdict = "OK" if median < 300 else "SLOW"
    print(
        f"load+compile {SIGILS + 1} sigils / 1,000 edges: best {best:.1f} ms, "
        f"median {median:.1f} ms (target < 300 ms) {verdict}"
    )


if __name__ == "__main__":
    main()
