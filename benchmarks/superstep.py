"""Per-superstep overhead of sanctum vs LangGraph on the same graph shapes.

Shapes (both engines, one process, best of several warm runs):

* ``cycle``  — a sequential cycle of four no-op Sigils (the fourth counts and routes
  back to the first or to END); N supersteps.
* ``fanout`` — spread -> 8 workers -> gate (a join="all" barrier), 200 rounds by
  default; 3 supersteps per round.
* the ``cycle`` again with a TraceRecorder attached, against the bare cycle (sanctum
  only; measured by ``benchmarks/tracing.py``: target <= 2x per superstep).

Usage::

    .venv/bin/python benchmarks/superstep.py            # table
    .venv/bin/python benchmarks/superstep.py --json     # one JSON object

Other benchmark scripts (``benchmarks/codex.py``, ``benchmarks/tracing.py``) import the
shape builders below: ``build_sanctum_cycle(n, **compile_kwargs)``,
``build_sanctum_fanout(rounds, workers=8, **compile_kwargs)``, the LangGraph twins
``build_langgraph_cycle(n, checkpointer=None)`` / ``build_langgraph_fanout(...)``,
the matching ``*_input()`` helpers and the timing helpers ``best_of`` /
``time_sanctum`` / ``time_langgraph``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import time
from collections.abc import Callable
from typing import Any, TypedDict

from sanctum import END, Rite, Ritual

CYCLE_WIDTH = 4
"""Sigils in the sequential cycle."""

FANOUT_WORKERS = 8
"""Workers between spread and gate."""


# ------------------------------------------------------------------- sanctum shapes


def _noop(aether: dict[str, Any]) -> dict[str, Any]:
    return {}


def _count(aether: dict[str, Any]) -> dict[str, Any]:
    return {"i": aether["i"] + 1}


def build_sanctum_cycle(n: int, **compile_kwargs: Any) -> Rite:
    """A sequential cycle running ``n`` supersteps (``n`` a multiple of 4 is exact).

    ``compile_kwargs`` go to ``Ritual.compile`` (e.g. ``codex=``, ``wards=``);
    ``recursion_limit`` defaults to ``n``.
    """
    rounds = max(1, n // CYCLE_WIDTH)
    names = [f"s{k}" for k in range(CYCLE_WIDTH)]
    ritual = Ritual()
    for name in names[:-1]:
        ritual.add_sigil(name, _noop)
    ritual.add_sigil(names[-1], _count)
    ritual.set_entry_point(names[0])
    for a, b in itertools.pairwise(names):
        ritual.add_edge(a, b)
    first = names[0]
    ritual.add_conditional_edge(names[-1], lambda a: first if a["i"] < rounds else END)
    compile_kwargs.setdefault("recursion_limit", rounds * CYCLE_WIDTH)
    return ritual.compile(**compile_kwargs)


def sanctum_cycle_input() -> dict[str, Any]:
    """Initial Aether of the cycle."""
    return {"i": 0}


def build_sanctum_fanout(rounds: int, workers: int = FANOUT_WORKERS, **compile_kwargs: Any) -> Rite:
    """spread -> ``workers`` workers -> gate (join="all"), repeated ``rounds`` times."""
    ritual = Ritual()
    ritual.add_sigil("spread", _count)
    worker_names = [f"w{k}" for k in range(workers)]
    for name in worker_names:
        ritual.add_sigil(name, _noop)
        ritual.add_edge("spread", name)
    ritual.add_sigil("gate", _noop, join="all")
    for name in worker_names:
        ritual.add_edge(name, "gate")
    ritual.set_entry_point("spread")
    ritual.add_conditional_edge("gate", lambda a: "spread" if a["i"] < rounds else END)
    compile_kwargs.setdefault("recursion_limit", rounds * 3)
    return ritual.compile(**compile_kwargs)


# ----------------------------------------------------------------- LangGraph shapes


class _State(TypedDict, total=False):
    i: int


def _lg_noop(state: _State) -> dict[str, Any]:
    return {}


def _lg_count(state: _State) -> dict[str, Any]:
    return {"i": state["i"] + 1}


def build_langgraph_cycle(n: int, checkpointer: Any = None) -> Any:
    """The LangGraph twin of :func:`build_sanctum_cycle` (compiled graph)."""
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph

    rounds = max(1, n // CYCLE_WIDTH)
    names = [f"s{k}" for k in range(CYCLE_WIDTH)]
    graph = StateGraph(_State)
    for name in names[:-1]:
        graph.add_node(name, _lg_noop)
    graph.add_node(names[-1], _lg_count)
    graph.add_edge(LG_START, names[0])
    for a, b in itertools.pairwise(names):
        graph.add_edge(a, b)
    first = names[0]
    graph.add_conditional_edges(names[-1], lambda s: first if s["i"] < rounds else LG_END)
    return graph.compile(checkpointer=checkpointer)


def build_langgraph_fanout(rounds: int, workers: int = FANOUT_WORKERS) -> Any:
    """The LangGraph twin of :func:`build_sanctum_fanout`."""
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph

    graph = StateGraph(_State)
    graph.add_node("spread", _lg_count)
    worker_names = [f"w{k}" for k in range(workers)]
    for name in worker_names:
        graph.add_node(name, _lg_noop)
        graph.add_edge("spread", name)
    graph.add_node("gate", _lg_noop)
    graph.add_edge(worker_names, "gate")
    graph.add_edge(LG_START, "spread")
    graph.add_conditional_edges("gate", lambda s: "spread" if s["i"] < rounds else LG_END)
    return graph.compile()


def langgraph_config(supersteps: int, **configurable: Any) -> dict[str, Any]:
    """A LangGraph run config allowing ``supersteps`` steps."""
    config: dict[str, Any] = {"recursion_limit": supersteps + 10}
    if configurable:
        config["configurable"] = configurable
    return config


# ------------------------------------------------------------------------- timing


def best_of(run: Callable[[], Any], repeats: int) -> float:
    """Best wall time of ``repeats`` calls of ``run`` after one warm-up, in seconds."""
    run()
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def time_sanctum(rite: Rite, input_factory: Callable[[], dict[str, Any]], repeats: int) -> float:
    """Best seconds for one ``ainvoke`` of ``rite`` (the loop is created once, outside)."""
    loop = asyncio.new_event_loop()
    try:
        return best_of(lambda: loop.run_until_complete(rite.ainvoke(input_factory())), repeats)
    finally:
        loop.close()


def time_langgraph(
    graph: Any, input: dict[str, Any], config: dict[str, Any], repeats: int
) -> float:
    """Best seconds for one ``invoke`` of a LangGraph graph."""
    return best_of(lambda: graph.invoke(dict(input), config), repeats)


def measure(supersteps: int, fanout_rounds: int, repeats: int, lg_repeats: int) -> dict[str, Any]:
    """Run both shapes on both engines; figures in microseconds per superstep."""
    out: dict[str, Any] = {}
    rite = build_sanctum_cycle(supersteps)
    steps = (supersteps // CYCLE_WIDTH) * CYCLE_WIDTH
    sanctum_us = time_sanctum(rite, sanctum_cycle_input, repeats) / steps * 1e6
    lg = build_langgraph_cycle(supersteps)
    lg_us = time_langgraph(lg, {"i": 0}, langgraph_config(steps), lg_repeats) / steps * 1e6
    out["cycle"] = {
        "supersteps": steps,
        "sanctum_us": round(sanctum_us, 3),
        "langgraph_us": round(lg_us, 3),
        "ratio": round(lg_us / sanctum_us, 1),
    }
    rite = build_sanctum_fanout(fanout_rounds)
    steps = fanout_rounds * 3
    sanctum_us = time_sanctum(rite, sanctum_cycle_input, repeats) / steps * 1e6
    lgf = build_langgraph_fanout(fanout_rounds)
    lg_us = time_langgraph(lgf, {"i": 0}, langgraph_config(steps), lg_repeats) / steps * 1e6
    out["fanout"] = {
        "rounds": fanout_rounds,
        "supersteps": steps,
        "sanctum_us": round(sanctum_us, 3),
        "langgraph_us": round(lg_us, 3),
        "ratio": round(lg_us / sanctum_us, 1),
    }
    return out


def main(argv: list[str] | None = None) -> None:
    """Print the figures at 1,000 and 10,000 supersteps (table or ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeats", type=int, default=7, help="warm runs per sanctum figure")
    parser.add_argument("--lg-repeats", type=int, default=3, help="warm runs per LangGraph figure")
    args = parser.parse_args(argv)
    results = {
        "1000": measure(1000, 200, args.repeats, args.lg_repeats),
        "10000": measure(10_000, 2000, max(3, args.repeats // 2), 1),
    }
    from tracing import measure as measure_tracing  # same folder; imports this module

    traced = measure_tracing(1000, 10_000, rounds=25, repeats=1)
    if args.json:
        print(json.dumps({"unit": "us/superstep", "results": results, "traced_cycle": traced}))
        return
    print(f"{'size':>6} {'shape':>7} {'steps':>6} {'sanctum':>9} {'langgraph':>10} {'ratio':>7}")
    for size, shapes in results.items():
        for shape, row in shapes.items():
            print(
                f"{size:>6} {shape:>7} {row['supersteps']:>6} {row['sanctum_us']:>8.2f}µ "
                f"{row['langgraph_us']:>9.1f}µ {row['ratio']:>6.1f}x"
            )
    print(
        f"cycle with a TraceRecorder (marginal, 1000..10000 supersteps): "
        f"{traced['traced_us_per_superstep']:.2f}µ vs {traced['bare_us_per_superstep']:.2f}µ bare "
        f"= {traced['ratio']:.2f}x (target <= {traced['target_ratio']}x; "
        "details: benchmarks/tracing.py)"
    )


if __name__ == "__main__":
    main()
