"""``--oracle``: an address hint speaks of the override's own provider."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import invoke

RITUAL = """\
sanctum: 1
name: o
aether: {said: {}}
oracles:
  local: {provider: ollama, model: "qwen2.5:3b"}
entry: speak
sigils:
  speak: {oracle: local, prompt: "hi", output: said, stream: false, next: END}
"""


def test_an_openai_override_without_an_address_says_how_to_give_one(tmp_path: Path) -> None:
    (tmp_path / "o.yaml").write_text(RITUAL, encoding="utf-8")
    done = invoke(["run", "o.yaml", "--codex", "memory:", "--oracle", "local=openai:x"], tmp_path)
    assert done.exit_code == 2
    assert done.stderr.splitlines() == [
        "error: --oracle local=openai:x: base_url: Field required (an openai oracle needs "
        "its address: --oracle local=openai:x@http://127.0.0.1:8080/v1)"
    ]


def test_an_ollama_override_never_mentions_openai(tmp_path: Path) -> None:
    (tmp_path / "o.yaml").write_text(RITUAL, encoding="utf-8")
    done = invoke(["run", "o.yaml", "--codex", "memory:", "--oracle", "local=ollama:x"], tmp_path)
    assert "openai" not in done.output
