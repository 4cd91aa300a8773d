"""Robust spell-calling: extract_json, the spell prompt, block parsing, PromptedSpellCalling.

The "auto" fallback is exercised against real HTTP servers on 127.0.0.1 speaking
Ollama's and the OpenAI-compatible wire formats (tests/oracle/servers.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sanctum.errors import OracleResponseError
from sanctum.oracle.base import OracleResponse, SpellCall
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from sanctum.oracle.robust import (
    SPELL_CALL_CLOSE,
    SPELL_CALL_OPEN,
    PromptedSpellCalling,
    call_from_object,
    extract_json,
    extract_json_with_mend,
    inject_spell_prompt,
    is_tool_rejection,
    parse_spell_blocks,
    render_spell_prompt,
)
from sanctum.oracle.scripted import ScriptedOracle
from tests.oracle.servers import (
    ModelServer,
    llama_server_error,
    oa_completion,
    ollama_chat,
    ollama_error,
    ollama_tool_call,
    vllm_error,
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
ECHO = {"name": "echo", "description": "", "parameters": {"type": "object", "properties": {}}}
HELLO = [{"role": "user", "content": "What is 2 + 3?"}]
BLOCK = f'{SPELL_CALL_OPEN}{{"spell": "add", "arguments": {{"a": 2, "b": 3}}}}{SPELL_CALL_CLOSE}'


# --------------------------------------------------------------------------- extract_json


def test_plain_json_object() -> None:
    assert extract_json('{"a": 1, "b": [true, null]}') == {"a": 1, "b": [True, None]}


def test_the_first_fenced_json_block_wins() -> None:
    text = 'See {"x": 0}\n```json\n{"first": 1}\n```\nand\n```json\n{"second": 2}\n```'
    assert extract_json(text) == {"first": 1}


def test_fence_language_tag_is_case_insensitive() -> None:
    assert extract_json('```JSON\n{"a": 1}\n```') == {"a": 1}


def test_a_broken_fence_falls_back_to_the_outermost_brace_region() -> None:
    text = '```json\nnot json at all\n``` but later {"a": {"b": 2}} ok'
    assert extract_json(text) == {"a": {"b": 2}}


def test_prose_around_the_object() -> None:
    assert extract_json('Sure, here you go: {"city": "Paris"} — enjoy!') == {"city": "Paris"}


def test_missing_closing_braces_are_appended() -> None:
    value, how = extract_json_with_mend('{"a": {"b": 1}')
    assert value == {"a": {"b": 1}}
    assert how == "appended 1 missing closing brace in the outermost brace region"


def test_single_quotes_are_swapped_when_there_are_no_double_quotes() -> None:
    value, how = extract_json_with_mend("{'a': 'x', 'n': 2}")
    assert value == {"a": "x", "n": 2}
    assert "swapped single quotes" in how


def test_single_quotes_and_missing_braces_together() -> None:
    assert extract_json("{'a': {'b': 'c'}") == {"a": {"b": "c"}}


def test_tolerant_tiers_for_small_models() -> None:
    assert extract_json('{"a": 1, "b": [1, 2,],}') == {"a": 1, "b": [1, 2]}
    assert extract_json("{'ok': True, 'no': False, 'none': None}") == {
        "ok": True,
        "no": False,
        "none": None,
    }
    assert extract_json('{name: "x", count: 2}') == {"name": "x", "count": 2}
    assert extract_json('{"a": [1, {"b": "complete"') == {"a": [1, {"b": "complete"}]}
    # a value cut off mid-string, or a key with no value, is never guessed
    assert extract_json('{"a": [1, {"b": "unterminated') is None
    assert extract_json('{"city": "San Fran') is None
    assert extract_json('{"query": }') is None
    assert extract_json('{"query": ') is None
    assert extract_json('{"a": 1} and then {"b": 2}') == {"a": 1}
    assert extract_json('{"city": Paris}') == {"city": "Paris"}  # json_repair tier
    assert extract_json("{'text': \"it's\"}") == {"text": "it's"}


def test_tool_call_tags_and_double_encoding() -> None:
    assert extract_json('<tool_call>{"name": "f", "arguments": {}}</tool_call>') == {
        "name": "f",
        "arguments": {},
    }
    assert extract_json(json.dumps(json.dumps({"a": 1}))) == {"a": 1}


@pytest.mark.parametrize(
    "text", ["", "no json here", "[1, 2, 3]", '"a string"', "42", "{", "I think {this} is fine"]
)
def test_nothing_parses_to_none(text: str) -> None:
    assert extract_json(text) in (None, {})
    if "{" not in text:
        assert extract_json(text) is None


def test_extract_json_tolerates_non_strings() -> None:
    assert extract_json(None) is None  # type: ignore[arg-type]
    assert parse_spell_blocks(b"{}") == ("", [])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the prompt


def test_render_spell_prompt_lists_every_spell_and_the_exact_block() -> None:
    prompt = render_spell_prompt([ADD, ECHO])
    assert "## add" in prompt
    assert "## echo" in prompt
    assert "Add two integers." in prompt
    assert json.dumps(ADD["parameters"]) in prompt
    example = f'{SPELL_CALL_OPEN}\n{{"spell": "add", "arguments": {{"a": 3, "b": 3}}}}\n'
    assert example + SPELL_CALL_CLOSE in prompt
    assert prompt.index("## add") < prompt.index("## echo")


def test_the_prompt_example_obeys_the_spell_schema_and_has_no_placeholders() -> None:
    from sanctum.grimoire import repair_spell_call
    from sanctum.grimoire.spell import spell
    from sanctum.grimoire.tome import Tome
    from sanctum.oracle.base import SpellCall

    @spell
    def shout(text: str, times: int = 1) -> str:
        """Shout a text."""
        return text.upper() * times

    schema = shout.schema()
    prompt = render_spell_prompt([schema])
    body = prompt.split(SPELL_CALL_OPEN + "\n", 1)[1].split("\n" + SPELL_CALL_CLOSE, 1)[0]
    call = json.loads(body)
    assert call["spell"] == "shout"
    outcome = repair_spell_call(SpellCall(call["spell"], call["arguments"]), Tome([shout]))
    assert outcome.call is not None, outcome.correction
    for placeholder in ("SPELL_NAME", "ARGUMENT", "VALUE", "NAME"):
        assert placeholder not in prompt


def test_inject_appends_to_the_leading_system_message_without_mutating() -> None:
    messages = [{"role": "system", "content": "Be brief."}, *HELLO]
    before = json.loads(json.dumps(messages))
    result = inject_spell_prompt(messages, [ADD])
    assert messages == before
    assert result is not messages
    assert result[0]["content"] == "Be brief.\n\n" + render_spell_prompt([ADD])
    assert result[1] is messages[1]


def test_inject_prepends_a_system_message_when_there_is_none() -> None:
    result = inject_spell_prompt(HELLO, [ADD])
    assert result[0] == {"role": "system", "content": render_spell_prompt([ADD])}
    assert result[1:] == HELLO
    assert len(HELLO) == 1


# --------------------------------------------------------------------------- parse_spell_blocks


def test_blocks_become_calls_and_the_prose_is_kept() -> None:
    text = f"Let me add.\n{BLOCK}\nDone soon."
    assert parse_spell_blocks(text) == (
        "Let me add.\n\nDone soon.",
        [SpellCall("add", {"a": 2, "b": 3})],
    )


def test_unparseable_blocks_are_flagged_malformed() -> None:
    prose, calls = parse_spell_blocks(f"{SPELL_CALL_OPEN}add two and three{SPELL_CALL_CLOSE}")
    assert prose == ""
    assert calls == [SpellCall("", {"__malformed_json__": "add two and three"})]


def test_a_malformed_block_keeps_the_spell_name_it_mentions() -> None:
    raw = '"spell": "add", arguments: a=2 b=3'
    _prose, calls = parse_spell_blocks(f"{SPELL_CALL_OPEN}{raw}{SPELL_CALL_CLOSE}")
    assert calls[0].spell == "add"
    assert calls[0].arguments == {"__malformed_json__": raw}


def test_bare_json_with_a_spell_key_is_routed_as_a_malformed_call() -> None:
    text = '{"spell": "add", "arguments": {"a": 1, "b": 2}}'
    assert parse_spell_blocks(text) == ("", [SpellCall("add", {"__malformed_json__": text})])


def test_bare_json_without_a_spell_key_is_just_prose() -> None:
    text = 'The answer is {"total": 5}.'
    assert parse_spell_blocks(text) == (text, [])


def test_call_from_object_shapes() -> None:
    assert call_from_object({"spell": "f", "arguments": {"x": 1}, "id": "c9"}) == SpellCall(
        "f", {"x": 1}, "c9"
    )
    assert call_from_object({"name": "f", "parameters": {"x": 1}}) == SpellCall("f", {"x": 1})
    assert call_from_object({"type": "function", "function": {"name": "f", "arguments": "{}"}}) == (
        SpellCall("f", {"__malformed_json__": "{}"})
    )
    assert call_from_object({"spell": "f", "x": 1}) == SpellCall("f", {"x": 1})
    assert call_from_object({"name": "Bob"}) is None  # a plain argument, not a call
    assert call_from_object({"spell": ""}) is None


def test_flattened_calls_keep_arguments_named_like_call_metadata() -> None:
    assert call_from_object({"spell": "lookup", "id": 42, "type": "admin"}) == SpellCall(
        "lookup", {"id": 42, "type": "admin"}
    )
    assert call_from_object({"spell": "run", "input": "hello"}) == SpellCall(
        "run", {"input": "hello"}
    )
    assert call_from_object({"spell": "f", "type": "function", "call_id": "c1", "x": 1}) == (
        SpellCall("f", {"x": 1}, "c1")
    )
    assert call_from_object({"function": "f", "arguments": {"x": 1}}) == SpellCall("f", {"x": 1})
    # inside a delimited block, "name" names the spell even with flattened arguments
    assert call_from_object({"name": "add", "a": 1}) is None
    assert call_from_object({"name": "add", "a": 1}, delimited=True) == SpellCall("add", {"a": 1})


def _cast(text: str) -> list[tuple[str, dict[str, Any]]]:
    _prose, calls = parse_spell_blocks(text)
    return [(c.spell, c.arguments) for c in calls]


def test_a_block_may_hold_several_calls() -> None:
    one, two = '{"name":"add","arguments":{"a":1,"b":2}}', '{"name":"add","arguments":{"a":3}}'
    want = [("add", {"a": 1, "b": 2}), ("add", {"a": 3})]
    assert _cast(f"<tool_call>{one}\n{two}</tool_call>") == want
    assert _cast(f"<spell_call>[{one}, {two}]</spell_call>") == want
    assert _cast(f'<tool_call>{{"tool_calls": [{one}, {two}]}}</tool_call>') == want
    # braces inside single-quoted values split nothing
    quoted = "{'spell':'s','arguments':{'q':'a } b'}}\n{'spell':'s','arguments':{'q':'c { d'}}"
    assert _cast(f"<spell_call>{quoted}</spell_call>") == [
        ("s", {"q": "a } b"}),
        ("s", {"q": "c { d"}),
    ]


def test_an_unclosed_block_ends_where_the_next_one_opens() -> None:
    text = (
        '<tool_call>{"name":"a","arguments":{}}<tool_call>{"name":"b","arguments":{}}</tool_call>'
    )
    assert _cast(text) == [("a", {}), ("b", {})]


def test_openers_that_name_the_spell() -> None:
    assert _cast('<function=add>{"a": 1, "b": 2}</function>') == [("add", {"a": 1, "b": 2})]
    assert _cast('[TOOL_CALLS]add[ARGS]{"a": 1, "b": 2}') == [("add", {"a": 1, "b": 2})]
    assert _cast("<function=get_time></function>") == [("get_time", {})]


def test_reasoning_is_never_searched_for_calls() -> None:
    draft = '<think>maybe {"spell":"add","arguments":{"a":9,"b":9}}? no.</think>\n'
    answer = '{"spell":"add","arguments":{"a":1,"b":2}}'
    _prose, calls = parse_spell_blocks(draft + answer)
    assert [c.spell for c in calls] == ["add"]
    assert calls[0].arguments == {"__malformed_json__": answer}
    assert parse_spell_blocks("<think><spell_call>{}</spell_call>") == (
        "<think><spell_call>{}</spell_call>",
        [],
    )


def test_a_bare_tool_calls_wrapper_yields_every_call() -> None:
    text = '{"tool_calls": [{"name": "add", "arguments": {"a": 1}}, {"name": "get_time"}]}'
    _prose, calls = parse_spell_blocks(text)
    assert [c.spell for c in calls] == ["add", "get_time"]
    assert all("__malformed_json__" in c.arguments for c in calls)  # repaired with an Omen


def test_single_quoted_text_keeps_its_apostrophes() -> None:
    assert extract_json("{'query': 'it\\'s'}") == {"query": "it's"}
    assert extract_json("{'query': 'don't stop'}") == {"query": "don't stop"}


def test_json_repair_may_not_drop_quoted_text() -> None:
    assert extract_json('{"query": "a" "b"}') is None
    assert extract_json('{"query": "a" + "b"}') in (None, {"query": 'a" + "b'})


# --------------------------------------------------------------------------- the wrapper


async def test_always_mode_injects_the_prompt_and_parses_the_answer() -> None:
    inner = ScriptedOracle([OracleResponse(f"Adding. {BLOCK}", usage={"total_tokens": 9})])
    oracle = PromptedSpellCalling(inner)
    assert oracle.arcana == "scripted"
    assert oracle.prompted
    response = await oracle.generate(HELLO, [ADD])
    assert response == OracleResponse(
        "Adding.", [SpellCall("add", {"a": 2, "b": 3})], {"total_tokens": 9}
    )
    sent, spells = inner.calls[0]
    assert spells is None
    assert sent == inject_spell_prompt(HELLO, [ADD])


async def test_without_spells_the_wrapper_passes_through() -> None:
    inner = ScriptedOracle(["Five."])
    response = await PromptedSpellCalling(inner).generate(HELLO)
    assert response.text == "Five."
    assert inner.calls[0] == (HELLO, None)


async def test_earlier_calls_and_results_are_written_back_as_text() -> None:
    inner = ScriptedOracle(["Five."])
    transcript: list[dict[str, Any]] = [
        *HELLO,
        {
            "role": "assistant",
            "content": "",
            "spell_calls": [{"spell": "add", "arguments": {"a": 2, "b": 3}, "call_id": "c1"}],
        },
        {"role": "spell", "name": "add", "call_id": "c1", "content": "5"},
    ]
    await PromptedSpellCalling(inner).generate(transcript, [ADD])
    sent = inner.calls[0][0]
    assert sent[2] == {
        "role": "assistant",
        "content": f'{SPELL_CALL_OPEN}\n{{"spell": "add", "arguments": {{"a": 2, "b": 3}}}}\n'
        f"{SPELL_CALL_CLOSE}",
    }
    assert sent[3] == {"role": "user", "content": "Result of spell add:\n5"}


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="'always' or 'auto'"):
        PromptedSpellCalling(ScriptedOracle([]), mode="never")  # type: ignore[arg-type]


async def test_stream_generate_injects_the_prompt() -> None:
    inner = ScriptedOracle(["two words"])
    chunks = [c async for c in PromptedSpellCalling(inner).stream_generate(HELLO, [ADD])]
    assert "".join(chunks) == "two words"
    assert inner.calls[0][0] == inject_spell_prompt(HELLO, [ADD])


def _has_tools(server: ModelServer, index: int) -> bool:
    return "tools" in server.requests[index].json


async def test_auto_uses_native_tools_while_the_endpoint_accepts_them(server: ModelServer) -> None:
    server.reply(ollama_chat("", [ollama_tool_call("add", {"a": 2, "b": 3})]))
    oracle = PromptedSpellCalling(OllamaOracle("qwen2.5:7b", base_url=server.url), mode="auto")
    response = await oracle.generate(HELLO, [ADD])
    await oracle.aclose()
    assert [(c.spell, c.arguments) for c in response.spell_calls] == [("add", {"a": 2, "b": 3})]
    assert not oracle.prompted
    assert _has_tools(server, 0)


async def test_auto_parses_a_call_the_server_left_in_the_text(server: ModelServer) -> None:
    server.reply(ollama_chat('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 1}}'))
    oracle = PromptedSpellCalling(OllamaOracle("qwen2.5:7b", base_url=server.url), mode="auto")
    response = await oracle.generate(HELLO, [ADD])
    await oracle.aclose()
    assert response.spell_calls == [SpellCall("add", {"a": 1, "b": 1})]
    assert not oracle.prompted


async def test_auto_falls_back_for_good_on_ollamas_tool_rejection(server: ModelServer) -> None:
    server.reply(
        ollama_error(400, "registry.ollama.ai/library/gemma3:4b does not support tools"),
        ollama_chat(BLOCK),
        ollama_chat("It is 5."),
    )
    oracle = PromptedSpellCalling(OllamaOracle("gemma3:4b", base_url=server.url), mode="auto")
    first = await oracle.generate(HELLO, [ADD])
    assert oracle.prompted
    second = await oracle.generate(HELLO, [ADD])
    await oracle.aclose()
    assert first.spell_calls == [SpellCall("add", {"a": 2, "b": 3})]
    assert second.text == "It is 5."
    assert len(server.requests) == 3  # rejected once, then prompted twice: no more retries
    assert _has_tools(server, 0)
    assert not _has_tools(server, 1)
    assert not _has_tools(server, 2)
    system = server.requests[1].json["messages"][0]
    assert system["role"] == "system"
    assert "## add" in system["content"]


@pytest.mark.parametrize(
    "reply",
    [
        llama_server_error(500, "tools param requires --jinja flag"),
        vllm_error(
            400,
            '"auto" tool choice requires --enable-auto-tool-choice and '
            "--tool-call-parser to be set",
        ),
    ],
    ids=["llama-server", "vllm"],
)
async def test_auto_falls_back_on_openai_compatible_rejections(
    server: ModelServer, reply: Any
) -> None:
    server.reply(reply, oa_completion(BLOCK))
    inner = OpenAICompatibleOracle("local-model", base_url=server.url)
    oracle = PromptedSpellCalling(inner, mode="auto")
    response = await oracle.generate(HELLO, [ADD])
    await oracle.aclose()
    assert oracle.prompted
    assert response.spell_calls == [SpellCall("add", {"a": 2, "b": 3})]


@pytest.mark.parametrize(
    "reply",
    [
        ollama_error(500, "llama runner process has terminated: exit status 2"),
        ollama_error(404, 'model "nope" not found, try pulling it first'),
        ollama_error(400, "invalid tool call arguments"),
    ],
    ids=["500", "404", "400-other"],
)
async def test_auto_does_not_fall_back_on_other_errors(server: ModelServer, reply: Any) -> None:
    server.reply(reply)
    oracle = PromptedSpellCalling(OllamaOracle("qwen2.5:7b", base_url=server.url), mode="auto")
    with pytest.raises(OracleResponseError) as caught:
        await oracle.generate(HELLO, [ADD])
    await oracle.aclose()
    assert not is_tool_rejection(caught.value)
    assert not oracle.prompted
    assert len(server.requests) == 1


async def test_auto_stream_falls_back_before_the_first_chunk(server: ModelServer) -> None:
    server.reply(
        ollama_error(400, "registry.ollama.ai/library/gemma3:4b does not support tools"),
        ollama_chat("prompted answer"),
    )
    oracle = PromptedSpellCalling(OllamaOracle("gemma3:4b", base_url=server.url), mode="auto")
    chunks = [c async for c in oracle.stream_generate(HELLO, [ADD])]
    await oracle.aclose()
    assert oracle.prompted
    assert "".join(chunks) == "prompted answer"
    assert not _has_tools(server, 1)


@pytest.mark.parametrize(
    ("message", "rejected"),
    [
        ("tools are not supported by this endpoint", True),
        ("error: unsupported parameter 'tools'", True),
        ("tool calling unavailable for this model", True),
        ("Function calling is not enabled on this deployment", True),
        ("Unknown field: tools", True),
        ("the chat template of 'x' cannot render tools (spells): no template", True),
        ("invalid tool call arguments", False),
        ('model "nope" not found, try pulling it first', False),
        ("llama runner process has terminated", False),
    ],
)
def test_any_answer_refusing_tools_is_a_tool_rejection(message: str, rejected: bool) -> None:
    error = OracleResponseError(f"server answered 400: {message}", status=400, body=message)
    assert is_tool_rejection(error) is rejected


def test_reasoning_opened_by_the_template_is_not_parsed_either() -> None:
    draft = 'maybe {"spell": "add", "arguments": {"a": 9}}</think>\n'
    text = draft + '{"spell": "add", "arguments": {"a": 1}}'
    _prose, calls = parse_spell_blocks(text)
    assert len(calls) == 1
    assert '"a": 1' in calls[0].arguments["__malformed_json__"]
