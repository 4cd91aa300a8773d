"""The shared part of the HTTP Oracles: text streams derived from stream_response."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from sanctum.oracle._http import HttpOracleClient
from sanctum.oracle._served import ServedOracle
from sanctum.oracle.base import Message, OracleResponse


class _Echo(ServedOracle):
    arcana = "echo"

    def __init__(self) -> None:
        self._http = HttpOracleClient(
            "127.0.0.1:9", model="echo", server="echo server", start_hint="", timeout=1
        )

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        return OracleResponse("a b")

    async def stream_response(  # type: ignore[override]
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        yield "a "
        yield "b"
        yield OracleResponse("a b")


async def test_stream_generate_yields_only_the_text_chunks() -> None:
    oracle = _Echo()
    chunks = [chunk async for chunk in oracle.stream_generate([])]
    assert chunks == ["a ", "b"]
    assert oracle.base_url == "http://127.0.0.1:9"
    assert oracle.timeout == 1.0
    await oracle.aclose()
    await oracle.aclose()  # idempotent


def test_both_wire_formats_describe_tools_the_same_way() -> None:
    from sanctum.oracle._served import function_tools, message_text
    from sanctum.oracle.ollama import to_ollama_tools
    from sanctum.oracle.openai_compat import to_openai_tools

    spells = [{"name": "add", "description": "Add.", "parameters": None}]
    expected = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert function_tools(spells) == to_ollama_tools(spells) == to_openai_tools(spells) == expected
    assert message_text(None) == ""
    assert message_text({"a": "é"}) == '{"a": "é"}'
