"""The writer a Sigil receives may be awaited or called; TokenEmitted.token."""

from __future__ import annotations

import asyncio
from typing import Any

from sanctum import END, Ritual
from sanctum.omens import SigilCompleted, TokenEmitted


def _rite(fn: Any) -> Any:
    return Ritual().add_sigil("speak", fn).set_entry_point("speak").add_edge("speak", END).compile()


async def test_awaiting_the_writer_streams_tokens() -> None:
    async def speak(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        for word in aether["text"].split():
            await writer(word)
        return {"spoken": True}

    seen = [o async for o in _rite(speak).astream({"text": "by the old words"}, mode="tokens")]
    assert [o.token for o in seen] == ["by", "the", "old", "words"]
    assert [o.payload for o in seen] == ["by", "the", "old", "words"]
    assert all(isinstance(o, TokenEmitted) and o.sigil == "speak" for o in seen)


async def test_calling_the_writer_without_await_still_works() -> None:
    def speak(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer("plain")
        return {}

    seen = [o.token async for o in _rite(speak).astream({}, mode="tokens")]
    assert seen == ["plain"]


async def test_an_awaited_writer_works_when_nobody_listens() -> None:
    async def speak(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        await writer("into the void")
        return {"ok": True}

    assert await _rite(speak).ainvoke({}) == {"ok": True}


async def test_tokens_arrive_while_the_sigil_still_runs() -> None:
    release = asyncio.Event()

    async def speak(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        await writer("first")
        await release.wait()  # only the consumer, having seen the token, releases it
        return {"after": True}

    order: list[str] = []
    async for omen in _rite(speak).astream({}, mode={"tokens", "updates"}):
        if isinstance(omen, TokenEmitted):
            order.append(f"token:{omen.token}")
            release.set()
        elif isinstance(omen, SigilCompleted):
            order.append(f"done:{omen.sigil}")
    assert order == ["token:first", "done:speak"]


def test_token_is_the_payload_alias() -> None:
    omen = TokenEmitted(payload={"delta": "x"}, sigil="s")
    assert omen.token == {"delta": "x"}
    assert omen.token is omen.payload


async def test_a_keyword_only_writer_is_handed_over_by_name() -> None:
    async def speak(aether: dict[str, Any], *, writer: Any) -> dict[str, Any]:
        await writer("named")
        return {"ok": True}

    async def both(aether: dict[str, Any], *, writer: Any, invocation: Any) -> dict[str, Any]:
        await writer(invocation.superstep)
        return {}

    seen = [o.token async for o in _rite(speak).astream({}, mode="tokens")]
    assert seen == ["named"]
    assert await _rite(speak).ainvoke({}) == {"ok": True}
    assert [o.token async for o in _rite(both).astream({}, mode="tokens")] == [1]
