"""Long runs: cost per superstep as a conversation grows, storage, and the cost of a resume.

The shape: one Sigil appends one ~1 KB message per superstep to a transcript (an
``append`` Conduit) and routes back to itself, T supersteps (3,000 by default), a Seal
after every superstep. Measured side by side on sanctum (MemoryCodex, SqliteCodex and,
when ``SANCTUM_TEST_POSTGRES_URL`` or ``--postgres`` names a server, PostgresCodex) and
on LangGraph (``SqliteSaver``, ``durability="sync"``: durable before the next step, as
every sanctum Seal is):

* ``first_ms`` / ``last_ms`` — median milliseconds per superstep (the time between two
  activations of the Sigil, so the Seal write, the merge and the scheduling count) over
  the first and the last 20 supersteps; ``growth`` = last / first.
* ``disk_over_payload`` — bytes on disk (SQLite file plus its WAL, after a checkpoint)
  over the payload (the bytes of the messages' JSON).
* ``load_ms`` / ``load_peak_over_state`` — in a fresh process: the time to load the
  latest checkpoint (``codex.get`` / ``graph.get_state``) and the peak of the memory
  Python allocated while doing it (tracemalloc, measured in a second fresh process),
  over the JSON size of the state it returned.

``--shape nested`` keeps the transcript in a ``merge_dict`` Conduit
(``{"messages": [...]}`` grown per turn); ``--shape text`` grows a string by appending
(a running log). Timing targets live here, never in the test suite.

Usage::

    .venv/bin/python benchmarks/long_run.py                    # table, T = 3,000
    .venv/bin/python benchmarks/long_run.py --turns 500 --json  # one JSON object
    .venv/bin/python benchmarks/long_run.py --stores sqlite --no-langgraph
"""

from __future__ import annotations

import argparse
import asyncio
import json
import operator
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from sanctum import END, AetherSchema, Conduit, Rite, Ritual
from sanctum.aether.reducers import append, merge_dict
from sanctum.codex import Codex, MemoryCodex, SqliteCodex

WINDOW = 20
"""Supersteps in the first and last windows whose medians are compared."""

_WORDS = (
    "the model answered with a short plan and then called the search spell for the "
    "latest figures about local inference servers quantised weights context windows "
    "tokens per second memory budgets and a careful summary of what changed since the "
    "previous turn including errors retries and the tool results it had to repair"
).split()


_MESSAGES: dict[int, dict[str, Any]] = {}


def message(turn: int) -> dict[str, Any]:
    """A ~1 KB chat message, different every turn (seeded, so runs compare; cached, so
    a Sigil pays the same for it at every turn)."""
    cached = _MESSAGES.get(turn)
    if cached is not None:
        return dict(cached)
    rng = random.Random(turn)
    words: list[str] = []
    size = 0
    while size < 960:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    role = "user" if turn % 2 else "assistant"
    _MESSAGES[turn] = {"role": role, "content": " ".join(words), "turn": turn}
    return dict(_MESSAGES[turn])


def payload_bytes(turns: int) -> int:
    """Bytes of the messages' compact JSON: what the transcript holds."""
    return sum(len(json.dumps(message(t), separators=(",", ":"))) for t in range(turns))


def build_sanctum(turns: int, shape: str, stamps: list[float], codex: Codex | None) -> Rite:
    """The long-run Ritual on sanctum; every activation appends a time stamp."""
    clock = time.perf_counter

    if shape == "nested":
        conduits = {
            "chat": Conduit(reducer=merge_dict, type=dict, default={}),
            "turn": Conduit(type=int, default=0),
        }

        def step(aether: dict[str, Any]) -> dict[str, Any]:
            stamps.append(clock())
            turn = aether["turn"]
            messages = aether["chat"].get("messages", [])
            return {"chat": {"messages": [*messages, message(turn)]}, "turn": turn + 1}

    elif shape == "text":
        conduits = {"log": Conduit(type=str, default=""), "turn": Conduit(type=int, default=0)}

        def step(aether: dict[str, Any]) -> dict[str, Any]:
            stamps.append(clock())
            turn = aether["turn"]
            return {"log": aether["log"] + message(turn)["content"] + "\n", "turn": turn + 1}

    else:
        conduits = {
            "messages": Conduit(reducer=append, type=list, default=[]),
            "turn": Conduit(type=int, default=0),
        }

        def step(aether: dict[str, Any]) -> dict[str, Any]:
            stamps.append(clock())
            turn = aether["turn"]
            return {"messages": [message(turn)], "turn": turn + 1}

    def route(aether: dict[str, Any]) -> str:
        return "step" if aether["turn"] < turns else END

    ritual = Ritual(AetherSchema(conduits))
    ritual.add_sigil("step", step)
    ritual.add_conditional_edge("step", route)
    ritual.set_entry_point("step")
    return ritual.compile(codex=codex, recursion_limit=turns + 10)


def windows(stamps: list[float]) -> dict[str, float]:
    gaps = [(b - a) * 1e3 for a, b in zip(stamps, stamps[1:], strict=False)]
    first = statistics.median(gaps[:WINDOW])
    last = statistics.median(gaps[-WINDOW:])
    return {"first_ms": first, "last_ms": last, "growth": last / first}


def disk_bytes(path: Path) -> int:
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return sum(p.stat().st_size for p in path.parent.iterdir() if p.name.startswith(path.name))


def load_child(store: str, where: str, invocation: str, measure: str) -> dict[str, Any]:
    """Run one fresh-process load; ``measure`` is ``time`` or ``memory``."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", store, where, invocation, measure],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(f"the load in a fresh process failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _child(store: str, where: str, invocation: str, measure: str) -> None:
    import tracemalloc

    def state_size(values: Any) -> int:
        return len(json.dumps(values, separators=(",", ":"), default=str))

    if store == "langgraph":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(sqlite3.connect(where, check_same_thread=False))
        graph = build_langgraph(0, saver)
        config = {"configurable": {"thread_id": invocation}}
        graph.get_state(config)  # warm the code paths on a first load
        if measure == "memory":
            tracemalloc.start()
        began = time.perf_counter()
        values = graph.get_state(config).values
        seconds = time.perf_counter() - began
    else:
        codex: Codex
        if store == "sqlite":
            codex = SqliteCodex(where)
        else:
            from sanctum.codex.postgres import PostgresCodex

            codex = PostgresCodex(where)

        async def load() -> tuple[float, Any]:
            await codex.invocations(1)  # open the store and warm the code paths
            if measure == "memory":
                tracemalloc.start()
            began = time.perf_counter()
            seal = await codex.get(invocation)
            seconds = time.perf_counter() - began
            assert seal is not None
            return seconds, seal.aether

        seconds, values = asyncio.run(load())
    peak = tracemalloc.get_traced_memory()[1] if measure == "memory" else 0
    print(json.dumps({"seconds": seconds, "peak": peak, "state": state_size(values)}))


class _LangGraphState(TypedDict):
    messages: Annotated[list[dict[str, Any]], operator.add]
    turn: int


def build_langgraph(turns: int, checkpointer: Any) -> Any:
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph

    stamps: list[float] = getattr(checkpointer, "_bench_stamps", [])

    def step(state: _LangGraphState) -> dict[str, Any]:
        stamps.append(time.perf_counter())
        turn = state["turn"]
        return {"messages": [message(turn)], "turn": turn + 1}

    graph = StateGraph(_LangGraphState)
    graph.add_node("step", step)
    graph.add_edge(LG_START, "step")
    graph.add_conditional_edges("step", lambda s: "step" if s["turn"] < turns else LG_END)
    return graph.compile(checkpointer=checkpointer)


def run_langgraph(turns: int, folder: Path) -> dict[str, Any]:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = folder / "langgraph.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    stamps: list[float] = []
    saver._bench_stamps = stamps  # type: ignore[attr-defined]
    graph = build_langgraph(turns, saver)
    config = {"configurable": {"thread_id": "long"}, "recursion_limit": turns + 10}
    graph.invoke({"messages": [], "turn": 0}, config, durability="sync")
    conn.close()
    result: dict[str, Any] = windows(stamps)
    result["disk_over_payload"] = disk_bytes(path) / payload_bytes(turns)
    timed = load_child("langgraph", str(path), "long", "time")
    memory = load_child("langgraph", str(path), "long", "memory")
    result["load_ms"] = timed["seconds"] * 1e3
    result["load_peak_over_state"] = memory["peak"] / memory["state"]
    return result


def run_sanctum(
    store: str, turns: int, shape: str, folder: Path, pg_url: str | None
) -> dict[str, Any]:
    stamps: list[float] = []
    codex: Codex
    where = ""
    if store == "memory":
        codex = MemoryCodex()
    elif store == "sqlite":
        where = str(folder / f"sanctum-{shape}.db")
        codex = SqliteCodex(where)
    else:
        from sanctum.codex.postgres import PostgresCodex

        assert pg_url is not None
        where = pg_url
        codex = PostgresCodex(pg_url, schema=f"bench_{os.getpid()}_{shape}")
    for turn in range(turns + 1):
        message(turn)
    rite = build_sanctum(turns, shape, stamps, codex)
    invocation = f"long-{shape}-{os.getpid()}"

    async def go() -> None:
        await rite.ainvoke({}, invocation_id=invocation)
        await codex.aclose()

    asyncio.run(go())
    result: dict[str, Any] = windows(stamps)
    if store == "sqlite":
        result["disk_over_payload"] = disk_bytes(Path(where)) / payload_bytes(turns)
    if store in ("sqlite", "postgres"):
        if store == "postgres":
            where = f"{pg_url}?options=-csearch_path%3Dbench_{os.getpid()}_{shape}"
            where = _pg_child_url(pg_url, f"bench_{os.getpid()}_{shape}")  # type: ignore[arg-type]
        timed = load_child(store, where, invocation, "time")
        memory = load_child(store, where, invocation, "memory")
        result["load_ms"] = timed["seconds"] * 1e3
        result["load_peak_over_state"] = memory["peak"] / memory["state"]
    if store == "postgres":
        _drop_schema(pg_url, f"bench_{os.getpid()}_{shape}")  # type: ignore[arg-type]
    return result


def _pg_child_url(url: str, schema: str) -> str:
    return json.dumps({"url": url, "schema": schema})


def _drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--shape", choices=["list", "nested", "text"], default="list")
    parser.add_argument("--stores", default="memory,sqlite,postgres")
    parser.add_argument("--postgres", default=os.environ.get("SANCTUM_TEST_POSTGRES_URL"))
    parser.add_argument("--no-langgraph", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        store, where, invocation, measure = args.child
        if store == "postgres":
            spec = json.loads(where)
            from sanctum.codex import postgres as pg_module

            real = pg_module.PostgresCodex
            pg_module.PostgresCodex = lambda _w: real(spec["url"], schema=spec["schema"])  # type: ignore[assignment,misc]
            where = spec["url"]
        _child(store, where, invocation, measure)
        return
    results: dict[str, Any] = {"turns": args.turns, "shape": args.shape, "window": WINDOW}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for store in args.stores.split(","):
            if store == "postgres" and not args.postgres:
                continue
            results[f"sanctum_{store}"] = run_sanctum(
                store, args.turns, args.shape, folder, args.postgres
            )
        if not args.no_langgraph and args.shape == "list":
            try:
                results["langgraph_sqlite"] = run_langgraph(args.turns, folder)
            except ImportError:
                results["langgraph_sqlite"] = "not installed (pip install -e '.[bench]')"
    if args.json:
        print(json.dumps(results))
        return
    print(f"{args.turns} supersteps, shape {args.shape!r}, medians over {WINDOW}-superstep windows")
    header = f"{'':18}{'first ms':>10}{'last ms':>10}{'growth':>8}{'disk/payload':>14}{'load ms':>9}{'load peak/state':>17}"
    print(header)
    for name, row in results.items():
        if not isinstance(row, dict):
            if name.startswith(("sanctum", "langgraph")):
                print(f"{name:18}{row}")
            continue

        def cell(key: str, width: int, fmt: str, row: dict[str, Any] = row) -> str:
            return f"{format(row[key], fmt):>{width}}" if key in row else f"{'-':>{width}}"

        print(
            f"{name:18}{cell('first_ms', 10, '.3f')}{cell('last_ms', 10, '.3f')}"
            f"{cell('growth', 8, '.2f')}{cell('disk_over_payload', 14, '.2f')}"
            f"{cell('load_ms', 9, '.1f')}{cell('load_peak_over_state', 17, '.2f')}"
        )


if __name__ == "__main__":
    main()
