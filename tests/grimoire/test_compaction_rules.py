"""Compaction's rules: its options checked, and an overflow it cannot mend worded truly.

The overflow cases run a real adapter against a loopback server answering as
llama-server and Ollama do when a prompt outgrows the window.
"""

from __future__ import annotations

from typing import Any

import pytest

from sanctum.errors import ContextOverflowError, SigilExecutionError
from sanctum.grimoire import Compaction, Tome, spell, summon
from sanctum.grimoire.compaction import answer_budget, max_output_limit, thresholds
from sanctum.oracle import ScriptedOracle
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from tests.oracle.servers import ModelServer, Reply, oa_json, ollama_error

ASK = {"messages": [{"role": "user", "content": "Look up k1."}]}


@spell
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value-of-{key} " + "lorem ipsum " * 200


def llama_overflow(request: Any = None) -> Reply:
    """llama-server's answer to a prompt over its 2,048-token window."""
    error = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5000,
        "n_ctx": 2048,
    }
    return Reply(400, oa_json({"error": error}))


def ollama_overflow(request: Any = None) -> Reply:
    """Ollama's answer (``truncate: false``) to a prompt over its window: no figure."""
    return ollama_error(400, "the input length exceeds the context length")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"window": "2048"}, "compact window must be an int or None, not str '2048'"),
        ({"window": 2048.0}, "compact window must be an int or None, not float 2048.0"),
        ({"window": True}, "compact window must be an int or None, not bool True"),
        ({"window": 256}, "compact window must be >= 512, not 256"),
        ({"quotes": -3}, "compact quotes must be >= 0, not -3"),
        ({"quotes": "1200"}, "compact quotes must be an int, not str '1200'"),
        ({"max_output": 0}, "compact max_output must be >= 1, not 0"),
        ({"max_output": 1.5}, "compact max_output must be an int or None, not float 1.5"),
        ({"at": "0.5"}, "compact at must be a number or None, not str '0.5'"),
        ({"at": 1.5}, "compact at must be in [0.1, 0.95], not 1.5"),
        ({"keep_tail": None}, "compact keep_tail must be a number, not NoneType None"),
        ({"keep_tail": 0.9}, "compact keep_tail must be in [0.05, 0.6], not 0.9"),
        ({"summarizer": "tiny"}, "compact summarizer must be an Oracle or None, not str"),
    ],
)
def test_options_of_the_wrong_type_or_range_are_refused_by_name(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as info:
        Compaction(**options)
    assert str(info.value) == message


def test_max_output_may_take_at_most_half_the_window_with_its_margin() -> None:
    assert [max_output_limit(w) for w in (1024, 2048, 4096)] == [256, 768, 1792]
    assert Compaction(window=2048, max_output=768).max_output == 768
    with pytest.raises(ValueError) as info:
        Compaction(window=2048, max_output=4096)
    assert str(info.value) == (
        "compact max_output 4096 leaves no room for the prompt in a 2048-token window: "
        "max_output + 256 may take at most half the window, or every consultation would "
        "compact again; lower max_output to 768 or less, or declare a larger window"
    )
    with pytest.raises(ValueError, match="max_output 769 leaves no room"):
        Compaction(window=2048, max_output=769)
    with pytest.raises(ValueError, match="a window of at least 1536 tokens is needed"):
        Compaction(window=512, max_output=512)
    assert Compaction(max_output=4096).window is None  # checked against a declared window


def test_numbers_of_either_kind_are_accepted_for_shares() -> None:
    compaction = Compaction(window=4096, at=1 / 2, keep_tail=0.25, summarizer=ScriptedOracle([]))
    assert (compaction.at, compaction.keep_tail, compaction.summarizer_name) == (
        0.5,
        0.25,
        "scripted",
    )


async def _overflow(oracle: Any, compaction: Compaction) -> ContextOverflowError:
    rite = summon(oracle, Tome([lookup]), compact=compaction)
    try:
        with pytest.raises(SigilExecutionError) as info:
            await rite.ainvoke(ASK)
    finally:
        await oracle.aclose()
    cause = info.value.__cause__
    assert isinstance(cause, ContextOverflowError)
    return cause


async def test_a_short_transcript_is_never_said_to_be_compacted(server: ModelServer) -> None:
    server.respond = llama_overflow
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    error = await _overflow(oracle, Compaction())
    message = str(error)
    assert "after compaction" not in message
    assert message.startswith(
        "the prompt overflows the oracle's context window and nothing could be compacted: "
        "the transcript is too short to cut"
    )
    assert "; the server reported a window of 2048 tokens;" in message
    assert f"the request is estimated at about {error.estimate} tokens (characters ÷ 4;" in message
    assert "shorten the system prompt or the request, or offer fewer spells" in message
    assert (error.window, error.status) == (2048, 400)
    assert len(server.requests) == 1  # the same request is not sent twice


async def test_a_window_no_one_stated_is_called_unknown(server: ModelServer) -> None:
    server.respond = ollama_overflow
    oracle = OllamaOracle("m", base_url=server.url, truncate=False)
    error = await _overflow(oracle, Compaction())
    message = str(error)
    assert "window 4096" not in message
    assert (
        "the window is unknown: the server did not state it and none is declared "
        "(compaction assumed 4096 tokens)"
    ) in message
    assert "declare the oracle's context_window" in message
    assert error.window is None


async def test_a_declared_window_is_called_declared(server: ModelServer) -> None:
    server.respond = ollama_overflow
    oracle = OllamaOracle("m", base_url=server.url, truncate=False)
    error = await _overflow(oracle, Compaction(window=2048))
    assert "; the declared window is 2048 tokens (context_window);" in str(error)
    assert error.window == 2048


async def test_a_compacted_view_with_nothing_more_to_cut_says_so(server: ModelServer) -> None:
    answers = iter(range(1, 99))

    def respond(request: Any) -> Reply:
        turn = next(answers)
        if turn <= 6:  # six lookups fit; the seventh consultation overflows
            call = {
                "id": "call_0",
                "type": "function",
                "function": {"name": "lookup", "arguments": f'{{"key": "k{turn}"}}'},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
            return Reply(
                200, oa_json({"id": "x", "object": "chat.completion", "choices": [choice]})
            )
        return llama_overflow()

    server.respond = respond
    oracle = OpenAICompatibleOracle("m", base_url=server.url)
    error = await _overflow(oracle, Compaction(window=2048))
    message = str(error)
    assert message.startswith(
        "the prompt overflows the oracle's context window and nothing more could be "
        "compacted: the compacted view (the summary, the first request, the latest turn, "
    )
    assert "the server reported a window of 2048 tokens" in message
    assert len(server.requests) == 7
    assert "[Summary of the earlier conversation" in str(server.requests[-1].json["messages"])


def test_an_unwritten_max_output_shrinks_to_fit_small_windows() -> None:
    assert Compaction(window=512).max_output is None  # accepted, not refused
    budgets = [answer_budget(None, w) for w in (512, 1024, 2048, 8192)]
    assert budgets == [64, 256, 512, 512]
    assert answer_budget(300, 8192) == 300
    assert thresholds(1024, max_output=answer_budget(None, 1024)).trigger == 512
