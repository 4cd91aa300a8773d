"""What a Seal costs: sanctum's SqliteCodex vs LangGraph's SqliteSaver vs raw sqlite3.

Figures (one process, files on disk in a temporary folder, WAL mode and SQLite's
default ``synchronous=FULL`` for all three writers):

* ``cycle``   — the sequential cycle of ``benchmarks/superstep.py`` checkpointing to
  SQLite after every superstep: microseconds per superstep on sanctum (SqliteCodex)
  and on LangGraph (SqliteSaver), with and without the store.
* ``raw``     — one raw ``BEGIN``; ``INSERT``; ``COMMIT`` of a JSON text the size of
  one of sanctum's stored Seals, into a one-table database (``INTEGER PRIMARY KEY``
  plus one TEXT column) with the same pragmas: the physical floor.
  ``superstep_vs_raw`` = whole sealed superstep (engine included) / raw, the median
  of per-round ratios; each round runs half its raw commits right before and half
  right after the sealed run, so a busy moment of the disk hits both sides.
* ``bytes``   — stored bytes of one Seal at superstep 10 and at superstep 1,000 of a
  cycle whose Aether keeps the same size.
* ``growth``  — a 500-superstep conversation appending one 1 KB message per
  superstep: the SQLite file size against the total size of the messages.

Usage::

    .venv/bin/python benchmarks/codex.py           # table
    .venv/bin/python benchmarks/codex.py --json    # one JSON object
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from superstep import (
    CYCLE_WIDTH,
    best_of,
    build_langgraph_cycle,
    build_sanctum_cycle,
    langgraph_config,
    sanctum_cycle_input,
)

from sanctum import END, AetherSchema, Conduit, Ritual
from sanctum.aether.reducers import append
from sanctum.codex import SqliteCodex


def _sanctum_us(supersteps: int, folder: Path, repeats: int, with_codex: bool) -> float:
    loop = asyncio.new_event_loop()
    codex = SqliteCodex(folder / "sanctum.db") if with_codex else None
    rite = build_sanctum_cycle(supersteps, codex=codex)
    try:
        seconds = best_of(
            lambda: loop.run_until_complete(rite.ainvoke(sanctum_cycle_input())), repeats
        )
    finally:
        if codex is not None:
            loop.run_until_complete(codex.aclose())
        loop.close()
    return seconds / supersteps * 1e6


def _langgraph_us(supersteps: int, folder: Path, repeats: int) -> float:
    """LangGraph's cycle without a checkpointer (its engine cost alone)."""
    graph = build_langgraph_cycle(supersteps)
    config = langgraph_config(supersteps)
    return best_of(lambda: graph.invoke({"i": 0}, config), repeats) / supersteps * 1e6


def _seal_json_size(folder: Path) -> int:
    """Bytes of one stored Seal of the cycle (seal row + the values it wrote)."""
    path = folder / "sanctum.db"
    db = sqlite3.connect(path)
    try:
        return _seal_bytes(db)[-1]
    finally:
        db.close()


def _raw_db(folder: Path) -> sqlite3.Connection:
    """The physical floor's database: one table, WAL, synchronous=FULL, kept open."""
    db = sqlite3.connect(folder / "raw.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS raw (id INTEGER PRIMARY KEY, data TEXT NOT NULL)")
    return db


def _raw_us(db: sqlite3.Connection, size: int, count: int) -> float:
    """Microseconds per BEGIN; INSERT of ``size`` bytes of JSON; COMMIT."""
    text = json.dumps({"payload": "x" * max(0, size - 16)})
    started = time.perf_counter()
    for _ in range(count):
        db.execute("BEGIN")
        db.execute("INSERT INTO raw (data) VALUES (?)", (text,))
        db.execute("COMMIT")
    return (time.perf_counter() - started) / count * 1e6


def _seal_bytes(db: sqlite3.Connection) -> list[int]:
    """Stored bytes of every Seal, in write order: its row plus the values it added."""
    out: list[int] = []
    seen: set[int] = set()
    sizes = {
        row[0]: row[1]
        for row in db.execute(
            "SELECT id, length(body) + length(digest) + 8 * (prev IS NOT NULL) FROM sanctum_values"
        )
    }
    for row in db.execute(
        # key, superstep, timestamp, written: 8 bytes each; the invocation_id is stored
        # once per Invocation (sanctum_invocations), not per Seal.
        "SELECT 32 + length(seal_id) + length(frontier) + length(metadata) + length(aether), "
        "aether FROM sanctum_seals ORDER BY key"
    ):
        refs = json.loads(row[1]).values()
        fresh = [i for i in refs if isinstance(i, int) and i not in seen]
        seen.update(fresh)
        out.append(row[0] + sum(sizes[i] for i in fresh))
    return out


def _constant_cycle(supersteps: int, codex: SqliteCodex) -> Any:
    def tick(aether: dict[str, Any]) -> dict[str, Any]:
        step = int(aether["step"]) + 1
        return {"step": f"{step:08d}", "status": f"tick {step * 7:08d}"}

    ritual = Ritual()
    ritual.add_sigil("tick", tick)
    ritual.set_entry_point("tick")
    ritual.add_conditional_edge("tick", lambda a: "tick" if int(a["step"]) < supersteps else END)
    return ritual.compile(codex=codex, recursion_limit=supersteps + 1)


def _bytes_per_seal(folder: Path) -> dict[str, int]:
    path = folder / "constant.db"
    codex = SqliteCodex(path, synchronous="NORMAL")
    rite = _constant_cycle(1010, codex)
    asyncio.run(rite.ainvoke({"step": "00000000", "status": "start", "notes": "n" * 512}))
    db = sqlite3.connect(path)
    try:
        sizes = _seal_bytes(db)
    finally:
        db.close()
    return {"superstep_10": sizes[9], "superstep_1000": sizes[999]}


def _growth(folder: Path, supersteps: int = 500) -> dict[str, Any]:
    path = folder / "growth.db"
    codex = SqliteCodex(path, synchronous="NORMAL")

    def talk(aether: dict[str, Any]) -> dict[str, Any]:
        turn = len(aether["messages"])
        content = f"turn {turn:05d} " + "m" * 1000
        return {"messages": [{"role": "user", "content": content[:1000]}]}

    ritual = Ritual(AetherSchema({"messages": Conduit(reducer=append)}))
    ritual.add_sigil("talk", talk)
    ritual.set_entry_point("talk")
    ritual.add_conditional_edge(
        "talk", lambda a: "talk" if len(a["messages"]) < supersteps else END
    )
    rite = ritual.compile(codex=codex, recursion_limit=supersteps + 1)
    final = asyncio.run(rite.ainvoke({"messages": []}))
    asyncio.run(codex.aclose())
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    message_bytes = sum(len(json.dumps(m)) for m in final["messages"])
    size = path.stat().st_size
    return {
        "supersteps": supersteps,
        "message_bytes": message_bytes,
        "file_bytes": size,
        "ratio": round(size / message_bytes, 2),
        "full_copies_would_be": round(supersteps * (supersteps + 1) / 2 / supersteps, 1),
    }


def _interleaved(supersteps: int, folder: Path, rounds: int) -> dict[str, float]:
    """sanctum, raw inserts and LangGraph in alternation (the disk's mood hits all three).

    Returns medians: ``sealed_us``, ``raw_us``, ``langgraph_us`` per superstep, and the
    medians of the per-round ratios ``vs_raw`` and ``langgraph_vs_sanctum``.
    """
    from langgraph.checkpoint.sqlite import SqliteSaver

    loop = asyncio.new_event_loop()
    codex = SqliteCodex(folder / "sanctum.db")
    rite = build_sanctum_cycle(supersteps, codex=codex)
    loop.run_until_complete(rite.ainvoke(sanctum_cycle_input()))  # warm-up, sizes the Seal
    size = _seal_json_size(folder)
    conn = sqlite3.connect(folder / "langgraph.db", check_same_thread=False)
    graph = build_langgraph_cycle(supersteps, checkpointer=SqliteSaver(conn))
    graph.invoke({"i": 0}, langgraph_config(supersteps, thread_id="warm-up"))
    raw_db = _raw_db(folder)
    _raw_us(raw_db, size, supersteps)  # warm-up: the WAL file exists and has its size
    sealed: list[float] = []
    raw: list[float] = []
    lang: list[float] = []
    half = max(1, supersteps // 2)
    try:
        for round_no in range(rounds):
            gc.collect()
            config = langgraph_config(supersteps, thread_id=f"round-{round_no}")
            if round_no % 2:  # alternate LangGraph's place so drift hits both sides
                started = time.perf_counter()
                graph.invoke({"i": 0}, config)
                lang.append((time.perf_counter() - started) / supersteps * 1e6)
            # Raw commits right before and right after the sealed run: the ratio
            # compares neighbours in time, so a busy disk moment hits both.
            before = _raw_us(raw_db, size, half)
            started = time.perf_counter()
            loop.run_until_complete(rite.ainvoke(sanctum_cycle_input()))
            sealed.append((time.perf_counter() - started) / supersteps * 1e6)
            raw.append((before + _raw_us(raw_db, size, half)) / 2)
            if not round_no % 2:
                started = time.perf_counter()
                graph.invoke({"i": 0}, config)
                lang.append((time.perf_counter() - started) / supersteps * 1e6)
    finally:
        loop.run_until_complete(codex.aclose())
        loop.close()
        conn.close()
        raw_db.close()
    return {
        "size": size,
        "sealed_us": statistics.median(sealed),
        "raw_us": statistics.median(raw),
        "langgraph_us": statistics.median(lang),
        "vs_raw": statistics.median(s / r for s, r in zip(sealed, raw, strict=True)),
        "langgraph_vs_sanctum": statistics.median(g / s for g, s in zip(lang, sealed, strict=True)),
    }


def measure(supersteps: int, repeats: int) -> dict[str, Any]:
    """All figures; times in microseconds per superstep (medians of interleaved rounds)."""
    supersteps = (supersteps // CYCLE_WIDTH) * CYCLE_WIDTH
    with tempfile.TemporaryDirectory(prefix="sanctum-bench-") as tmp:
        folder = Path(tmp)
        plain = _sanctum_us(supersteps, folder, repeats, with_codex=False)
        lg_plain = _langgraph_us(supersteps, folder, 3)
        timed = _interleaved(supersteps, folder, repeats)
        return {
            "cycle": {
                "supersteps": supersteps,
                "sanctum_us": round(timed["sealed_us"], 1),
                "sanctum_without_codex_us": round(plain, 1),
                "langgraph_us": round(timed["langgraph_us"], 1),
                "langgraph_without_saver_us": round(lg_plain, 1),
                "langgraph_vs_sanctum": round(timed["langgraph_vs_sanctum"], 2),
            },
            "raw": {
                "seal_bytes": int(timed["size"]),
                "insert_commit_us": round(timed["raw_us"], 1),
                "superstep_vs_raw": round(timed["vs_raw"], 2),
            },
            "bytes": _bytes_per_seal(folder),
            "growth": _growth(folder),
        }


def main(argv: list[str] | None = None) -> None:
    """Print the figures (table or ``--json``)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--supersteps", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args(argv)
    result = measure(args.supersteps, args.repeats)
    if args.json:
        print(json.dumps(result))
        return
    cycle, raw, size, growth = result["cycle"], result["raw"], result["bytes"], result["growth"]
    print(f"sequential cycle, {cycle['supersteps']} supersteps, a Seal after each (µs/superstep)")
    print(
        f"  sanctum   {cycle['sanctum_us']:>9.1f}   "
        f"(without codex {cycle['sanctum_without_codex_us']:.1f})"
    )
    print(
        f"  langgraph {cycle['langgraph_us']:>9.1f}   (without saver "
        f"{cycle['langgraph_without_saver_us']:.1f})   "
        f"-> sanctum {cycle['langgraph_vs_sanctum']}x faster"
    )
    print(
        f"raw INSERT+COMMIT of {raw['seal_bytes']} B: {raw['insert_commit_us']:.1f} µs   "
        f"sealed superstep / raw = {raw['superstep_vs_raw']}x (median of interleaved rounds)"
    )
    print(
        f"bytes per Seal: superstep 10 = {size['superstep_10']}, "
        f"superstep 1,000 = {size['superstep_1000']}"
    )
    print(
        f"growth: {growth['supersteps']} x 1 KB messages = {growth['message_bytes']} B, "
        f"file = {growth['file_bytes']} B ({growth['ratio']}x; full copies would be "
        f"~{growth['full_copies_would_be']}x)"
    )


if __name__ == "__main__":
    main()
