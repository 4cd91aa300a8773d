"""An oracle entry's ``max_concurrency`` keys: checked where written, built as limits."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sanctum.oracle.limits import LimitedOracle
from tests.ritualfile.helpers import problems_of, write

BOUNDED = """
sanctum: 1
name: bounded
inputs:
  q: {type: string}
aether:
  a: {}
oracles:
  gpu: {provider: ollama, model: m, base_url: "http://gpu-3:11434", %s}
  plain: {provider: ollama, model: m, base_url: "http://gpu-3:11434"}
entry: ask
sigils:
  ask: {oracle: gpu, prompt: "{{ q }}", output: a, next: other}
  other: {oracle: plain, prompt: "{{ q }}", output: a, next: END}
"""


def test_bad_bounds_are_reported_at_their_value(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: bad
        aether: {a: {}}
        oracles:
          zero: {provider: ollama, model: m, max_concurrency: 0}
          negative: {provider: ollama, model: m, max_concurrency: -2}
          boolean: {provider: scripted, max_concurrency: true}
          text: {provider: openai, model: m, base_url: "http://h/v1", max_concurrency_global: "2"}
          half: {provider: ollama, model: m, max_concurrency_global: 1.5}
        entry: a
        sigils:
          a: {set: {a: "1"}, next: END}
        """,
    )
    assert problems_of(path) == [
        "5:55: `oracles.zero.max_concurrency` should be 1 or more, not 0",
        "6:59: `oracles.negative.max_concurrency` should be 1 or more, not -2",
        "7:50: `oracles.boolean.max_concurrency` should be an integer",
        "8:87: `oracles.text.max_concurrency_global` should be an integer",
        "9:62: `oracles.half.max_concurrency_global` should be an integer",
    ]


def test_bounds_wrap_the_built_oracle_and_an_unbounded_one_stays_bare(tmp_path: Path) -> None:
    from sanctum.ritualfile import load

    path = write(tmp_path, BOUNDED % "max_concurrency: 2, max_concurrency_global: 3")
    rite = load(path).compile()
    try:
        owned = list(rite._owns)
        limited = [oracle for oracle in owned if isinstance(oracle, LimitedOracle)]
        assert len(limited) == 1
        assert (limited[0].max_concurrency, limited[0].max_concurrency_global) == (2, 3)
        assert limited[0].endpoint == "ollama http://gpu-3:11434 m"
        assert type(limited[0].inner).__name__ == "OllamaOracle"
        assert any(type(oracle).__name__ == "OllamaOracle" for oracle in owned)
    finally:
        asyncio.run(rite.aclose())
