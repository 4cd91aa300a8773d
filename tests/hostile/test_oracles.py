"""Hostile HTTP answers to the Oracles: oversized bodies and streams, redirects, keys."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from sanctum.errors import OracleResponseError
from sanctum.oracle._http import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from tests.oracle.servers import (
    ModelServer,
    Reply,
    go_json,
    oa_completion,
    ollama_chat,
    redirect,
    running_server,
)

HELLO = [{"role": "user", "content": "hi"}]
KEY = "sk-hostile-0123456789abcdefghijklmnop"


async def drain(stream: AsyncIterator[str], into: list[str]) -> None:
    async for chunk in stream:
        into.append(chunk)


@pytest.fixture
def elsewhere() -> Iterator[ModelServer]:
    with running_server() as srv:
        yield srv


def test_defaults_bound_every_request() -> None:
    assert DEFAULT_MAX_RESPONSE_BYTES == 16 * 1024 * 1024
    assert DEFAULT_TIMEOUT == 120.0
    for oracle in (OllamaOracle("m"), OpenAICompatibleOracle("m", base_url="http://127.0.0.1:1")):
        assert oracle.timeout == 120.0
        with pytest.raises(ValueError):
            type(oracle)("m", base_url="http://127.0.0.1:1", timeout=-1)
        with pytest.raises(ValueError):
            type(oracle)("m", base_url="http://127.0.0.1:1", max_response_bytes=0)


async def test_body_over_the_default_limit_is_cut(server: ModelServer) -> None:
    huge = (
        b'{"message":{"role":"assistant","content":"' + b"A" * DEFAULT_MAX_RESPONSE_BYTES + b'"}}'
    )
    server.reply(Reply(200, huge))
    with pytest.raises(OracleResponseError, match="max_response_bytes") as info:
        await OllamaOracle("m", base_url=server.url).generate(HELLO)
    assert str(DEFAULT_MAX_RESPONSE_BYTES) in str(info.value)


async def test_body_over_a_configured_limit_is_cut(server: ModelServer) -> None:
    server.reply(oa_completion("x" * 5000))
    oracle = OpenAICompatibleOracle("m", base_url=server.url, max_response_bytes=1024)
    with pytest.raises(OracleResponseError, match="more than 1024 bytes"):
        await oracle.generate(HELLO)


async def test_error_body_over_the_limit_is_cut_too(server: ModelServer) -> None:
    server.reply(Reply(500, go_json({"error": "E" * 4096})))
    with pytest.raises(OracleResponseError, match="max_response_bytes"):
        await OllamaOracle("m", base_url=server.url, max_response_bytes=1024).generate(HELLO)


async def test_endless_ndjson_stream_is_cut(server: ModelServer) -> None:
    line = go_json(
        {"model": "m", "message": {"role": "assistant", "content": "la "}, "done": False}
    )
    server.reply(Reply(200, chunks=[line + b"\n"] * 2000, content_type="application/x-ndjson"))
    received: list[str] = []
    oracle = OllamaOracle("m", base_url=server.url, max_response_bytes=4096)
    with pytest.raises(OracleResponseError, match="more than 4096 bytes"):
        await drain(oracle.stream_generate(HELLO), received)
    assert 0 < len(received) < 100


async def test_sse_stream_without_newlines_is_cut(server: ModelServer) -> None:
    server.reply(
        Reply(200, chunks=[b"data: " + b"z" * 1000] * 50, content_type="text/event-stream")
    )
    oracle = OpenAICompatibleOracle("m", base_url=server.url, max_response_bytes=8192)
    with pytest.raises(OracleResponseError, match="max_response_bytes"):
        async for _ in oracle.stream_generate(HELLO):
            pass


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_redirect_to_another_host_is_not_followed(
    server: ModelServer, elsewhere: ModelServer, status: int
) -> None:
    target = f"http://localhost:{elsewhere.port}/api/chat"
    server.reply(redirect(target, status))
    elsewhere.reply(ollama_chat("stolen"))
    with pytest.raises(OracleResponseError, match="never follow redirects") as info:
        await OllamaOracle("m", base_url=server.url).generate(HELLO)
    assert info.value.status == status
    assert elsewhere.requests == []


async def test_redirect_to_another_port_does_not_carry_the_key(
    server: ModelServer, elsewhere: ModelServer
) -> None:
    server.reply(redirect(f"{elsewhere.url}/v1/chat/completions", 307))
    elsewhere.reply(oa_completion("stolen"))
    oracle = OpenAICompatibleOracle("m", base_url=f"{server.url}/v1", api_key=KEY)
    with pytest.raises(OracleResponseError) as info:
        await oracle.generate(HELLO)
    assert elsewhere.requests == []
    assert KEY not in str(info.value)


async def test_same_origin_307_is_followed_with_the_body(server: ModelServer) -> None:
    server.reply(redirect("/v2/chat/completions", 307), oa_completion("moved"))
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    response = await oracle.generate(HELLO)
    await oracle.aclose()
    assert response.text == "moved"
    assert [r.path for r in server.requests] == ["/v1/chat/completions", "/v2/chat/completions"]
    assert server.requests[1].json["messages"] == HELLO


async def test_same_origin_302_is_refused(server: ModelServer) -> None:
    server.reply(redirect("/elsewhere", 302))
    with pytest.raises(OracleResponseError, match="HTTP 302"):
        await OllamaOracle("m", base_url=server.url).generate(HELLO)


async def test_redirect_loop_stops(server: ModelServer) -> None:
    server.reply(*[redirect("/api/chat", 307) for _ in range(6)])
    with pytest.raises(OracleResponseError, match="more than 3 times"):
        await OllamaOracle("m", base_url=server.url).generate(HELLO)
    assert len(server.requests) == 4


async def test_credentials_in_base_url_never_reach_messages(server: ModelServer) -> None:
    server.reply(Reply(hang=True))
    base = server.url.replace("http://", f"http://user:{KEY}@")
    oracle = OpenAICompatibleOracle("m", base_url=base, timeout=0.2)
    assert KEY not in repr(oracle)
    with pytest.raises(Exception) as info:
        await oracle.generate(HELLO)
    assert KEY not in str(info.value)
    assert KEY not in str(getattr(info.value, "endpoint", ""))


async def test_garbage_stream_lines_are_errors_not_crashes(server: ModelServer) -> None:
    server.reply(Reply(200, chunks=[b"\xff\xfe{not json\n"], content_type="application/x-ndjson"))
    with pytest.raises(OracleResponseError, match="not JSON"):
        async for _ in OllamaOracle("m", base_url=server.url).stream_generate(HELLO):
            pass


async def test_deeply_nested_json_is_an_error_not_a_crash(server: ModelServer) -> None:
    depth = 200_000
    server.reply(Reply(200, b"[" * depth + b"]" * depth))
    oracle = OllamaOracle("m", base_url=server.url)
    with pytest.raises(OracleResponseError, match="not JSON"):
        await oracle.generate(HELLO)
    await oracle.aclose()


async def test_deeply_nested_sse_event_is_an_error_not_a_crash(server: ModelServer) -> None:
    depth = 100_000
    server.reply(
        Reply(
            200,
            chunks=[b"data: " + b"[" * depth + b"]" * depth + b"\n\n"],
            content_type="text/event-stream",
        )
    )
    with pytest.raises(OracleResponseError, match="not JSON"):
        async for _ in OpenAICompatibleOracle("m", base_url=server.url).stream_generate(HELLO):
            pass


async def test_deeply_nested_tool_arguments_are_flagged(server: ModelServer) -> None:
    depth = 100_000
    arguments = '{"a":' + "[" * depth + "]" * depth + "}"
    server.reply(
        oa_completion(
            None,
            [{"type": "function", "id": "c", "function": {"name": "add", "arguments": arguments}}],
        )
    )
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    response = await oracle.generate(HELLO)
    await oracle.aclose()
    assert response.spell_calls[0].arguments == {"__malformed_json__": arguments}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("localhost", "http://localhost"),
        (" http://127.0.0.1:8080/v1/ ", "http://127.0.0.1:8080/v1"),
        ("HTTPS://example.invalid", "HTTPS://example.invalid"),
    ],
)
def test_base_urls_without_a_scheme_get_http(given: str, expected: str) -> None:
    from sanctum.oracle._http import normalise_base_url

    assert normalise_base_url(given) == expected


@pytest.mark.parametrize("given", ["", "   ", "ftp://127.0.0.1:21", "file:///etc/passwd"])
def test_base_urls_that_are_not_http_are_refused(given: str) -> None:
    from sanctum.oracle._http import normalise_base_url

    with pytest.raises(ValueError, match="base_url"):
        normalise_base_url(given)


async def test_an_ollama_host_without_a_scheme_is_reached() -> None:
    from sanctum.errors import OracleConnectionError
    from sanctum.oracle.ollama import OllamaOracle

    oracle = OllamaOracle("m", base_url="127.0.0.1:9", timeout=2)
    with pytest.raises(OracleConnectionError) as caught:
        await oracle.generate([{"role": "user", "content": "hi"}])
    assert "http://127.0.0.1:9/api/chat" in str(caught.value)
    await oracle.aclose()
