"""A failure deep inside Circles is told once, with the path of sigils in one line.

An ``agent:`` sigil is a Circle whose inner ``oracle`` sigil calls the model; the
engine wraps the failure once per Circle. The façade walks the chain by its ``sigil``
fields and words the root cause once: ``sigil answer › oracle: Could not reach …``.
"""

from __future__ import annotations

import json
from pathlib import Path

from sanctum.api._perform import _failure_message
from sanctum.errors import SigilExecutionError
from tests.cli.helpers import invoke, write_ritual
from tests.oracle.servers import closed_port

AGENT = """\
sanctum: 1
name: dead
aether:
  answer: {type: string}
  messages: {reducer: append, default: []}
oracles:
  main: {provider: ollama, model: "qwen2.5:3b", base_url: "URL"}
entry: answer
sigils:
  answer:
    agent: {oracle: main}
    prompt: "hi"
    output: answer
    next: END
"""

BROKEN = """\
sanctum: 1
name: broken
aether: {count: {type: integer, default: 0}}
entry: step
sigils:
  step: {call: "broken_steps:step", next: END}
"""


def test_a_dead_ollama_under_an_agent_is_one_line_with_the_sigil_path(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    (tmp_path / "dead.yaml").write_text(AGENT.replace("URL", url), encoding="utf-8")
    done = invoke(["run", "dead.yaml", "--codex", "memory:", "-q"], tmp_path)
    assert done.exit_code == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith(
        f"error: sigil answer › oracle: Could not reach Ollama at {url}/api/chat ("
    )
    assert "inner run" not in done.stderr
    assert done.stderr.count("Could not reach Ollama") == 1


def test_json_results_carry_the_same_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    (tmp_path / "dead.yaml").write_text(AGENT.replace("URL", url), encoding="utf-8")
    done = invoke(["run", "dead.yaml", "--codex", "memory:", "--json"], tmp_path)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["error"].startswith("sigil answer › oracle: Could not reach Ollama")
    assert result["sigil"] == "answer"


def test_a_python_failure_names_its_type(tmp_path: Path) -> None:
    write_ritual(tmp_path, "broken.yaml", BROKEN)
    (tmp_path / "broken_steps.py").write_text(
        "def step(aether):\n    raise ValueError('no good')\n", encoding="utf-8"
    )
    done = invoke(["run", "broken.yaml", "--codex", "memory:", "-q"], tmp_path)
    assert done.exit_code == 1
    assert "error: sigil step: ValueError: no good" in done.stderr.splitlines()


def test_a_failure_without_a_cause_keeps_the_engine_words() -> None:
    timeout = SigilExecutionError("sigil 'slow' timed out after 2s", sigil="slow")
    assert _failure_message(timeout) == "sigil 'slow' timed out after 2s"
