"""The pure wire helpers, tested the original way: against recorded server answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sanctum.oracle import OracleResponse, OracleResponseError, SpellCall, ollama, openai_compat

TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You keep the ledger."},
    {"role": "user", "content": "How many words in 'a b c'?"},
    {
        "role": "assistant",
        "content": "",
        "spell_calls": [{"spell": "word_count", "arguments": {"text": "a b c"}, "call_id": "c1"}],
    },
    {"role": "spell", "name": "word_count", "content": "3", "call_id": "c1"},
]
SPELLS = [
    {
        "name": "word_count",
        "description": "Count the words in a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }
]


# --------------------------------------------------------------------------- Ollama


def test_ollama_format_messages_sends_arguments_as_objects() -> None:
    wire = ollama.format_messages(TRANSCRIPT)
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool"]
    call = wire[2]["tool_calls"][0]["function"]
    assert call == {"name": "word_count", "arguments": {"text": "a b c"}}
    assert wire[3]["content"] == "3"
    assert ollama.format_messages is ollama.to_ollama_messages


def test_ollama_build_payload() -> None:
    payload = ollama.build_payload("qwen2.5:7b", TRANSCRIPT[:2], SPELLS, stream=False)
    assert payload["model"] == "qwen2.5:7b"
    assert payload["stream"] is False
    assert payload["messages"] == ollama.format_messages(TRANSCRIPT[:2])
    assert payload["tools"][0]["function"]["name"] == "word_count"
    assert "keep_alive" not in payload
    assert "options" not in payload
    json.dumps(payload)  # ready for the wire

    tuned = ollama.build_payload(
        "llama3.2", [], None, stream=True, keep_alive="5m", options={"temperature": 0}
    )
    assert tuned == {
        "model": "llama3.2",
        "messages": [],
        "stream": True,
        "keep_alive": "5m",
        "options": {"temperature": 0},
    }


def test_the_ollama_oracle_sends_what_build_payload_builds() -> None:
    oracle = ollama.OllamaOracle("qwen2.5:7b", options={"num_ctx": 4096}, keep_alive=-1)
    expected = ollama.build_payload(
        oracle.arcana, TRANSCRIPT, SPELLS, stream=True, keep_alive=-1, options={"num_ctx": 4096}
    )
    assert oracle.build_request(TRANSCRIPT, SPELLS, stream=True) == expected


def test_ollama_parse_chat_response() -> None:
    recorded = {
        "model": "qwen2.5:7b",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "word_count", "arguments": {"text": "a b"}}}],
        },
        "done": True,
        "prompt_eval_count": 31,
        "eval_count": 12,
    }
    response = ollama.parse_chat_response(recorded)
    assert isinstance(response, OracleResponse)
    assert response.text == ""
    assert [(c.spell, c.arguments) for c in response.spell_calls] == [
        ("word_count", {"text": "a b"})
    ]
    assert isinstance(response.spell_calls[0], SpellCall)
    assert response.usage["prompt_tokens"] == 31
    assert response.usage["completion_tokens"] == 12

    plain = ollama.parse_chat_response({"message": {"role": "assistant", "content": "Three."}})
    assert plain.text == "Three."
    assert plain.spell_calls == []


def test_ollama_parse_chat_response_refuses_errors() -> None:
    with pytest.raises(OracleResponseError, match="not found"):
        ollama.parse_chat_response({"error": "model 'nope' not found"})
    with pytest.raises(OracleResponseError, match="message"):
        ollama.parse_chat_response({"done": True})


# --------------------------------------------------------------------------- OpenAI-compatible


def test_openai_format_messages_sends_arguments_as_strings() -> None:
    wire = openai_compat.format_messages(TRANSCRIPT)
    call = wire[2]["tool_calls"][0]
    assert call["id"] == "c1"
    assert json.loads(call["function"]["arguments"]) == {"text": "a b c"}
    assert wire[3] == {"role": "tool", "tool_call_id": "c1", "content": "3"}


def test_openai_build_payload() -> None:
    payload = openai_compat.build_payload("local-model", TRANSCRIPT[:2], SPELLS, stream=False)
    assert payload == {
        "model": "local-model",
        "messages": openai_compat.format_messages(TRANSCRIPT[:2]),
        "stream": False,
        "tools": [{"type": "function", "function": SPELLS[0]}],
    }
    extra = openai_compat.build_payload(
        "m", [], [], stream=True, extra_body={"temperature": 0.1, "max_tokens": 64}
    )
    assert extra == {
        "model": "m",
        "messages": [],
        "stream": True,
        "temperature": 0.1,
        "max_tokens": 64,
    }


def test_openai_parse_chat_completion() -> None:
    recorded = {
        "id": "chatcmpl-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": "word_count", "arguments": '{"text": "x y"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
    }
    response = openai_compat.parse_chat_completion(recorded)
    assert response.text == ""
    assert response.spell_calls == [
        SpellCall(spell="word_count", arguments={"text": "x y"}, call_id="call_9")
    ]
    assert response.usage == {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}

    broken = openai_compat.parse_chat_completion(
        {
            "choices": [
                {
                    "message": {
                        "content": "",
                        "tool_calls": [{"function": {"name": "f", "arguments": "{'x': 1"}}],
                    }
                }
            ]
        }
    )
    assert broken.spell_calls[0].arguments == {"__malformed_json__": "{'x': 1"}


def test_openai_parse_chat_completion_refuses_errors() -> None:
    with pytest.raises(OracleResponseError, match="tools"):
        openai_compat.parse_chat_completion({"error": {"message": "tools are not supported"}})
    with pytest.raises(OracleResponseError):
        openai_compat.parse_chat_completion({"choices": []})


RECORDED_STREAM = """\
data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}

data: {"choices":[{"index":0,"delta":{"content":"The "}}]}

: keep-alive
data: {"choices":[{"index":0,"delta":{"content":"ledger"}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c7",\
"function":{"name":"word_count","arguments":"{\\"te"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}

data: [DONE]
"""


def test_parse_sse_line_yields_the_text_tokens() -> None:
    tokens = [
        t for line in RECORDED_STREAM.splitlines() if (t := openai_compat.parse_sse_line(line))
    ]
    assert tokens == ["The ", "ledger"]
    assert openai_compat.parse_sse_line("data: [DONE]") is None
    assert openai_compat.parse_sse_line("") is None
    assert openai_compat.parse_sse_line(": keep-alive") is None
    assert openai_compat.parse_sse_line("data: not json") is None


def test_parse_sse_delta_yields_the_deltas() -> None:
    deltas = [
        d for line in RECORDED_STREAM.splitlines() if (d := openai_compat.parse_sse_delta(line))
    ]
    assert deltas[1] == {"content": "The "}
    fragments = [d["tool_calls"] for d in deltas if "tool_calls" in d]
    assert fragments[0][0]["function"]["name"] == "word_count"
    assert openai_compat.parse_sse_delta("data: [DONE]") is None
    assert openai_compat.parse_sse_delta('data: {"choices":[]}') is None
    assert openai_compat.parse_sse_delta("event: ping") is None
