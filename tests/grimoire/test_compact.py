"""Compaction offline: thresholds, boundaries, the verbatim quote, incremental summaries."""

from __future__ import annotations

import random
from typing import Any

import pytest

from sanctum.errors import OracleConnectionError, OracleResponseError
from sanctum.grimoire.compaction import (
    SUMMARY_OPEN,
    Compaction,
    estimate_tokens,
    mechanical_summary,
    tail_start,
    thresholds,
)
from sanctum.omens import CompactionStalled, Omen, TranscriptCompacted
from sanctum.oracle import OracleResponse, ScriptedOracle
from sanctum.oracle.classify import ContextOverflowError

TASK = "Count the words of every file under /srv/notes and report the total."


class Pen:
    """A Writer that keeps the Omens."""

    def __init__(self) -> None:
        self.omens: list[Omen] = []

    def __call__(self, payload: Any) -> Any:
        return None

    def emit(self, omen: Omen) -> None:
        self.omens.append(omen)


def agent_transcript(turns: int, result_chars: int = 1600, first: int = 1) -> list[dict[str, Any]]:
    """A user task then ``turns`` rounds of one spell call and its (long) result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for turn in range(first, first + turns):
        call_id = f"call_{turn}_1"
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "spell_calls": [
                    {
                        "spell": "read",
                        "arguments": {"path": f"/srv/notes/{turn}.txt"},
                        "call_id": call_id,
                    }
                ],
            }
        )
        body = f"file {turn}: " + "word " * (result_chars // 5)
        messages.append({"role": "spell", "name": "read", "call_id": call_id, "content": body})
    return messages


@pytest.mark.parametrize(
    ("window", "trigger", "tail", "lo", "hi"),
    [
        (2048, 1280, 409, 163, 245),
        (4096, 3072, 819, 327, 491),
        (8192, 6144, 1638, 512, 983),
        (131072, 65536, 16000, 512, 12000),
    ],
)
def test_thresholds_are_rescaled_for_small_windows(
    window: int, trigger: int, tail: int, lo: int, hi: int
) -> None:
    limits = thresholds(window)
    assert (limits.trigger, limits.tail, limits.summary_lo, limits.summary_hi) == (
        trigger,
        tail,
        lo,
        hi,
    )


def _pairs_intact(transcript: list[dict[str, Any]], cut: int) -> bool:
    """No spell result in the tail answers a call left before the cut, and vice versa."""
    before = {
        call["call_id"]
        for m in transcript[:cut]
        if m.get("role") == "assistant"
        for call in m.get("spell_calls") or []
    }
    after = {m["call_id"] for m in transcript[cut:] if m.get("role") == "spell"}
    return (
        not (before & after)
        and transcript[cut : cut + 1] != []
        and transcript[cut]["role"] != "spell"
    )


def test_a_cut_never_splits_a_call_from_its_results_and_keeps_the_last_turn() -> None:
    rng = random.Random(20)
    for _ in range(300):
        transcript: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
        for turn in range(rng.randint(1, 12)):
            if rng.random() < 0.2:
                transcript.append({"role": "user", "content": f"also {turn}"})
            calls = [
                {"spell": "s", "arguments": {}, "call_id": f"c{turn}_{i}"}
                for i in range(rng.randint(0, 3))
            ]
            transcript.append(
                {"role": "assistant", "content": "x" * rng.randint(0, 300), "spell_calls": calls}
            )
            for call in calls:
                transcript.append(
                    {
                        "role": "spell",
                        "name": "s",
                        "call_id": call["call_id"],
                        "content": "y" * rng.randint(0, 900),
                    }
                )
        cut = tail_start(transcript, 1, rng.choice([0, 50, 400, 2000]))
        assert _pairs_intact(transcript, cut)
        last_user = max(i for i, m in enumerate(transcript) if m["role"] == "user")
        if last_user >= 1:
            assert cut <= last_user  # the latest request stays verbatim
        last_assistant = max(
            (i for i, m in enumerate(transcript) if m["role"] == "assistant"), default=None
        )
        if last_assistant is not None:
            assert cut <= last_assistant


def test_the_mechanical_summary_quotes_the_task_and_lists_each_cast() -> None:
    covered = agent_transcript(2, result_chars=40)[1:]
    text = mechanical_summary("", covered, latest_request=TASK)
    assert text.splitlines()[0] == f"Task (verbatim): {TASK}"
    assert '- read({"path": "/srv/notes/1.txt"}) → file 1: word word' in text
    assert "/srv/notes/2.txt" in text.split("Key facts: ")[1]
    more = agent_transcript(2, result_chars=40, first=3)[1:]
    again = mechanical_summary(text, more, latest_request=TASK)
    done = [line for line in again.splitlines() if line.startswith("- ")]
    assert [line.split('"path": "')[1][:16] for line in done] == [
        f"/srv/notes/{n}.txt" for n in (1, 2, 3, 4)
    ]  # merged, oldest first, never nested
    assert again.count("Task (verbatim)") == 1


def test_the_mechanical_summary_stays_within_its_budget_dropping_the_oldest_casts() -> None:
    text = ""
    for first in range(1, 60, 2):
        covered = agent_transcript(2, result_chars=40, first=first)[1:]
        text = mechanical_summary(text, covered, latest_request=TASK, budget=980)
    assert len(text) <= 980
    assert text.startswith(f"Task (verbatim): {TASK}")
    assert "earlier casts omitted)" in text
    assert "/srv/notes/60.txt" in text


async def test_below_the_trigger_nothing_changes() -> None:
    transcript = agent_transcript(1, result_chars=100)
    state = await Compaction(window=2048).compact(transcript, {})
    assert state == {}
    assert Compaction(window=2048).view(transcript, state) == transcript


async def test_past_the_trigger_old_turns_become_a_summary_in_the_view_only() -> None:
    transcript = agent_transcript(6)
    stored = [dict(m) for m in transcript]
    pen = Pen()
    compaction = Compaction(window=2048)
    state = await compaction.compact(transcript, {}, writer=pen)
    assert transcript == stored  # the stored transcript is never rewritten
    view = compaction.view(transcript, state)
    assert estimate_tokens(view) < thresholds(2048).trigger
    assert view[0]["content"].startswith(TASK)  # the first request, verbatim, in the head
    assert SUMMARY_OPEN in view[0]["content"]
    assert f"Task (verbatim): {TASK}" in view[0]["content"]
    assert view[1:] == transcript[state["covers_through"] :]
    assert view[1]["role"] == "assistant"
    (omen,) = pen.omens
    assert isinstance(omen, TranscriptCompacted)
    assert omen.covered == state["covers_through"] - 1
    assert omen.saved_tokens > 0
    assert omen.summarizer == "mechanical"


async def test_the_next_compaction_sends_the_summariser_the_old_summary_and_new_turns_only() -> (
    None
):
    summariser = ScriptedOracle(
        [f"Task (verbatim): {TASK}\nDone: 1-4", f"Task (verbatim): {TASK}\nDone: 1-8"]
    )
    compaction = Compaction(window=2048, summarizer=summariser)
    transcript = agent_transcript(6)
    first = await compaction.compact(transcript, {})
    covered = first["covers_through"]
    transcript += agent_transcript(6, first=7)[1:]
    second = await compaction.compact(transcript, first)
    assert second["count"] == 2
    assert second["covers_through"] > covered
    prompt = summariser.calls[1][0][1]["content"]
    assert "Previous summary:\nTask (verbatim)" in prompt
    assert "Done: 1-4" in prompt
    assert '"/srv/notes/1.txt"' not in prompt  # turns already summarised are not sent again
    assert '"/srv/notes/7.txt"' in prompt
    assert second["summary"].endswith("Done: 1-8")


async def test_a_summariser_that_does_not_quote_the_task_gets_the_quote_added() -> None:
    compaction = Compaction(window=2048, summarizer=ScriptedOracle(["Done: read files"]))
    state = await compaction.compact(agent_transcript(6), {})
    assert state["summary"].startswith(f"Task (verbatim): {TASK}")


class _Failing(ScriptedOracle):
    async def generate(self, messages: Any, spells: Any = None) -> OracleResponse:
        self.calls.append((list(messages), None))
        raise OracleConnectionError("down", endpoint="http://127.0.0.1:1")


async def test_a_failing_summariser_backs_off_one_three_then_eight_consultations() -> None:
    summariser = _Failing([])
    compaction = Compaction(window=2048, summarizer=summariser)
    transcript = agent_transcript(6)
    state: dict[str, Any] = {}
    tried_at = []
    for consultation in range(1, 18):
        before = len(summariser.calls)
        state = await compaction.compact(transcript, state)
        if len(summariser.calls) > before:
            tried_at.append(consultation)
        view = compaction.view(transcript, state)
        assert estimate_tokens(view) < thresholds(2048).trigger  # compacted all the same
        assert "Task (verbatim)" in view[0]["content"]
        transcript += agent_transcript(3, first=7 + 3 * consultation)[1:]  # due every time
    assert tried_at == [1, 3, 7, 16]
    assert state["failures"] == 4


async def test_a_failing_summariser_is_named_and_the_round_is_summarised_mechanically() -> None:
    pen = Pen()
    compaction = Compaction(window=2048, summarizer=_Failing([], arcana="ollama:tiny"))
    transcript = agent_transcript(6)
    state = await compaction.compact(transcript, {}, writer=pen)
    stalled, compacted = pen.omens
    assert isinstance(stalled, CompactionStalled)
    assert "the summariser ollama:tiny failed (connection: down)" in stalled.reason
    assert "mechanical summary" in stalled.reason
    assert "tried again after 1 consultation(s)" in stalled.reason
    assert isinstance(compacted, TranscriptCompacted)
    assert compacted.summarizer == "mechanical"
    assert state["summary"].startswith(f"Task (verbatim): {TASK}")
    assert '- read({"path": "/srv/notes/1.txt"}) → file 1: word' in state["summary"]
    assert estimate_tokens(compaction.view(transcript, state)) < thresholds(2048).trigger
    again = await compaction.compact(transcript + agent_transcript(4, first=7)[1:], state)
    assert again["count"] == 2  # resting: compacted again, mechanically, without a word
    assert len(pen.omens) == 2


class _Echo(ScriptedOracle):
    """A summariser that summarises nothing: it repeats everything it was given."""

    async def generate(self, messages: Any, spells: Any = None) -> OracleResponse:
        return OracleResponse(messages[-1]["content"])


async def test_two_weak_compactions_stall_compaction_for_the_run() -> None:
    pen = Pen()
    compaction = Compaction(window=2048, summarizer=_Echo([]))
    transcript = agent_transcript(6)
    state = await compaction.compact(transcript, {}, writer=pen)
    transcript += agent_transcript(6, first=7)[1:]
    state = await compaction.compact(transcript, state, writer=pen)
    assert state["stalled"] is True
    assert isinstance(pen.omens[-1], CompactionStalled)
    assert await compaction.compact(transcript + agent_transcript(3, first=13)[1:], state) == state


async def test_an_overflow_forces_a_compaction_learns_the_window_and_retries_once() -> None:
    overflow = OracleResponseError(
        "overflow",
        status=400,
        body='{"error":{"code":400,"message":"the request exceeds the available context '
        'size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":2300,'
        '"n_ctx":2048}}',
    )
    sent: list[list[dict[str, Any]]] = []

    async def ask(view: list[dict[str, Any]]) -> OracleResponse:
        sent.append(view)
        if len(sent) == 1:
            raise overflow
        return OracleResponse("done")

    pen = Pen()
    transcript = agent_transcript(3)  # under the default 4,096 trigger
    answer, state = await Compaction().consult(transcript, {}, ask, writer=pen)
    assert answer.text == "done"
    assert state["window"] == 2048
    assert len(sent) == 2
    assert len(sent[1]) < len(sent[0])
    assert isinstance(pen.omens[0], TranscriptCompacted)
    assert pen.omens[0].forced


async def test_an_overflow_after_the_forced_compaction_names_the_window_and_the_fix() -> None:
    sent: list[list[dict[str, Any]]] = []

    async def ask(view: list[dict[str, Any]]) -> OracleResponse:
        sent.append(view)
        raise OracleResponseError(
            "x", status=400, body='{"error":"the input length exceeds the context length"}'
        )

    with pytest.raises(ContextOverflowError) as info:
        await Compaction(window=4096).consult(agent_transcript(6), {}, ask, fixed=40)
    assert len(sent) == 2  # the whole view, then the compacted one
    assert info.value.window == 4096
    message = str(info.value)
    assert message.startswith(
        "the prompt still overflows the oracle's context window after compaction; the "
        "declared window is 4096 tokens (context_window); the request is estimated at about "
    )
    assert f"about {40 + estimate_tokens(sent[1])} tokens (characters ÷ 4;" in message
    assert "lower compact keep_tail" in message


def _lookups(call_id: str | None, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """One turn per key; every call numbered ``call_id`` (as servers that count per answer)."""
    turns: list[dict[str, Any]] = []
    for key in keys:
        call = {"spell": "lookup", "arguments": {"key": key}, "call_id": call_id}
        turns.append({"role": "assistant", "content": "", "spell_calls": [call]})
        turns.append(
            {"role": "spell", "name": "lookup", "call_id": call_id, "content": f"value-of-{key}"}
        )
    return turns


@pytest.mark.parametrize("call_id", ["call_0", None])
def test_the_mechanical_summary_pairs_each_call_with_its_own_turn_s_result(
    call_id: str | None,
) -> None:
    text = mechanical_summary("", _lookups(call_id, ("k1", "k2", "k3")), latest_request=TASK)
    assert [line for line in text.splitlines() if line.startswith("- ")] == [
        f'- lookup({{"key": "{key}"}}) → value-of-{key}' for key in ("k1", "k2", "k3")
    ]


def test_two_calls_of_one_turn_pair_by_id_whatever_the_results_order() -> None:
    calls = [
        {"spell": "lookup", "arguments": {"key": key}, "call_id": f"call_{i}"}
        for i, key in enumerate(("k1", "k2"))
    ]
    covered: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "spell_calls": calls},
        {"role": "spell", "name": "lookup", "call_id": "call_1", "content": "value-of-k2"},
        {"role": "spell", "name": "lookup", "call_id": "call_0", "content": "value-of-k1"},
        *_lookups("call_0", ("k3",)),
    ]
    done = [
        line
        for line in mechanical_summary("", covered, latest_request=TASK).splitlines()
        if line.startswith("- ")
    ]
    assert done == [
        '- lookup({"key": "k1"}) → value-of-k1',
        '- lookup({"key": "k2"}) → value-of-k2',
        '- lookup({"key": "k3"}) → value-of-k3',
    ]
