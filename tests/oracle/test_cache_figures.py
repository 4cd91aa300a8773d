"""Prompt-cache figures as each server reports them, carried into OracleResponse.usage."""

from __future__ import annotations

import json

from sanctum.oracle import OracleResponse
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from tests.oracle.servers import (
    ModelServer,
    Reply,
    go_json,
    oa_completion,
    oa_stream_events,
    ollama_chat,
    sse,
)

HELLO = [{"role": "user", "content": "hello"}]


def _with(reply: Reply, **changes: object) -> Reply:
    body = json.loads(reply.body)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return Reply(reply.status, json.dumps(body).encode(), reply.content_type)


async def test_llama_server_cache_n_is_the_cached_share(server: ModelServer) -> None:
    timings = {"cache_n": 30, "prompt_n": 4, "predicted_n": 12}
    server.reply(_with(oa_completion("hi"), timings=timings))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    usage = (await oracle.generate(HELLO)).usage
    await oracle.aclose()
    assert usage["prompt_tokens"] == 34
    assert usage["cached_tokens"] == 30


async def test_a_llama_server_stream_counts_the_whole_prompt(server: ModelServer) -> None:
    events = oa_stream_events(["Hel", "lo"], usage=False)
    events[-1]["timings"] = {"cache_n": 19, "prompt_n": 2, "predicted_n": 2}
    server.reply(sse(events))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    items = [item async for item in oracle.stream_response(HELLO)]
    await oracle.aclose()
    final = items[-1]
    assert isinstance(final, OracleResponse)
    assert final.usage == {
        "prompt_tokens": 21,
        "completion_tokens": 2,
        "total_tokens": 23,
        "cached_tokens": 19,
    }


async def test_openai_prompt_tokens_details_give_cached_tokens(server: ModelServer) -> None:
    usage = {
        "prompt_tokens": 34,
        "completion_tokens": 12,
        "total_tokens": 46,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    reply = _with(oa_completion("hi"), usage=usage)
    body = json.loads(reply.body)
    del body["timings"]  # vLLM sends no timings
    server.reply(Reply(200, json.dumps(body).encode()))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    got = (await oracle.generate(HELLO)).usage
    await oracle.aclose()
    assert got["cached_tokens"] == 32
    assert got["prompt_tokens"] == 34
    assert "prompt_tokens_details" not in got  # only numbers stay


async def test_no_cache_figure_when_the_server_gives_none(server: ModelServer) -> None:
    server.reply(oa_completion("hi"))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    usage = (await oracle.generate(HELLO)).usage
    await oracle.aclose()
    assert "cached_tokens" not in usage


async def test_ollama_prompt_eval_cached_count_adds_to_the_prompt(server: ModelServer) -> None:
    body = json.loads(ollama_chat("hi").body)
    body["prompt_eval_cached_count"] = 200
    server.reply(Reply(200, go_json(body)))
    oracle = OllamaOracle("qwen2.5:7b", base_url=server.url)
    usage = (await oracle.generate(HELLO)).usage
    await oracle.aclose()
    assert usage["cached_tokens"] == 200
    assert usage["prompt_tokens"] == 226  # 26 evaluated + 200 from the cache
    assert usage["total_tokens"] == 226 + 282


async def test_an_ollama_that_reports_no_cache_keeps_its_counts(server: ModelServer) -> None:
    server.reply(ollama_chat("hi"))
    oracle = OllamaOracle("qwen2.5:7b", base_url=server.url)
    usage = (await oracle.generate(HELLO)).usage
    await oracle.aclose()
    assert usage["prompt_tokens"] == 26
    assert "cached_tokens" not in usage
