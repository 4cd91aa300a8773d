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

``--secrets`` runs with a :class:`~sanctum.wards.Secrets` policy (what a ritual file
that reads ``${VAR}`` gets): masking must cost the change too. ``--shape nested``
keeps the transcript in a ``merge_dict`` Conduit (``{"messages": [...]}`` grown per
turn); ``--shape text`` grows a string by appending
(a running log). Timing targets live here, never in the test suite.

Usage::

    .venv/bin/python benchmarks/long_run.py                    # table, T = 3,000
    .venv/bin/python benchmarks/long_run.py --turns 500 --json  # one JSON object
    .venv/bin/python benchmarks/long_run.py --stores sqlite --no-langgraph
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
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
from sanctum.wards import Secrets

WINDOW = 20
"""Supersteps in the first and last windows whose medians are compared."""

_TEXT = (
    "the model answered with a short plan and then called the search spell for the "
    "latest figures about local inference servers quantised weights context windows "
    "tokens per second memory budgets and a careful summary of what changed since "
    "the previous turn including errors retries and the tool results it repaired"
)
_WORDS = _TEXT.split(" ")


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


def build_sanctum(
    turns: int, shape: str, stamps: list[float], codex: Codex | None, secrets: bool = False
) -> Rite:
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
    veil = Secrets(["sk-bench-0123456789abcdef"]) if secrets else None
    return ritual.compile(codex=codex, recursion_limit=turns + 10, secrets=veil)


def windows(stamps: list[float]) -> dict[str, float]:
    gaps = [(b - a) * 1e3 for a, b in itertools.pairwise(stamps)]
    first = statistics.median(gaps[:WINDOW])
    last = statistics.median(gaps[-WINDOW:])
    return {"first_ms": first, "last_ms": last, "growth": last / first}


def disk_bytes(path: Path) -> int:
    """The SQLite file and its WAL, after folding the WAL into the file."""
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return sum(p.stat().st_size for p in path.parent.iterdir() if p.name.startswith(path.name))


def load_child(store: str, where: dict[str, str], measure: str) -> dict[str, Any]:
    """Load the latest checkpoint in a fresh process; ``measure``: time or memory."""
    spec = json.dumps({"store": store, "measure": measure, **where})
    out = subprocess.run(
        [sys.executable, __file__, "--child", spec], capture_output=True, text=True, check=False
    )
    if out.returncode:
        raise SystemExit(f"the load in a fresh process failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _open_store(spec: dict[str, str]) -> Codex:
    if spec["store"] == "sqlite":
        return SqliteCodex(spec["path"])
    from sanctum.codex.postgres import PostgresCodex

    return PostgresCodex(spec["url"], schema=spec["schema"])


def _child(spec: dict[str, str]) -> None:
    """The fresh process: warm up on one load, then time (or trace) a second one."""
    import tracemalloc

    tracing = spec["measure"] == "memory"
    if spec["store"] == "langgraph":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        graph = build_langgraph(0, SqliteSaver(sqlite3.connect(spec["path"])))
        config = {"configurable": {"thread_id": spec["invocation"]}}
        graph.get_state(config)
        if tracing:
            tracemalloc.start()
        began = time.perf_counter()
        values = graph.get_state(config).values
        seconds = time.perf_counter() - began
    else:
        codex = _open_store(spec)

        async def load() -> tuple[float, Any]:
            await codex.get(spec["invocation"])
            if tracing:
                tracemalloc.start()
            began = time.perf_counter()
            seal = await codex.get(spec["invocation"])
            took = time.perf_counter() - began
            assert seal is not None
            await codex.aclose()
            return took, dict(seal.aether)

        seconds, values = asyncio.run(load())
    peak = tracemalloc.get_traced_memory()[1] if tracing else 0
    state = len(json.dumps(values, separators=(",", ":")))
    print(json.dumps({"seconds": seconds, "peak": peak, "state": state}))


def build_langgraph(turns: int, checkpointer: Any, stamps: list[float] | None = None) -> Any:
    """The same shape on LangGraph: an ``operator.add`` transcript, one node, a loop."""
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph

    clock = time.perf_counter
    marks = stamps if stamps is not None else []

    def step(state: _LangGraphState) -> dict[str, Any]:
        marks.append(clock())
        turn = state["turn"]
        return {"messages": [message(turn)], "turn": turn + 1}

    graph = StateGraph(_LangGraphState)
    graph.add_node("step", step)
    graph.add_edge(LG_START, "step")
    graph.add_conditional_edges("step", lambda s: "step" if s["turn"] < turns else LG_END)
    return graph.compile(checkpointer=checkpointer)


class _LangGraphState(TypedDict):
    messages: Annotated[list[dict[str, Any]], operator.add]
    turn: int


def run_langgraph(turns: int, folder: Path) -> dict[str, Any]:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = folder / "langgraph.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    stamps: list[float] = []
    graph = build_langgraph(turns, SqliteSaver(conn), stamps)
    config = {"configurable": {"thread_id": "long"}, "recursion_limit": turns + 10}
    graph.invoke({"messages": [], "turn": 0}, config, durability="sync")
    conn.close()
    result: dict[str, Any] = windows(stamps)
    result["disk_over_payload"] = disk_bytes(path) / payload_bytes(turns)
    where = {"path": str(path), "invocation": "long"}
    result.update(_loads("langgraph", where))
    return result


def _loads(store: str, where: dict[str, str]) -> dict[str, float]:
    timed = min(
        (load_child(store, where, "time") for _ in range(3)), key=lambda r: float(r["seconds"])
    )
    memory = load_child(store, where, "memory")
    return {
        "load_ms": timed["seconds"] * 1e3,
        "load_peak_over_state": memory["peak"] / memory["state"],
    }


def run_sanctum(
    store: str, turns: int, shape: str, folder: Path, pg_url: str | None, secrets: bool = False
) -> dict[str, Any]:
    """One long run on one store, then (SQLite, PostgreSQL) loads in fresh processes."""
    for turn in range(turns + 1):
        message(turn)
    invocation = f"long-{shape}-{os.getpid()}"
    where: dict[str, str] = {"invocation": invocation}
    if store == "sqlite":
        where["path"] = str(folder / f"sanctum-{shape}.db")
    elif store == "postgres":
        assert pg_url is not None
        where.update(url=pg_url, schema=f"bench_{os.getpid()}_{shape}")
    codex = MemoryCodex() if store == "memory" else _open_store({"store": store, **where})
    stamps: list[float] = []
    rite = build_sanctum(turns, shape, stamps, codex, secrets)

    async def go() -> None:
        await rite.ainvoke({}, invocation_id=invocation)
        await codex.aclose()

    asyncio.run(go())
    result: dict[str, Any] = windows(stamps)
    if store == "sqlite":
        result["disk_over_payload"] = disk_bytes(Path(where["path"])) / payload_bytes(turns)
    if store != "memory":
        result.update(_loads(store, where))
    if store == "postgres":
        import psycopg

        with psycopg.connect(where["url"], autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{where["schema"]}" CASCADE')
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--shape", choices=["list", "nested", "text"], default="list")
    parser.add_argument("--stores", default="memory,sqlite,postgres")
    parser.add_argument("--postgres", default=os.environ.get("SANCTUM_TEST_POSTGRES_URL"))
    parser.add_argument("--no-langgraph", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--secrets", action="store_true", help="mask a secret (a Secrets policy)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(json.loads(args.child))
        return
    results: dict[str, Any] = {"turns": args.turns, "shape": args.shape, "window": WINDOW}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for store in args.stores.split(","):
            if store == "postgres" and not args.postgres:
                results["sanctum_postgres"] = "skipped: set SANCTUM_TEST_POSTGRES_URL"
                continue
            results[f"sanctum_{store}"] = run_sanctum(
                store, args.turns, args.shape, folder, args.postgres, args.secrets
            )
        if not args.no_langgraph and args.shape == "list":
            try:
                results["langgraph_sqlite"] = run_langgraph(args.turns, folder)
            except ImportError:
                results["langgraph_sqlite"] = "not installed (pip install -e '.[bench]')"
    if args.json:
        print(json.dumps(results))
    else:
        print_table(results)


_COLUMNS = (
    ("first_ms", "first ms", ".3f"),
    ("last_ms", "last ms", ".3f"),
    ("growth", "growth", ".2f"),
    ("disk_over_payload", "disk/payload", ".2f"),
    ("load_ms", "load ms", ".1f"),
    ("load_peak_over_state", "load peak/state", ".2f"),
)


def print_table(results: dict[str, Any]) -> None:
    print(
        f"{results['turns']} supersteps, shape {results['shape']!r}, medians over "
        f"{WINDOW}-superstep windows"
    )
    print(f"{'':18}" + "".join(f"{title:>16}" for _key, title, _fmt in _COLUMNS))
    for name, row in results.items():
        if not name.startswith(("sanctum_", "langgraph_")):
            continue
        if not isinstance(row, dict):
            print(f"{name:18}{row}")
            continue
        cells = (
            f"{format(row[key], fmt):>16}" if key in row else f"{'-':>16}"
            for key, _title, fmt in _COLUMNS
        )
        print(f"{name:18}" + "".join(cells))


if __name__ == "__main__":
    main()
