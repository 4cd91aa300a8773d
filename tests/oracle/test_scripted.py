"""ScriptedOracle: order, shorthand, recording, exhaustion, streaming."""

from __future__ import annotations

import pytest

from sanctum.oracle import Oracle, OracleResponse, ScriptedOracle, SpellCall


async def test_answers_in_order_and_strings_are_text_only() -> None:
    call = SpellCall("add", {"a": 1}, "c1")
    oracle = ScriptedOracle(["first", OracleResponse("second", [call], {"tokens": 3})])
    assert isinstance(oracle, Oracle)
    assert oracle.arcana == "scripted"
    one = await oracle.generate([{"role": "user", "content": "hi"}])
    two = await oracle.generate([{"role": "user", "content": "again"}])
    assert one == OracleResponse(text="first")
    assert two.text == "second"
    assert two.spell_calls == [call]
    assert two.usage == {"tokens": 3}
    assert oracle.remaining == 0


async def test_exhausted_script_raises_runtime_error() -> None:
    oracle = ScriptedOracle(["only"])
    await oracle.generate([])
    with pytest.raises(RuntimeError, match="exhausted after 1"):
        await oracle.generate([])


async def test_calls_are_recorded_as_copies() -> None:
    oracle = ScriptedOracle(["a", "b"])
    messages = [{"role": "user", "content": "hi"}]
    spells = [{"name": "add", "description": "", "parameters": {}}]
    await oracle.generate(messages, spells)
    messages[0]["content"] = "changed"
    spells.clear()
    await oracle.generate(messages)
    assert oracle.calls[0] == (
        [{"role": "user", "content": "hi"}],
        [{"name": "add", "description": "", "parameters": {}}],
    )
    assert oracle.calls[1] == ([{"role": "user", "content": "changed"}], None)


async def test_returned_response_does_not_alias_the_script() -> None:
    oracle = ScriptedOracle([OracleResponse("x", [SpellCall("s", {"k": [1]})])] * 2)
    first = await oracle.generate([])
    first.spell_calls[0].arguments["k"].append(2)
    second = await oracle.generate([])
    assert second.spell_calls[0].arguments == {"k": [1]}


async def test_stream_generate_yields_words_that_join_back() -> None:
    oracle = ScriptedOracle(["  The circle  is drawn.\n"])
    chunks = [chunk async for chunk in oracle.stream_generate([])]
    assert len(chunks) > 3
    assert "".join(chunks) == "  The circle  is drawn.\n"
    assert len(oracle.calls) == 1


async def test_stream_response_ends_with_the_response() -> None:
    call = SpellCall("add", {"a": 1}, "c1")
    oracle = ScriptedOracle([OracleResponse("two words", [call])])
    items = [item async for item in oracle.stream_response([], [{"name": "add"}])]
    assert items[:-1] == ["two ", "words"]
    last = items[-1]
    assert isinstance(last, OracleResponse)
    assert last.spell_calls == [call]


async def test_stream_of_exhausted_script_raises() -> None:
    oracle = ScriptedOracle([])
    with pytest.raises(RuntimeError):
        async for _ in oracle.stream_generate([]):
            pass


def test_rejects_foreign_script_entries() -> None:
    with pytest.raises(TypeError, match="entry 1"):
        ScriptedOracle(["ok", 42])  # type: ignore[list-item]
