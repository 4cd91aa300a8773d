"""The error an HTTP Oracle raises and the ``hint:`` line under it name the same cause.

For every reason :func:`classify_oracle_fault` gives, a real adapter talks to a
loopback server answering as Ollama, llama-server or vLLM do; the message's "Likely
fix:" must be the fault's fix (the model's name filled in), and ``oracle_hint`` must
word that same fault. Failures without an HTTP answer (nobody listens, a broken
stream, a deadline) carry their own sentence; there the message and the fix must share
the cause's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sanctum.api import oracle_hint
from sanctum.errors import OracleError
from sanctum.oracle.classify import FAULT_REASONS, classify_oracle_fault
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from tests.oracle.servers import (
    ModelServer,
    Reply,
    closed_port,
    llama_server_error,
    oa_json,
    ollama_error,
    ollama_v1_error,
    vllm_error,
)

HELLO = [{"role": "user", "content": "hello"}]
MODEL = "qwen2.5:7b"

Make = Callable[[str], Any]


def ollama(url: str) -> OllamaOracle:
    return OllamaOracle(MODEL, base_url=url, timeout=0.5)


def openai(url: str) -> OpenAICompatibleOracle:
    return OpenAICompatibleOracle(MODEL, base_url=url, timeout=0.5)


LLAMA_LOADING = Reply(
    503,
    oa_json({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}),
)
LLAMA_OVERFLOW = Reply(
    400,
    oa_json(
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 5000,
                "n_ctx": 2048,
            }
        }
    ),
)

ANSWERED: list[tuple[str, Make, Reply]] = [
    ("context_overflow", openai, LLAMA_OVERFLOW),
    ("context_overflow", ollama, ollama_error(400, "the input length exceeds the context length")),
    (
        "out_of_memory",
        ollama,
        ollama_error(500, "model requires more system memory (8.0 GiB) than is available"),
    ),
    ("out_of_memory", openai, llama_server_error(500, "Internal error: out of memory")),
    ("loading", openai, LLAMA_LOADING),
    ("loading", ollama, ollama_error(500, "unexpected server status: llm server loading model")),
    (
        "model_not_found",
        ollama,
        ollama_error(404, f'model "{MODEL}" not found, try pulling it first'),
    ),
    ("model_not_found", openai, vllm_error(404, f"The model `{MODEL}` does not exist.")),
    (
        "model_not_found",
        openai,
        ollama_v1_error(404, f'model "{MODEL}" not found, try pulling it first'),
    ),
    ("endpoint_not_found", ollama, Reply(404, b"404 page not found", content_type="text/plain")),
    (
        "endpoint_not_found",
        openai,
        Reply(404, b"<html>404 page not found</html>", content_type="text/html"),
    ),
    ("tools_unsupported", ollama, ollama_error(400, f"{MODEL} does not support tools")),
    ("tools_unsupported", openai, llama_server_error(500, "tools param requires --jinja flag")),
    (
        "tools_unsupported",
        openai,
        vllm_error(400, '"auto" tool choice requires --enable-auto-tool-choice'),
    ),
    ("model_output", openai, llama_server_error(500, "Failed to parse input at pos 0")),
    ("rate_limited", openai, ollama_v1_error(429, "rate limit reached")),
    (
        "overloaded",
        ollama,
        ollama_error(503, "server busy, please try again.  maximum pending requests exceeded"),
    ),
    ("server_error", ollama, ollama_error(500, "internal boom")),
    ("server_error", openai, llama_server_error(502, "bad gateway")),
    ("auth", openai, ollama_v1_error(401, "invalid api key")),
    ("bad_request", ollama, ollama_error(400, "invalid options: num_ctxx")),
    ("malformed_answer", ollama, Reply(200, b"<html>welcome</html>", content_type="text/html")),
    ("malformed_answer", openai, Reply(200, b"[1, 2]")),
]


async def _drain(oracle: Any) -> None:
    async for _ in oracle.stream_generate(HELLO):
        pass


async def _raised(oracle: Any, *, stream: bool = False) -> OracleError:
    try:
        with pytest.raises(OracleError) as info:
            await (_drain(oracle) if stream else oracle.generate(HELLO))
    finally:
        await oracle.aclose()
    return info.value


@pytest.mark.parametrize(("reason", "make", "reply"), ANSWERED)
async def test_the_error_states_the_fix_its_hint_gives(
    server: ModelServer, reason: str, make: Make, reply: Reply
) -> None:
    server.reply(reply)
    error = await _raised(make(server.url))
    fault = classify_oracle_fault(error)
    assert fault.reason == reason
    assert f"Likely fix: {fault.fix_for(MODEL)}." in str(error)
    hint = oracle_hint(error)
    assert hint is not None
    assert hint.startswith(f"hint: {reason.replace('_', ' ')}")
    assert hint.endswith(fault.fix)


# the message's words and the fix's words for the same cause, when no HTTP answer came
UNANSWERED = {
    "connection": ("Is it running?", "start the model server"),
    "stream_broken": ("check the server's log", "check the server's log"),
    "timeout": ("raise timeout=", "raise timeout"),
}


async def test_failures_without_an_answer_name_one_cause(server: ModelServer) -> None:
    errors = {"connection": await _raised(ollama(f"http://127.0.0.1:{closed_port()}"))}
    line = b'{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\n'
    server.reply(Reply(200, chunks=[line], content_type="application/x-ndjson", drop=True))
    errors["stream_broken"] = await _raised(ollama(server.url), stream=True)
    server.reply(Reply(hang=True))
    errors["timeout"] = await _raised(ollama(server.url))
    for reason, error in errors.items():
        fault = classify_oracle_fault(error)
        said, fix = UNANSWERED[reason]
        assert fault.reason == reason
        assert said in str(error)
        assert fix in fault.fix
        assert oracle_hint(error) == f"hint: {fault.describe()}"


def test_every_reason_is_covered_by_a_wording_case() -> None:
    covered = {reason for reason, _, _ in ANSWERED} | set(UNANSWERED)
    assert covered | {"unknown"} == set(FAULT_REASONS)
    assert oracle_hint(RuntimeError("a bug")) is None  # unknown: no hint at all
