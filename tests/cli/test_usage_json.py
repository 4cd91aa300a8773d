"""``--json`` results sum the usage the Oracles reported, prompt-cache hits included."""

from __future__ import annotations

import json
from pathlib import Path

from sanctum.api._results import usage_totals
from tests.cli.helpers import invoke

RITUAL = """\
sanctum: 1
name: twice
aether:
  messages: {reducer: append}
  first: {}
  second: {}
oracles:
  local:
    provider: scripted
    responses:
      - {text: "one", usage: {prompt_tokens: 300, completion_tokens: 5}}
      - {text: "two", usage: {prompt_tokens: 310, completion_tokens: 7, cached_tokens: 296}}
entry: a
sigils:
  a: {oracle: local, prompt: "hi", output: first, messages: messages, next: b}
  b: {oracle: local, prompt: "again", output: second, messages: messages, next: END}
"""


def test_json_result_carries_the_usage_totals(tmp_path: Path) -> None:
    (tmp_path / "twice.yaml").write_text(RITUAL, encoding="utf-8")
    done = invoke(["run", "twice.yaml", "--codex", "memory:", "--json"], tmp_path)
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["kind"] == "result"
    assert result["usage"] == {
        "consultations": 2,
        "prompt_tokens": 610,
        "completion_tokens": 12,
        "cached_tokens": 296,
    }


def test_no_usage_without_a_transcript() -> None:
    assert usage_totals({"answer": "hi", "log": ["a", 1]}) is None
    counted = usage_totals({"m": [{"role": "user", "usage": {"prompt_tokens": 9}}]})
    assert counted is None  # only the Oracle's own (assistant) messages count
