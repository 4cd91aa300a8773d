"""`sanctum run` ends with the token counts the model server reported."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import invoke
from tests.oracle.servers import ModelServer, ollama_chat

RITUAL = """\
sanctum: 1
name: ask
aether:
  said: {}
  transcript: {reducer: append, default: []}
oracles:
  local: {provider: ollama, model: "qwen2.5:3b", base_url: "URL"}
entry: speak
sigils:
  speak: {oracle: local, prompt: "hi", output: said, messages: transcript, stream: false,
          next: END}
"""


def test_the_usage_line_counts_what_the_server_reported(
    tmp_path: Path, server: ModelServer
) -> None:
    server.reply(ollama_chat("hello"))
    (tmp_path / "ask.yaml").write_text(RITUAL.replace("URL", server.url), encoding="utf-8")
    done = invoke(["run", "ask.yaml", "--codex", "memory:"], tmp_path)
    assert done.exit_code == 0, done.output
    [line] = [x for x in done.stdout.splitlines() if x.startswith("usage:")]
    assert line.startswith("usage: 1 consultation · ")
    assert "prompt tokens" in line
    assert "completion tokens" in line


def test_no_usage_line_when_nothing_was_reported(tmp_path: Path) -> None:
    (tmp_path / "ask.yaml").write_text(
        RITUAL.replace('{provider: ollama, model: "qwen2.5:3b", base_url: "URL"}', "").replace(
            "  local: \n", '  local: {provider: scripted, responses: ["hi"]}\n'
        ),
        encoding="utf-8",
    )
    done = invoke(["run", "ask.yaml", "--codex", "memory:"], tmp_path)
    assert done.exit_code == 0, done.output
    assert "usage:" not in done.stdout
