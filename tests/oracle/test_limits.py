"""Per-endpoint limits: at most N calls in flight to one server from one process."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from sanctum.oracle.base import Message, OracleResponse, StreamingOracle
from sanctum.oracle.limits import (
    LimitedOracle,
    endpoint_key,
    endpoint_of,
    limited,
    shared_slots,
)
from tests.oracle.counting import InFlight
from tests.oracle.servers import ModelServer

RITUAL = """\
sanctum: 1
name: limited
inputs:
  q: {{type: string}}
aether:
  a: {{}}
oracles:
  gpu: {{provider: openai, base_url: "{url}/v1", model: m{bounds}}}
entry: ask
sigils:
  ask: {{oracle: gpu, prompt: "{{{{ q }}}}", output: a, next: END}}
"""


def _ritual(folder: Path, url: str, bounds: str) -> Path:
    path = folder / "limited.yaml"
    path.write_text(RITUAL.format(url=url, bounds=bounds), encoding="utf-8")
    return path


def test_a_batch_in_one_process_never_sends_more_than_the_bound(
    server: ModelServer, tmp_path: Path
) -> None:
    from sanctum import api

    counter = InFlight(crowd=3, hold=0.2)
    server.respond = counter
    ritual = _ritual(tmp_path, server.url, ", max_concurrency: 2")
    outcomes = api.run_batch(
        ritual, [{"q": str(i)} for i in range(8)], codex="memory:", concurrency=8
    )
    assert [one.status for one in outcomes] == ["done"] * 8
    assert counter.seen == 8
    assert counter.most == 2  # reached, never passed


def test_without_a_bound_the_same_batch_crowds_the_server(
    server: ModelServer, tmp_path: Path
) -> None:
    from sanctum import api

    counter = InFlight(crowd=3)
    server.respond = counter
    ritual = _ritual(tmp_path, server.url, "")
    outcomes = api.run_batch(
        ritual, [{"q": str(i)} for i in range(8)], codex="memory:", concurrency=8
    )
    assert [one.status for one in outcomes] == ["done"] * 8
    assert counter.most >= 3  # what the bound prevents above


def test_the_python_form_bounds_every_oracle_of_the_endpoint(server: ModelServer) -> None:
    from sanctum.oracle.openai_compat import OpenAICompatibleOracle

    counter = InFlight(crowd=4)
    server.respond = counter

    async def main() -> list[OracleResponse]:
        oracles = [  # two Oracle objects, one endpoint: one gate
            limited(OpenAICompatibleOracle("m", base_url=server.url), max_concurrency=3)
            for _ in range(2)
        ]
        try:
            asks = [oracles[i % 2].generate([{"role": "user", "content": "hi"}]) for i in range(8)]
            return list(await asyncio.gather(*asks))
        finally:
            for oracle in oracles:
                await oracle.aclose()

    answers = asyncio.run(main())
    assert [answer.text for answer in answers] == ["an answer"] * 8
    assert counter.most == 3


class Gated(StreamingOracle):
    """Streams two chunks, the second only once ``go`` is set; counts calls started."""

    arcana = "gated"

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.started = 0

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        self.started += 1
        return OracleResponse("whole")

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        self.started += 1
        yield "first "
        await self.go.wait()
        yield "second"
        yield OracleResponse("first second")


def test_a_stream_holds_its_place_until_its_last_chunk() -> None:
    async def main() -> tuple[int, int, list[str | OracleResponse]]:
        inner = Gated()
        oracle = LimitedOracle(inner, endpoint="test gated-stream", max_concurrency=1)
        stream = oracle.stream_response([{"role": "user", "content": "hi"}])
        first = await anext(stream)
        waiting = asyncio.create_task(oracle.generate([]))
        for _ in range(20):
            await asyncio.sleep(0)
        during = inner.started  # the stream's call only: generate waits for its place
        inner.go.set()
        rest = [first, *[item async for item in stream]]
        await waiting
        return during, inner.started, rest

    during, after, items = asyncio.run(main())
    assert during == 1
    assert after == 2
    assert items[:2] == ["first ", "second"]
    assert isinstance(items[2], OracleResponse)


def test_a_cancelled_waiter_gives_its_place_to_nobody_twice() -> None:
    async def main() -> tuple[int, int]:
        inner = Gated()
        oracle = LimitedOracle(inner, endpoint="test cancel", max_concurrency=1)
        stream = oracle.stream_response([])
        await anext(stream)
        waiter = asyncio.create_task(oracle.generate([]))
        await asyncio.sleep(0)
        waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiter
        inner.go.set()
        _ = [item async for item in stream]
        answers = await asyncio.gather(*(oracle.generate([]) for _ in range(3)))
        return inner.started, len(answers)

    started, answered = asyncio.run(main())
    assert (started, answered) == (4, 3)  # the stream and three calls; not the cancelled one


class CountingSlots:
    """An EndpointSlots double that records what was held."""

    def __init__(self) -> None:
        self.held: list[tuple[str, int]] = []

    def hold(self, endpoint: str, slots: int) -> AbstractAsyncContextManager[int]:
        @contextlib.asynccontextmanager
        async def held() -> AsyncIterator[int]:
            self.held.append((endpoint, slots))
            yield 0

        return held()


def test_a_global_bound_takes_a_slot_of_the_installed_slots() -> None:
    slots = CountingSlots()

    async def main() -> None:
        oracle = LimitedOracle(Gated(), endpoint="test slots", max_concurrency_global=2)
        with shared_slots(slots):
            await oracle.generate([])
            await oracle.generate([])

    asyncio.run(main())
    assert slots.held == [("test slots", 2), ("test slots", 2)]


def test_a_global_bound_without_shared_slots_warns_once_and_bounds_the_process() -> None:
    async def main() -> int:
        inner = Gated()
        oracle = LimitedOracle(inner, endpoint="test unshared", max_concurrency_global=1)
        stream = oracle.stream_response([])
        await anext(stream)
        waiting = asyncio.create_task(oracle.generate([]))
        for _ in range(20):
            await asyncio.sleep(0)
        during = inner.started
        inner.go.set()
        _ = [item async for item in stream]
        await waiting
        await oracle.generate([])
        return during

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        during = asyncio.run(main())
    assert during == 1
    texts = [str(warning.message) for warning in caught]
    assert len(texts) == 1, texts
    assert "max_concurrency_global=1 of test unshared bounds this process only" in texts[0]
    assert caught[0].category is RuntimeWarning


@pytest.mark.parametrize("bad", [0, -1, True, "2", 1.5])
def test_bounds_must_be_whole_numbers_of_calls(bad: Any) -> None:
    with pytest.raises(ValueError, match="must be a whole number of calls >= 1"):
        LimitedOracle(Gated(), max_concurrency=bad)
    with pytest.raises(ValueError, match="max_concurrency_global must be"):
        LimitedOracle(Gated(), max_concurrency_global=bad)


def test_no_bound_is_no_wrapper_and_a_wrapper_reads_through() -> None:
    inner = Gated()
    assert limited(inner) is inner
    with pytest.raises(ValueError, match="give max_concurrency"):
        LimitedOracle(inner)
    wrapped = LimitedOracle(inner, max_concurrency=2)
    assert wrapped.go is inner.go  # other attributes read through
    assert wrapped.arcana == "gated"
    assert "max_concurrency=2" in repr(wrapped)


def test_endpoint_keys_ignore_credentials_slashes_and_v1() -> None:
    from sanctum.oracle.ollama import OllamaOracle
    from sanctum.oracle.openai_compat import OpenAICompatibleOracle

    one = endpoint_key("openai", "http://user:secret@GPU-3:8080/v1/", "m")
    assert one == endpoint_key("openai", "http://gpu-3:8080", "m") == "openai http://gpu-3:8080 m"
    assert "secret" not in one
    assert endpoint_key("openai", "http://gpu-3:8080", "other") != one
    assert endpoint_key("llamacpp", None, "model.gguf") == "llamacpp - model.gguf"
    assert endpoint_of(OpenAICompatibleOracle("m", base_url="http://gpu-3:8080/v1")) == one
    ollama = endpoint_of(OllamaOracle("qwen2.5:7b", base_url="http://gpu-3:11434"))
    assert ollama == "ollama http://gpu-3:11434 qwen2.5:7b"


def test_the_oracle_layer_imports_no_database_driver() -> None:
    import subprocess
    import sys

    code = "import sys, sanctum.oracle.limits; print('psycopg' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
