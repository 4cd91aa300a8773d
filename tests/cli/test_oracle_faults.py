"""A run that fails at the model server ends with one line saying how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.api import oracle_hint
from sanctum.errors import (
    ContextOverflowError,
    OracleConnectionError,
    OracleResponseError,
    SigilExecutionError,
)
from tests.cli.helpers import invoke
from tests.oracle.servers import ModelServer, Reply, closed_port, oa_json, ollama_error

RITUAL = """\
sanctum: 1
name: ask
aether: {said: {}}
oracles:
  local: {provider: PROVIDER, model: "qwen2.5:3b", base_url: "URL"}
entry: speak
sigils:
  speak: {oracle: local, prompt: "hi", output: said, stream: false, next: END}
"""


def run(tmp_path: Path, provider: str, url: str) -> list[str]:
    text = RITUAL.replace("PROVIDER", provider).replace("URL", url)
    (tmp_path / "ask.yaml").write_text(text, encoding="utf-8")
    done = invoke(["run", "ask.yaml", "--codex", "memory:"], tmp_path)
    assert done.exit_code == 1, done.output
    return done.stderr.splitlines()


def llama_overflow() -> Reply:
    error = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 2300,
        "n_ctx": 2048,
    }
    return Reply(400, oa_json({"error": error}))


def test_a_dead_server_says_start_it(tmp_path: Path) -> None:
    lines = run(tmp_path, "ollama", f"http://127.0.0.1:{closed_port()}")
    assert lines[-1] == "hint: connection: start the model server, or check base_url"
    assert lines[-2].startswith("error: sigil speak: Could not reach Ollama at http://127.0.0.1:")


@pytest.mark.parametrize(
    ("reply", "provider", "hint"),
    [
        (
            ollama_error(404, 'model "qwen2.5:3b" not found, try pulling it first'),
            "ollama",
            "hint: model not found (HTTP 404): pull or load the model (e.g. `ollama pull "
            "<model>`), or fix its name",
        ),
        (
            ollama_error(
                500, "model requires more system memory (5.5 GiB) than is available (3.1 GiB)"
            ),
            "ollama",
            "hint: out of memory (HTTP 500): the server cannot hold the model in memory: use "
            "a smaller model or quantisation, lower num_ctx/n_ctx, or close other models",
        ),
        (
            llama_overflow(),
            "openai",
            "hint: context overflow (HTTP 400): the prompt is longer than the model's context "
            "window: turn on compaction (agent `compact:`), declare the oracle's "
            "`context_window:`, or raise num_ctx/n_ctx",
        ),
    ],
    ids=["missing-model", "out-of-memory", "overflow"],
)
def test_each_server_failure_gets_its_fix(
    tmp_path: Path, server: ModelServer, reply: Reply, provider: str, hint: str
) -> None:
    server.respond = lambda request: reply
    url = server.url if provider == "ollama" else f"{server.url}/v1"
    lines = run(tmp_path, provider, url)
    assert lines[-1] == hint
    assert sum(line.startswith("hint:") for line in lines) == 1


def test_the_hint_looks_through_a_sigils_failure_to_its_cause() -> None:
    try:
        try:
            raise OracleConnectionError("nobody listens", endpoint="http://127.0.0.1:9")
        except OracleConnectionError as cause:
            raise SigilExecutionError("sigil 'a' failed", sigil="a") from cause
    except SigilExecutionError as failure:
        assert oracle_hint(failure) == (
            "hint: connection: start the model server, or check base_url"
        )


def test_no_hint_without_an_oracle_or_when_the_message_has_the_fix() -> None:
    assert oracle_hint(ValueError("a bug")) is None
    assert oracle_hint(ContextOverflowError("too long; raise the window", window=2048)) is None
    assert oracle_hint(OracleResponseError("teapot", status=418)) == (
        "hint: bad request (HTTP 418): check the request parameters (model, options, messages)"
    )
