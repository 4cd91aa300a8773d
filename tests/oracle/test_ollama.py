"""OllamaOracle against a real HTTP server speaking Ollama's native /api/chat."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sanctum.errors import (
    OracleConnectionError,
    OracleError,
    OracleResponseError,
    OracleTimeoutError,
)
from sanctum.oracle import OracleResponse, SpellCall
from sanctum.oracle._http import is_tool_rejection
from sanctum.oracle.ollama import OllamaOracle, to_ollama_messages
from tests.oracle.servers import (
    ModelServer,
    Reply,
    closed_port,
    ollama_chat,
    ollama_error,
    ollama_stream,
    ollama_tool_call,
)

ADD = {
    "name": "add",
    "description": "Add two numbers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
HELLO = [{"role": "user", "content": "What is 2 + 3?"}]


async def drain(stream: AsyncIterator[str], into: list[str]) -> None:
    async for chunk in stream:
        into.append(chunk)


_OPENED: list[OllamaOracle] = []


@pytest.fixture(autouse=True)
async def _close_oracles() -> AsyncIterator[None]:
    """Close every Oracle a test opened, so no pooled socket outlives its test."""
    yield
    while _OPENED:
        await _OPENED.pop().aclose()


def oracle_for(server: ModelServer, **kwargs: Any) -> OllamaOracle:
    oracle = OllamaOracle("qwen2.5:7b", base_url=server.url, **kwargs)
    _OPENED.append(oracle)
    return oracle


async def test_generate_text_and_usage(server: ModelServer) -> None:
    server.reply(ollama_chat("Five."))
    oracle = oracle_for(server, options={"temperature": 0, "num_ctx": 4096}, keep_alive="10m")
    response = await oracle.generate(HELLO)
    await oracle.aclose()
    assert response.text == "Five."
    assert response.spell_calls == []
    assert response.usage["prompt_tokens"] == 26
    assert response.usage["completion_tokens"] == 282
    assert response.usage["total_tokens"] == 308
    assert response.usage["eval_duration"] == 4535599000
    sent = server.requests[0]
    assert sent.path == "/api/chat"
    assert sent.json == {
        "model": "qwen2.5:7b",
        "messages": HELLO,
        "stream": False,
        "options": {"temperature": 0, "num_ctx": 4096},
        "keep_alive": "10m",
    }
    assert oracle.arcana == "ollama:qwen2.5:7b"


async def test_generate_native_tool_call_with_object_arguments(server: ModelServer) -> None:
    server.reply(ollama_chat("", [ollama_tool_call("add", {"a": 2, "b": 3})]))
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert len(response.spell_calls) == 1
    call = response.spell_calls[0]
    assert call.spell == "add"
    assert call.arguments == {"a": 2, "b": 3}
    assert call.call_id is not None
    assert call.call_id.startswith("call_")
    tools = server.requests[0].json["tools"]
    assert tools == [{"type": "function", "function": ADD}]


async def test_newer_ollama_ids_are_kept(server: ModelServer) -> None:
    calls = [
        ollama_tool_call("add", {"a": 1, "b": 1}, call_id="call_x1", index=0),
        ollama_tool_call("add", {"a": 2, "b": 2}, call_id="call_x2", index=1),
    ]
    server.reply(ollama_chat("", calls))
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert [c.call_id for c in response.spell_calls] == ["call_x1", "call_x2"]
    assert [c.arguments for c in response.spell_calls] == [{"a": 1, "b": 1}, {"a": 2, "b": 2}]


async def test_string_arguments_are_decoded_or_flagged(server: ModelServer) -> None:
    server.reply(
        ollama_chat(
            "",
            [
                ollama_tool_call("add", '{"a": 4, "b": 5}'),
                ollama_tool_call("add", "{'a': 4, b: }"),
            ],
        )
    )
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert response.spell_calls[0].arguments == {"a": 4, "b": 5}
    assert response.spell_calls[1].arguments == {"__malformed_json__": "{'a': 4, b: }"}


async def test_text_answer_carrying_a_malformed_call_is_left_as_text(server: ModelServer) -> None:
    text = 'Sure! ```json\n{"spell": "add", "arguments": {"a": 2, "b": 3,}}\n```'
    server.reply(ollama_chat(text))
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert response.text == text
    assert response.spell_calls == []


async def test_transcript_translation_round_trip(server: ModelServer) -> None:
    server.reply(ollama_chat("It is 5."))
    transcript: list[dict[str, Any]] = [
        {"role": "system", "content": "You add numbers."},
        *HELLO,
        {
            "role": "assistant",
            "content": "",
            "spell_calls": [{"spell": "add", "arguments": {"a": 2, "b": 3}, "call_id": "c1"}],
            "usage": {"prompt_tokens": 3},
        },
        {"role": "spell", "name": "add", "call_id": "c1", "content": "5"},
    ]
    await oracle_for(server).generate(transcript, [ADD])
    sent = server.requests[0].json["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "add", "arguments": {"a": 2, "b": 3}}, "id": "c1"}],
    }
    assert isinstance(sent[2]["tool_calls"][0]["function"]["arguments"], dict)
    assert sent[3] == {
        "role": "tool",
        "content": "5",
        "tool_name": "add",
        "name": "add",
        "tool_call_id": "c1",
    }


def test_translation_keeps_malformed_arguments_as_an_object() -> None:
    wire = to_ollama_messages(
        [
            {
                "role": "assistant",
                "content": None,
                "spell_calls": [{"spell": "add", "arguments": {"__malformed_json__": "{a"}}],
            }
        ]
    )
    assert wire == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "add", "arguments": {"__malformed_json__": "{a"}}}
            ],
        }
    ]


async def test_stream_generate_yields_ndjson_tokens(server: ModelServer) -> None:
    server.reply(ollama_stream(["The", " answer", " is", " 5", "."]))
    oracle = oracle_for(server)
    chunks = [chunk async for chunk in oracle.stream_generate(HELLO)]
    assert chunks == ["The", " answer", " is", " 5", "."]
    assert server.requests[0].json["stream"] is True


async def test_stream_response_carries_tool_calls_and_usage(server: ModelServer) -> None:
    server.reply(ollama_stream(["Let me add."], [ollama_tool_call("add", {"a": 2, "b": 3})]))
    items = [item async for item in oracle_for(server).stream_response(HELLO, [ADD])]
    assert items[0] == "Let me add."
    final = items[-1]
    assert isinstance(final, OracleResponse)
    assert final.text == "Let me add."
    assert [(c.spell, c.arguments) for c in final.spell_calls] == [("add", {"a": 2, "b": 3})]
    assert final.usage["completion_tokens"] == 282


async def test_stream_error_line_raises(server: ModelServer) -> None:
    server.reply(ollama_stream(["Hal"], error="an error was encountered while running the model"))
    with pytest.raises(OracleResponseError, match="while running the model") as info:
        async for _ in oracle_for(server).stream_generate(HELLO):
            pass
    assert "127.0.0.1" in str(info.value)


async def test_stream_without_done_is_an_error(server: ModelServer) -> None:
    server.reply(ollama_stream(["Hal"], final=False))
    with pytest.raises(OracleResponseError, match="before its final 'done'"):
        async for _ in oracle_for(server).stream_generate(HELLO):
            pass


async def test_tool_rejection_is_recognised(server: ModelServer) -> None:
    server.reply(ollama_error(400, "registry.ollama.ai/library/gemma3:4b does not support tools"))
    with pytest.raises(OracleResponseError) as info:
        await oracle_for(server).generate(HELLO, [ADD])
    err = info.value
    assert err.status == 400
    assert "does not support tools" in err.body
    assert "spell_calling: auto or prompted" in str(err)
    assert is_tool_rejection(err)


async def test_unknown_model_404_says_pull(server: ModelServer) -> None:
    server.reply(ollama_error(404, "model 'qwen2.5:7b' not found, try pulling it first"))
    with pytest.raises(OracleResponseError) as info:
        await oracle_for(server).generate(HELLO)
    assert info.value.status == 404
    assert "ollama pull qwen2.5:7b" in str(info.value)
    assert info.value.endpoint == f"{server.url}/api/chat"
    assert not is_tool_rejection(info.value)


async def test_server_fault_500(server: ModelServer) -> None:
    server.reply(ollama_error(500, "llama runner process has terminated: signal: killed"))
    with pytest.raises(OracleResponseError) as info:
        await oracle_for(server).generate(HELLO, [ADD])
    assert info.value.status == 500
    assert "signal: killed" in str(info.value)
    assert "log" in str(info.value)
    assert not is_tool_rejection(info.value)


async def test_stream_with_error_status_raises_before_any_chunk(server: ModelServer) -> None:
    server.reply(ollama_error(404, "model 'qwen2.5:7b' not found, try pulling it first"))
    chunks: list[str] = []
    with pytest.raises(OracleResponseError, match="ollama pull"):
        await drain(oracle_for(server).stream_generate(HELLO), chunks)
    assert chunks == []


async def test_silent_server_times_out(server: ModelServer) -> None:
    server.reply(Reply(hang=True))
    with pytest.raises(OracleTimeoutError) as info:
        await oracle_for(server, timeout=0.2).generate(HELLO)
    assert info.value.timeout == 0.2
    assert "raise timeout=" in str(info.value)
    assert server.url in str(info.value)


async def test_nothing_listening_is_a_connection_error() -> None:
    port = closed_port()
    oracle = OllamaOracle("qwen2.5:7b", base_url=f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(OracleConnectionError) as info:
        await oracle.generate(HELLO)
    assert f"127.0.0.1:{port}" in str(info.value)
    assert "ollama serve" in str(info.value)
    assert isinstance(info.value, OracleError)


async def test_body_that_is_not_json(server: ModelServer) -> None:
    server.reply(Reply(200, b"<html>proxy login</html>", content_type="text/html"))
    with pytest.raises(OracleResponseError, match="not JSON"):
        await oracle_for(server).generate(HELLO)


async def test_one_oracle_serves_several_event_loops(server: ModelServer) -> None:
    import asyncio
    import threading

    server.reply(ollama_chat("one"), ollama_chat("two"))
    oracle = oracle_for(server)
    answers: list[str] = []

    async def once() -> str:
        try:
            return (await oracle.generate(HELLO)).text
        finally:
            await oracle.aclose()  # inside the loop that owns the connection

    def run() -> None:
        answers.append(asyncio.run(once()))

    for _ in range(2):
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    assert answers == ["one", "two"]


async def test_llama_parse_failure_behind_ollama_is_returned_as_text(server: ModelServer) -> None:
    # Ollama proxies llama.cpp runners; the same model-output failure can surface here.
    server.reply(ollama_error(500, 'Failed to parse input at pos 3: {"spell": "add", "a": 2'))
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert response.text == '{"spell": "add", "a": 2'
    assert response.spell_calls == []
    assert response.usage == {"oracle_output_errors": 1}


def test_repr_and_defaults() -> None:
    oracle = OllamaOracle("llama3.2")
    assert oracle.base_url == "http://127.0.0.1:11434"
    assert oracle.timeout == 120.0
    assert "llama3.2" in repr(oracle)
    with pytest.raises(ValueError, match="timeout"):
        OllamaOracle("llama3.2", timeout=0)


def test_spell_call_message_shape_matches_base() -> None:
    call = SpellCall("add", {"a": 1}, "c9")
    wire = to_ollama_messages(
        [{"role": "assistant", "content": "", "spell_calls": [call.to_message()]}]
    )
    assert json.loads(json.dumps(wire))[0]["tool_calls"][0]["id"] == "c9"


async def test_an_in_memory_transport_answer_is_read() -> None:
    """``transport=`` with httpx.MockTransport: responses built in memory, gzip or not."""
    import gzip

    import httpx

    answer = {
        "model": "m",
        "message": {"role": "assistant", "content": "hello"},
        "done": True,
        "done_reason": "stop",
    }

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/chat" and b'"broken"' in request.content:
            return httpx.Response(404, json={"error": "model 'broken' not found"})
        if b'"zipped"' in request.content:
            body = gzip.compress(json.dumps(answer).encode())
            return httpx.Response(200, content=body, headers={"content-encoding": "gzip"})
        return httpx.Response(200, json=answer)

    oracle = OllamaOracle("m", transport=httpx.MockTransport(handler))
    reply = await oracle.generate([{"role": "user", "content": "hi"}])
    assert reply.text == "hello"
    broken = OllamaOracle("broken", transport=httpx.MockTransport(handler))
    with pytest.raises(OracleResponseError, match="404"):
        await broken.generate([{"role": "user", "content": "hi"}])
    zipped = OllamaOracle("zipped", transport=httpx.MockTransport(handler))
    assert (await zipped.generate([{"role": "user", "content": "hi"}])).text == "hello"
    for each in (oracle, broken, zipped):
        await each.aclose()
