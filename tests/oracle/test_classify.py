"""classify_oracle_fault: every failure class, from the bytes real servers send.

Each case makes a real adapter (OllamaOracle or OpenAICompatibleOracle) talk to a
loopback server answering as Ollama, llama-server, vLLM or LM Studio do, and checks
the verdict on the exception the adapter raised.
"""

from __future__ import annotations

from typing import Any

import pytest

from sanctum.errors import OracleError, OracleResponseError
from sanctum.oracle.classify import FAULT_REASONS, OracleFault, classify_oracle_fault
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


def llama_overflow(n_prompt: int = 2300, n_ctx: int = 2048, status: int = 400) -> Reply:
    """llama-server's answer to a prompt over its window (PR #15780's body)."""
    error = {
        "code": status,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": n_prompt,
        "n_ctx": n_ctx,
    }
    return Reply(status, oa_json({"error": error}))


async def _fault(oracle: Any) -> tuple[OracleFault, OracleError]:
    try:
        with pytest.raises(OracleError) as info:
            await oracle.generate(HELLO)
    finally:
        await oracle.aclose()
    return classify_oracle_fault(info.value), info.value


OLLAMA_CASES = [
    (ollama_error(404, 'model "qwen2.5:7b" not found, try pulling it first'), "model_not_found"),
    (ollama_error(404, "model 'qwen2.5:7b' not found"), "model_not_found"),
    (ollama_error(400, "the input length exceeds the context length"), "context_overflow"),
    (
        ollama_error(
            500, "model requires more system memory (5.5 GiB) than is available (3.1 GiB)"
        ),
        "out_of_memory",
    ),
    (
        ollama_error(500, "llama runner process has terminated: cudaMalloc failed: out of memory"),
        "out_of_memory",
    ),
    (
        ollama_error(400, "registry.ollama.ai/library/gemma:2b does not support tools"),
        "tools_unsupported",
    ),
    (
        ollama_error(503, "server busy, please try again.  maximum pending requests exceeded"),
        "overloaded",
    ),
    (ollama_error(500, "unexpected server status: llm server loading model"), "loading"),
    (ollama_error(500, "llama runner process has terminated: exit status 2"), "server_error"),
    (ollama_error(500, "error loading model: invalid file magic"), "server_error"),
    (Reply(404, b"404 page not found", content_type="text/plain"), "endpoint_not_found"),
    (ollama_error(400, "invalid options: num_ctxx"), "bad_request"),
]


@pytest.mark.parametrize(("reply", "reason"), OLLAMA_CASES)
async def test_ollama_failures_are_classified(
    server: ModelServer, reply: Reply, reason: str
) -> None:
    server.reply(reply)
    fault, _ = await _fault(OllamaOracle("qwen2.5:7b", base_url=server.url))
    assert fault.reason == reason


OPENAI_CASES = [
    (llama_overflow(), "context_overflow", 2048),
    (llama_overflow(status=500, n_ctx=4096), "context_overflow", 4096),
    (
        vllm_error(
            400,
            "This model's maximum context length is 8192 tokens. However, you requested "
            "9000 tokens (8488 in the messages, 512 in the completion).",
        ),
        "context_overflow",
        8192,
    ),
    (
        ollama_v1_error(
            400,
            "Trying to keep the first 3100 tokens when context the overflows. However, the "
            "model is loaded with context length of only 2048 tokens, which is not enough.",
        ),
        "context_overflow",
        2048,
    ),
    (vllm_error(404, "The model `qwen-7b` does not exist."), "model_not_found", None),
    (
        llama_server_error(500, "Failed to parse input at pos 0"),
        "model_output",
        None,
    ),
    (llama_server_error(500, "tools param requires --jinja flag"), "tools_unsupported", None),
    (llama_server_error(503, "Loading model"), "loading", None),
    (llama_server_error(503, "Server busy: all slots are taken"), "overloaded", None),
    (
        Reply(404, b"<html>404 page not found</html>", content_type="text/html"),
        "endpoint_not_found",
        None,
    ),
    (Reply(405, b"Method Not Allowed", content_type="text/plain"), "endpoint_not_found", None),
    (llama_server_error(502, "bad gateway"), "server_error", None),
    (ollama_v1_error(429, "rate limit reached"), "rate_limited", None),
    (ollama_v1_error(401, "invalid api key"), "auth", None),
    (ollama_v1_error(413, "payload too large"), "context_overflow", None),
    (llama_server_error(400, "'messages' must be an array"), "bad_request", None),
]


@pytest.mark.parametrize(("reply", "reason", "window"), OPENAI_CASES)
async def test_openai_compatible_failures_are_classified(
    server: ModelServer, reply: Reply, reason: str, window: int | None
) -> None:
    server.reply(reply)
    fault, _ = await _fault(OpenAICompatibleOracle("m", base_url=server.url))
    assert fault.reason == reason
    assert fault.window == window


async def test_nobody_listening_is_a_connection_fault_worth_a_fallback_and_a_bench() -> None:
    oracle = OllamaOracle("m", base_url=f"http://127.0.0.1:{closed_port()}")
    fault, _ = await _fault(oracle)
    assert (fault.reason, fault.action, fault.fall_back, fault.bench) == (
        "connection",
        "fallback",
        True,
        True,
    )


async def test_a_deadline_passed_is_a_timeout_retried_once(server: ModelServer) -> None:
    server.reply(Reply(hang=True))
    fault, _ = await _fault(OllamaOracle("m", base_url=server.url, timeout=0.3))
    assert (fault.reason, fault.action, fault.retry_same) == ("timeout", "retry", 1)


async def test_a_stream_broken_mid_answer_is_its_own_class(server: ModelServer) -> None:
    line = b'{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\n'
    server.reply(Reply(200, chunks=[line], content_type="application/x-ndjson", drop=True))
    oracle = OllamaOracle("m", base_url=server.url)
    try:
        with pytest.raises(OracleError) as info:
            async for _ in oracle.stream_generate(HELLO):
                pass
    finally:
        await oracle.aclose()
    assert classify_oracle_fault(info.value).reason == "stream_broken"


def test_an_overflow_asks_for_compaction_never_a_fallback() -> None:
    error = OracleResponseError("x", status=400, body='{"error":"context length exceeded"}')
    fault = classify_oracle_fault(error)
    assert (fault.action, fault.compact, fault.fall_back) == ("compact", True, False)


def test_something_that_is_not_an_oracle_error_fails_and_is_never_hidden() -> None:
    fault = classify_oracle_fault(RuntimeError("script exhausted"))
    assert (fault.reason, fault.action, fault.fall_back) == ("unknown", "fail", False)


def test_in_process_llama_cpp_overflow_wording() -> None:
    text = "Requested tokens (2600) exceed context window of 2048"
    fault = classify_oracle_fault(OracleResponseError(text, status=None, body=text))
    assert (fault.reason, fault.window) == ("context_overflow", 2048)


def test_every_reason_has_an_action_and_a_fix_that_reads_alone() -> None:
    seen = {classify_oracle_fault(RuntimeError()).reason}
    assert seen <= set(FAULT_REASONS)
    fault = classify_oracle_fault(OracleResponseError("x", status=401, body=""))
    assert fault.describe() == "auth (HTTP 401): check the API key (api_key: '${MY_API_KEY}')"


async def test_ollama_is_told_not_to_truncate_so_an_overflow_is_an_error(
    server: ModelServer,
) -> None:
    server.reply(ollama_error(400, "the input length exceeds the context length"))
    fault, _ = await _fault(OllamaOracle("m", base_url=server.url, truncate=False))
    assert server.requests[0].json["truncate"] is False
    assert fault.reason == "context_overflow"


async def test_ollama_requests_leave_truncate_out_by_default(server: ModelServer) -> None:
    server.reply(ollama_error(500, "boom"))
    await _fault(OllamaOracle("m", base_url=server.url))
    assert "truncate" not in server.requests[0].json


async def test_a_missing_model_is_pulled_on_ollama_and_loaded_elsewhere(
    server: ModelServer,
) -> None:
    server.reply(vllm_error(404, "The model `qwen-7b` does not exist."))
    elsewhere, _ = await _fault(OpenAICompatibleOracle("qwen-7b", base_url=server.url))
    assert "ollama pull" not in elsewhere.fix
    assert "/v1/models" in elsewhere.fix
    server.reply(ollama_error(404, "model 'qwen2.5:7b' not found"))
    ollama, _ = await _fault(OllamaOracle("qwen2.5:7b", base_url=server.url))
    assert "ollama pull" in ollama.fix


def test_the_fault_type_is_exported_with_the_function() -> None:
    import sanctum.oracle as oracle
    from sanctum.oracle.classify import OracleFault as Defined

    assert oracle.OracleFault is Defined
    assert isinstance(oracle.classify_oracle_fault(RuntimeError()), oracle.OracleFault)
