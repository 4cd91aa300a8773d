"""Constrained spell calling against servers speaking the real wire formats.

The loopback servers record what sanctum sends (``response_format``, ``format``) and
answer as llama-server, llama-cpp-python's server and Ollama do.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from sanctum.errors import OracleResponseError
from sanctum.oracle import OracleResponse, ScriptedOracle
from sanctum.oracle._http import is_schema_rejection
from sanctum.oracle.constrained import (
    ConstrainedSpellCalling,
    read_constrained,
    spell_call_schema,
)
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from tests.oracle.servers import (
    ModelServer,
    Reply,
    llama_server_error,
    oa_completion,
    oa_json,
    ollama_chat,
    ollama_error,
)

WORD_COUNT = {
    "name": "word_count",
    "description": "Count the words of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
ADD = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
ASK = [{"role": "user", "content": "How many words are in 'the cat sat'?"}]
CALL = '{"spell": "word_count", "arguments": {"text": "the cat sat"}}'


def test_the_schema_admits_exactly_an_answer_or_one_valid_call() -> None:
    schema = spell_call_schema([WORD_COUNT, ADD])
    valid = [
        {"answer": "three"},
        {"spell": "word_count", "arguments": {"text": "a b"}},
        {"spell": "add", "arguments": {"a": 1, "b": 2}},
    ]
    invalid = [
        {"spell": "wordcount", "arguments": {"text": "a"}},  # no such spell
        {"spell": "add", "arguments": {"a": "1", "b": 2}},  # a string for an integer
        {"spell": "add", "arguments": {"a": 1}},  # missing b
        {"spell": "add", "arguments": {"a": 1, "b": 2, "c": 3}},  # an extra argument
        {"answer": "x", "spell": "add"},
        {"spell": "word_count"},
        "three",
    ]
    for value in valid:
        jsonschema.validate(value, schema)
    for value in invalid:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(value, schema)
    names = [b["properties"].get("spell", {}).get("const") for b in schema["oneOf"]]
    assert names == [None, "word_count", "add"]


def test_a_required_spell_leaves_the_answer_out() -> None:
    schema = spell_call_schema([WORD_COUNT], require_spell=True)
    jsonschema.validate(json.loads(CALL), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"answer": "3"}, schema)


def test_reading_a_constrained_answer() -> None:
    call = read_constrained(OracleResponse(CALL, usage={"completion_tokens": 9})).spell_calls[0]
    assert (call.spell, call.arguments) == ("word_count", {"text": "the cat sat"})
    assert call.call_id
    assert read_constrained(OracleResponse('{"answer": "Three words."}')).text == "Three words."
    cut = read_constrained(OracleResponse('{"answer": "Three wo'))  # max_tokens hit
    assert cut.text == "Three wo"
    assert cut.spell_calls == []


async def test_openai_compatible_sends_a_json_schema_response_format(server: ModelServer) -> None:
    server.reply(oa_completion(CALL), oa_completion('{"answer": "3 words"}'))
    oracle = ConstrainedSpellCalling(
        OpenAICompatibleOracle("m", base_url=f"{server.url}/v1", extra_body={"seed": 7})
    )
    first = await oracle.generate(ASK, [WORD_COUNT])
    assert [(c.spell, c.arguments) for c in first.spell_calls] == [
        ("word_count", {"text": "the cat sat"})
    ]
    assert first.usage["completion_tokens"] == 12
    sent = server.requests[0].json
    assert "tools" not in sent
    assert "tool_choice" not in sent
    assert sent["seed"] == 7
    fmt = sent["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"] == spell_call_schema([WORD_COUNT])
    assert "word_count" in sent["messages"][0]["content"]  # the spells in the system prompt
    transcript: list[dict[str, Any]] = [
        *ASK,
        {"role": "assistant", "content": "", "spell_calls": [first.spell_calls[0].to_message()]},
        {"role": "spell", "name": "word_count", "call_id": "c1", "content": "3"},
    ]
    final = await oracle.generate(transcript, [WORD_COUNT])
    assert (final.text, final.spell_calls) == ("3 words", [])
    history = server.requests[1].json["messages"]
    assert history[-2] == {"role": "assistant", "content": CALL}
    assert history[-1]["role"] == "user"
    assert "Result of spell word_count" in history[-1]["content"]
    assert oracle.take_notice() is None
    await oracle.aclose()


async def test_llama_cpp_python_server_dialect_is_tried_once_and_kept(server: ModelServer) -> None:
    refusal = {
        "detail": [
            {
                "type": "literal_error",
                "loc": ["body", "response_format", "type"],
                "msg": "Input should be 'text' or 'json_object'",
            }
        ]
    }
    server.reply(Reply(422, oa_json(refusal)), oa_completion(CALL), oa_completion(CALL))
    oracle = OpenAICompatibleOracle("m", base_url=f"{server.url}/v1")
    schema = spell_call_schema([WORD_COUNT])
    await oracle.generate_constrained(ASK, schema)
    await oracle.generate_constrained(ASK, schema)
    formats = [r.json["response_format"] for r in server.requests]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    assert formats[1]["schema"] == schema
    await oracle.aclose()


async def test_ollama_sends_the_schema_as_format(server: ModelServer) -> None:
    server.reply(ollama_chat(CALL))
    oracle = ConstrainedSpellCalling(OllamaOracle("qwen2.5:0.5b", base_url=server.url))
    response = await oracle.generate(ASK, [WORD_COUNT])
    assert response.spell_calls[0].spell == "word_count"
    sent = server.requests[0].json
    assert sent["format"] == spell_call_schema([WORD_COUNT])
    assert "tools" not in sent
    assert response.usage["completion_tokens"] == 282
    await oracle.aclose()


async def test_a_rejected_schema_falls_back_to_prompted_once_with_a_notice(
    server: ModelServer,
) -> None:
    server.reply(
        ollama_error(400, "invalid format: json schema not supported"),
        ollama_chat('<spell_call>{"spell": "word_count", "arguments": {"text": "a b"}}'),
        ollama_chat("2 words"),
    )
    oracle = ConstrainedSpellCalling(OllamaOracle("old", base_url=server.url))
    first = await oracle.generate(ASK, [WORD_COUNT])
    assert first.spell_calls[0].arguments == {"text": "a b"}
    notice = oracle.take_notice()
    assert notice is not None
    assert "json schema not supported" in notice
    assert "prompted" in notice
    assert oracle.take_notice() is None
    assert oracle.prompted
    second = await oracle.generate(ASK, [WORD_COUNT])
    assert second.text == "2 words"
    assert "format" not in server.requests[1].json
    assert "format" not in server.requests[2].json  # the schema is never tried again
    assert "<spell_call>" in server.requests[2].json["messages"][0]["content"]
    await oracle.aclose()


async def test_other_errors_are_not_a_fallback(server: ModelServer) -> None:
    server.reply(llama_server_error(503, "Loading model"))
    oracle = ConstrainedSpellCalling(OpenAICompatibleOracle("m", base_url=server.url))
    with pytest.raises(OracleResponseError, match="Loading model"):
        await oracle.generate(ASK, [WORD_COUNT])
    assert not oracle.prompted
    await oracle.aclose()


def test_what_counts_as_a_schema_rejection() -> None:
    def err(status: int | None, body: str) -> OracleResponseError:
        return OracleResponseError(body, status=status, body=body)

    assert is_schema_rejection(err(400, "response_format is not supported"))
    assert is_schema_rejection(err(422, "literal_error"))
    assert is_schema_rejection(err(500, "failed to parse grammar"))
    assert not is_schema_rejection(err(500, "out of memory"))
    assert not is_schema_rejection(err(404, "model 'x' not found"))
    assert not is_schema_rejection(err(401, "bad key"))
    assert not is_schema_rejection(ValueError("schema"))


async def test_an_oracle_without_constrained_decoding_falls_back() -> None:
    inner = ScriptedOracle(['<spell_call>{"spell": "add", "arguments": {"a": 1, "b": 2}}'])
    oracle = ConstrainedSpellCalling(inner)
    response = await oracle.generate(ASK, [ADD])
    assert response.spell_calls[0].arguments == {"a": 1, "b": 2}
    notice = oracle.take_notice()
    assert notice is not None
    assert "ScriptedOracle has no constrained decoding" in notice


async def test_required_spell_choice_holds_only_the_first_turn(server: ModelServer) -> None:
    server.reply(oa_completion(CALL), oa_completion('{"answer": "3"}'))
    oracle = ConstrainedSpellCalling(
        OpenAICompatibleOracle("m", base_url=server.url), spell_choice="required"
    )
    await oracle.generate(ASK, [WORD_COUNT])
    after: list[dict[str, Any]] = [
        *ASK,
        {"role": "assistant", "content": "", "spell_calls": [json.loads(CALL)]},
        {"role": "spell", "name": "word_count", "call_id": None, "content": "3"},
    ]
    await oracle.generate(after, [WORD_COUNT])
    first, second = (r.json["response_format"]["json_schema"]["schema"] for r in server.requests)
    assert first == spell_call_schema([WORD_COUNT], require_spell=True)
    assert second == spell_call_schema([WORD_COUNT])
    with pytest.raises(ValueError, match="spell_choice"):
        ConstrainedSpellCalling(ScriptedOracle([]), spell_choice="always")  # type: ignore[arg-type]
    await oracle.aclose()
