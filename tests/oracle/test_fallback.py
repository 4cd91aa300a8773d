"""FallbackOracle against loopback servers speaking Ollama's and llama-server's wire formats."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from sanctum.errors import OracleConnectionError, OracleResponseError
from sanctum.oracle import OracleResponse, ScriptedOracle
from sanctum.oracle.fallback import FallbackOracle, OracleChainExhausted, bench_ledger
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from tests.oracle.servers import (
    ModelServer,
    Reply,
    closed_port,
    llama_server_error,
    oa_completion,
    ollama_chat,
    ollama_error,
    ollama_stream,
    running_server,
)

HELLO = [{"role": "user", "content": "hello"}]
ADD = {"name": "add", "description": "Add.", "parameters": {"type": "object"}}


@pytest.fixture
async def chain_closer() -> AsyncIterator[list[FallbackOracle]]:
    chains: list[FallbackOracle] = []
    yield chains
    for chain in chains:
        await chain.aclose()


def _chain(closer: list[FallbackOracle], *oracles: Any, **kwargs: Any) -> FallbackOracle:
    chain = FallbackOracle(*oracles, **kwargs)
    closer.append(chain)
    return chain


async def test_a_closed_port_falls_back_at_once_and_the_answer_says_so(
    server: ModelServer, chain_closer: list[FallbackOracle]
) -> None:
    server.reply(oa_completion("from the second"))
    dead = OllamaOracle("m", base_url=f"http://127.0.0.1:{closed_port()}")
    chain = _chain(
        chain_closer,
        dead,
        OpenAICompatibleOracle("m", base_url=server.url),
        names=["fast", "solid"],
    )
    answer = await chain.generate(HELLO, [ADD])
    assert answer.text == "from the second"
    assert answer.usage["fallback"] == {
        "oracle": "solid",
        "failed": [{"oracle": "fast", "reason": "connection", "status": None}],
    }
    assert server.requests[0].json["tools"][0]["function"]["name"] == "add"  # spells carried
    assert server.requests[0].json["messages"] == [{"role": "user", "content": "hello"}]


async def test_a_missing_ollama_model_falls_back_without_a_retry(
    chain_closer: list[FallbackOracle],
) -> None:
    with running_server() as first, running_server() as second:
        first.reply(ollama_error(404, 'model "qwen2.5:3b" not found, try pulling it first'))
        second.reply(ollama_chat("ok"))
        chain = _chain(
            chain_closer,
            OllamaOracle("qwen2.5:3b", base_url=first.url),
            OllamaOracle("qwen2.5:7b", base_url=second.url),
        )
        assert (await chain.generate(HELLO)).text == "ok"
        assert len(first.requests) == 1


async def test_a_server_error_then_success_stays_on_the_same_oracle(
    server: ModelServer, chain_closer: list[FallbackOracle]
) -> None:
    server.reply(llama_server_error(500, "internal error"), oa_completion("second try"))
    backup = ScriptedOracle([])
    chain = _chain(chain_closer, OpenAICompatibleOracle("m", base_url=server.url), backup)
    answer = await chain.generate(HELLO)
    assert answer.text == "second try"
    assert "fallback" not in answer.usage
    assert backup.calls == []


async def test_a_timeout_is_retried_once_then_the_next_oracle_answers(
    server: ModelServer, chain_closer: list[FallbackOracle]
) -> None:
    server.reply(Reply(hang=True), Reply(hang=True))
    chain = _chain(
        chain_closer,
        OllamaOracle("m", base_url=server.url, timeout=0.3),
        ScriptedOracle(["late but here"]),
    )
    answer = await chain.generate(HELLO)
    assert answer.text == "late but here"
    assert len(server.requests) == 2
    assert answer.usage["fallback"]["failed"][0]["reason"] == "timeout"


async def test_when_every_oracle_fails_each_attempt_is_listed(
    chain_closer: list[FallbackOracle],
) -> None:
    with running_server() as a, running_server() as b:
        a.reply(ollama_error(404, "model 'x' not found"))
        b.reply(llama_server_error(401, "invalid api key"))
        dead = OllamaOracle("z", base_url=f"http://127.0.0.1:{closed_port()}")
        chain = _chain(
            chain_closer,
            OllamaOracle("x", base_url=a.url),
            OpenAICompatibleOracle("y", base_url=b.url),
            dead,
            names=["a", "b", "c"],
        )
        with pytest.raises(OracleChainExhausted) as info:
            await chain.generate(HELLO)
    reasons = [(attempt["oracle"], attempt["reason"]) for attempt in info.value.attempts]
    assert reasons == [("a", "model_not_found"), ("b", "auth"), ("c", "connection")]
    assert "3 attempts" in str(info.value)
    assert "pull or load the model" in str(info.value)


async def test_an_overflow_is_raised_and_never_handed_to_the_next_oracle(
    server: ModelServer, chain_closer: list[FallbackOracle]
) -> None:
    server.reply(ollama_error(400, "the input length exceeds the context length"))
    backup = ScriptedOracle(["unused"])
    chain = _chain(chain_closer, OllamaOracle("m", base_url=server.url), backup)
    with pytest.raises(OracleResponseError, match="exceeds the context length"):
        await chain.generate(HELLO)
    assert backup.calls == []


async def test_a_bad_request_is_raised_not_hidden(
    server: ModelServer, chain_closer: list[FallbackOracle]
) -> None:
    server.reply(llama_server_error(400, "'messages' must be an array"))
    backup = ScriptedOracle(["unused"])
    chain = _chain(chain_closer, OpenAICompatibleOracle("m", base_url=server.url), backup)
    with pytest.raises(OracleResponseError):
        await chain.generate(HELLO)
    assert backup.calls == []


class _Dead(ScriptedOracle):
    """An Oracle whose server never listens, counting the tries."""

    tries = 0

    async def generate(self, messages: Any, spells: Any = None) -> OracleResponse:
        self.tries += 1
        raise OracleConnectionError("nobody listens", endpoint="http://127.0.0.1:1")


async def test_a_dead_primary_is_benched_for_five_consultations() -> None:
    dead = _Dead([], arcana="dead")
    backup = ScriptedOracle([f"answer {i}" for i in range(7)])
    chain = FallbackOracle(dead, backup, bench_for=5)
    for _ in range(7):
        await chain.generate(HELLO)
    assert dead.tries == 2  # consultation 1, then 7 once the bench ends
    assert len(backup.calls) == 7


async def test_a_stream_falls_back_before_its_first_chunk(
    server: ModelServer, chain_closer: list[FallbackOracle]
) -> None:
    server.reply(ollama_stream(["Hel", "lo"]))
    dead = OllamaOracle("m", base_url=f"http://127.0.0.1:{closed_port()}")
    chain = _chain(chain_closer, dead, OllamaOracle("m", base_url=server.url))
    items = [item async for item in chain.stream_response(HELLO)]
    assert items[:-1] == ["Hel", "lo"]
    last = items[-1]
    assert isinstance(last, OracleResponse)
    assert last.usage["fallback"]["failed"][0]["reason"] == "connection"


async def test_a_stream_broken_after_its_first_chunk_raises_instead_of_repeating_text(
    server: ModelServer, chain_closer: list[FallbackOracle]
) -> None:
    line = b'{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\n'
    server.reply(Reply(200, chunks=[line], content_type="application/x-ndjson", drop=True))
    backup = ScriptedOracle(["never streamed"])
    chain = _chain(chain_closer, OllamaOracle("m", base_url=server.url), backup)
    seen: list[str] = []

    async def drain() -> None:
        async for chunk in chain.stream_generate(HELLO):
            seen.append(chunk)

    with pytest.raises(OracleConnectionError, match="broke off"):
        await drain()
    assert seen == ["Hel"]
    assert backup.calls == []


def test_a_chain_needs_a_fallback() -> None:
    with pytest.raises(ValueError, match="at least one fallback"):
        FallbackOracle(ScriptedOracle([]))


def test_names_that_repeat_are_refused_and_repeated_arcana_numbered() -> None:
    with pytest.raises(ValueError, match="names must differ"):
        FallbackOracle(ScriptedOracle([]), ScriptedOracle([]), names=["a", "a"])
    chain = FallbackOracle(ScriptedOracle([], arcana="m"), ScriptedOracle([], arcana="m"))
    assert chain.names == ("m", "m#2")


async def test_a_bench_ledger_carried_to_a_new_process_benches_as_the_first_would() -> None:
    state: dict[str, Any] | None = None
    first_dead = _Dead([], arcana="dead")
    chain = FallbackOracle(first_dead, ScriptedOracle(["a", "b", "c"]), bench_for=5)
    for _ in range(3):
        with bench_ledger(state) as ledger:
            await chain.generate(HELLO)
        state = ledger
    assert state == {"consultations": 3, "benched": {"dead": 6}}
    assert chain.ledger() == {"consultations": 0, "benched": {}}  # its own stayed untouched

    # "resumed elsewhere": a new chain with the stored ledger skips the dead Oracle
    second_dead = _Dead([], arcana="dead")
    backup = ScriptedOracle([f"answer {i}" for i in range(4)])
    again = FallbackOracle(second_dead, backup, bench_for=5)
    for _ in range(4):
        with bench_ledger(state) as ledger:
            await again.generate(HELLO)
        state = ledger
    assert second_dead.tries == 1  # consultation 7 only, as the first chain would have
    assert state["consultations"] == 7
    assert state["benched"] == {"dead": 12}


def test_the_same_oracle_object_twice_is_refused() -> None:
    once = ScriptedOracle([], arcana="a")
    with pytest.raises(ValueError, match=r"same Oracle object \(a\) stands twice"):
        FallbackOracle(once, once)
    inner = FallbackOracle(ScriptedOracle([], arcana="b"), once)
    with pytest.raises(ValueError, match="positions 0 and 1"):
        FallbackOracle(once, inner)
    # two objects alike are two Oracles: both are asked
    FallbackOracle(ScriptedOracle([], arcana="a"), ScriptedOracle([], arcana="a"))


async def test_a_benched_primary_passed_over_is_recorded_as_skipped() -> None:
    dead = _Dead([], arcana="dead")
    backup = ScriptedOracle(["first", "second"])
    chain = FallbackOracle(dead, backup, bench_for=5, names=["fast", "solid"])
    first = await chain.generate(HELLO)
    assert first.usage["fallback"] == {
        "oracle": "solid",
        "failed": [{"oracle": "fast", "reason": "connection", "status": None}],
    }
    second = await chain.generate(HELLO)
    assert second.usage["fallback"] == {"oracle": "solid", "failed": [], "skipped": ["fast"]}
    assert dead.tries == 1


async def test_a_benched_oracle_asked_last_is_not_skipped() -> None:
    dead = _Dead([], arcana="dead")
    flaky = ScriptedOracle(["asked last"])
    chain = FallbackOracle(flaky, dead, bench_for=5, names=["flaky", "dead"])
    # bench "flaky" by hand; "dead" fails, then the benched "flaky" answers last
    with bench_ledger({"consultations": 0, "benched": {"flaky": 3}}):
        answer = await chain.generate(HELLO)
    assert answer.usage["fallback"] == {
        "oracle": "flaky",
        "failed": [{"oracle": "dead", "reason": "connection", "status": None}],
    }


async def test_a_skipped_oracle_becomes_an_omen_with_reason_benched() -> None:
    from sanctum.omens.events import Omen, OracleFellBack
    from sanctum.oracle.fallback import note_fallback

    emitted: list[Omen] = []

    class _Writer:
        def emit(self, omen: Omen) -> None:
            emitted.append(omen)

        def write(self, payload: Any) -> None:
            return

    message: dict[str, Any] = {"role": "assistant", "content": "x"}
    usage = {"fallback": {"oracle": "solid", "failed": [], "skipped": ["fast"]}}
    note_fallback(usage, message, _Writer())  # type: ignore[arg-type]
    assert message["oracle"] == "solid"
    assert [
        (o.from_oracle, o.to_oracle, o.reason) for o in emitted if isinstance(o, OracleFellBack)
    ] == [("fast", "solid", "benched")]
