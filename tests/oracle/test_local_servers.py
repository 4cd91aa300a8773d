"""What real llama.cpp servers and models showed (issue 17), on the loopback servers.

``tool_choice`` beside the tools, llama.cpp's ``timings`` as usage, a stream broken
mid-answer, loading without extra buffer types, the probe's crash message, and the
Mistral call forms.
"""

from __future__ import annotations

import signal
import subprocess
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sanctum.errors import OracleConnectionError
from sanctum.oracle import OracleResponse
from sanctum.oracle._llama_load import _probe_failure, load_llama, probe_model
from sanctum.oracle.openai_compat import OpenAICompatibleOracle, usage_from
from sanctum.oracle.robust import parse_spell_blocks
from tests.oracle.servers import (
    ModelServer,
    Reply,
    oa_completion,
    oa_json,
    oa_stream_events,
    running_server,
    sse,
)

ADD = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
HELLO = [{"role": "user", "content": "What is 2 + 3?"}]


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with running_server() as srv:
        yield srv


async def test_tools_travel_with_tool_choice_auto(server: ModelServer) -> None:
    server.reply(oa_completion("5"), oa_completion("hi"))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    await oracle.generate(HELLO, [ADD])
    await oracle.generate(HELLO)
    with_tools, without = (r.json for r in server.requests)
    assert with_tools["tool_choice"] == "auto"
    assert with_tools["tools"][0]["function"]["name"] == "add"
    assert "tool_choice" not in without
    assert "tools" not in without
    await oracle.aclose()


async def test_a_stream_counts_usage_from_llama_cpp_timings(server: ModelServer) -> None:
    events = oa_stream_events(["Hel", "lo"], usage=False)
    events[-1]["timings"] = {"prompt_n": 21, "prompt_ms": 30.1, "predicted_n": 2}
    server.reply(sse(events))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    items = [item async for item in oracle.stream_response(HELLO)]
    final = items[-1]
    assert isinstance(final, OracleResponse)
    assert final.usage == {"prompt_tokens": 21, "completion_tokens": 2, "total_tokens": 23}
    assert server.requests[0].json["stream_options"] == {"include_usage": True}
    assert usage_from({"timings": {"prompt_n": True, "predicted_n": 2}}) == {}
    await oracle.aclose()


async def test_a_stream_broken_mid_answer_is_not_called_unreachable(server: ModelServer) -> None:
    chunks = [b"data: " + oa_json(e) + b"\n\n" for e in oa_stream_events(["a"] * 30)[:31]]
    server.reply(Reply(200, chunks=chunks, content_type="text/event-stream", drop=True))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    received: list[str | OracleResponse] = []

    async def drain() -> None:
        async for item in oracle.stream_response(HELLO):
            received.append(item)

    with pytest.raises(OracleConnectionError) as info:
        await drain()
    message = str(info.value)
    assert len(received) == 30
    assert "broke off its answer after" in message
    assert "Is it running?" not in message
    assert "Could not reach" not in message
    await oracle.aclose()


def _fake_llama_cpp() -> tuple[Any, list[bool]]:
    seen: list[bool] = []

    class Params:
        use_extra_bufts = True

    low = types.SimpleNamespace(llama_model_default_params=Params)

    class Llama:
        def __init__(self, model_path: str, **kwargs: Any) -> None:
            seen.append(low.llama_model_default_params().use_extra_bufts)

    return types.SimpleNamespace(Llama=Llama, llama_cpp=low), seen


def test_models_load_without_extra_buffer_types_unless_asked() -> None:
    module, seen = _fake_llama_cpp()
    original = module.llama_cpp.llama_model_default_params
    load_llama(module, "m.gguf", {"n_ctx": 64}, extra_buffer_types=False)
    load_llama(module, "m.gguf", {"n_ctx": 64}, extra_buffer_types=True)
    assert seen == [False, True]
    assert module.llama_cpp.llama_model_default_params is original  # restored


def test_a_probe_that_crashes_reads_as_a_clear_error() -> None:
    crashed = subprocess.CompletedProcess(["x"], -signal.SIGSEGV, "", "Segmentation fault\n")
    message = _probe_failure("/m/model.gguf", crashed, extra_buffer_types=True)
    assert "crashed (SIGSEGV)" in message
    assert "extra_buffer_types=False" in message
    assert "/m/model.gguf" in message
    failed = subprocess.CompletedProcess(["x"], 3, "", "ValueError: Failed to load model\n")
    assert "could not load the model" in _probe_failure("/m/x.gguf", failed, False)


def test_probing_a_file_that_is_no_model_raises_instead_of_dying(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf at all")
    with pytest.raises(OracleConnectionError, match="could not load the model"):
        probe_model(str(bogus), {"n_ctx": 64}, extra_buffer_types=False)


def test_mistral_tool_calls_list_is_cast_cleanly() -> None:
    text = '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 2, "b": 3}}]'
    prose, calls = parse_spell_blocks(text)
    assert prose == ""
    assert [(c.spell, c.arguments) for c in calls] == [("add", {"a": 2, "b": 3})]


def test_prose_after_a_named_mistral_call_is_kept() -> None:
    prose, calls = parse_spell_blocks('[TOOL_CALLS]add[ARGS]{"a": 2, "b": 3} Adding now.')
    assert [(c.spell, c.arguments) for c in calls] == [("add", {"a": 2, "b": 3})]
    assert prose == "Adding now."


async def test_tools_ignored_by_llama_cpp_python_are_noted(server: ModelServer) -> None:
    import json as _json

    plain = oa_completion("I cannot help.")
    body = _json.loads(plain.body)
    body.pop("timings")
    body["id"] = "chatcmpl-1b4e28ba-2fa1-11d2-883f-0016d3cca427"  # llama-cpp-python's id
    vllm_like = dict(body, id="chatcmpl-9f8e7d6c5b4a39281706f5e4d3c2b1a0")
    server.reply(
        Reply(200, oa_json(body)),
        Reply(200, oa_json(vllm_like)),
        oa_completion('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'),
        Reply(200, oa_json(body)),
    )
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    ignored = await oracle.generate(HELLO, [ADD])
    assert ignored.usage["tools_ignored"] == 1
    assert "tools_ignored" not in (await oracle.generate(HELLO, [ADD])).usage  # not known
    assert "tools_ignored" not in (await oracle.generate(HELLO, [ADD])).usage  # call in text
    assert "tools_ignored" not in (await oracle.generate(HELLO)).usage  # no tools offered
    await oracle.aclose()
