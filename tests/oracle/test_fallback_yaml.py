"""Fallback chains and windows in ritual files: `fallback:` and `context_window:`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sanctum.errors import RitualFileError
from sanctum.omens.events import OracleFellBack
from sanctum.oracle.cassette import CassetteRecorder
from sanctum.ritualfile import compile_ritual
from tests.oracle.servers import ModelServer, closed_port, ollama_chat
from tests.ritualfile.helpers import problems_of, write

RITUAL = """
sanctum: 1
name: t
aether: {said: {}}
oracles:
  main: {provider: ollama, model: "qwen2.5:3b", base_url: "{url}", context_window: 4096,
         fallback: [tiny]}
  tiny: {provider: scripted, responses: ["from the fallback"]}
entry: speak
sigils:
  speak: {oracle: main, prompt: "hi", output: said, stream: false, next: END}
"""


async def test_a_dead_primary_in_a_ritual_file_falls_back_to_the_named_oracle(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    rite = compile_ritual(write(tmp_path, RITUAL.replace("{url}", url)))
    try:
        assert await rite.ainvoke({}) == {"said": "from the fallback"}
    finally:
        await rite.aclose()


async def test_ritual_files_tell_ollama_not_to_truncate(
    tmp_path: Path, server: ModelServer
) -> None:
    server.reply(ollama_chat("hello"))
    rite = compile_ritual(write(tmp_path, RITUAL.replace("{url}", server.url)))
    try:
        assert await rite.ainvoke({}) == {"said": "hello"}
    finally:
        await rite.aclose()
    assert server.requests[0].json["truncate"] is False


def test_a_fallback_to_an_unknown_oracle_is_reported(tmp_path: Path) -> None:
    text = RITUAL.replace("{url}", "http://127.0.0.1:9").replace("[tiny]", "[nope]")
    with pytest.raises(RitualFileError, match="oracle 'main': fallback 'nope' is not under"):
        compile_ritual(write(tmp_path, text))


async def test_a_plain_oracle_sigil_says_who_fell_back(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    rite = compile_ritual(write(tmp_path, RITUAL.replace("{url}", url)))
    try:
        omens = [omen async for omen in rite.astream({}, mode="agent")]
    finally:
        await rite.aclose()
    fell = [omen for omen in omens if isinstance(omen, OracleFellBack)]
    assert [(o.from_oracle, o.to_oracle, o.reason) for o in fell] == [
        ("main", "tiny", "connection")
    ]
    assert fell[0].sigil == "speak"


async def test_a_cassette_names_the_oracle_that_answered_after_a_fallback(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    path = tmp_path / "run.cassette.jsonl"
    recorder = CassetteRecorder(path)
    rite = compile_ritual(write(tmp_path, RITUAL.replace("{url}", url)), cassette=recorder)
    try:
        assert await rite.ainvoke({}) == {"said": "from the fallback"}
    finally:
        await rite.aclose()
    calls = [
        json.loads(line)
        for line in path.read_text().splitlines()
        if json.loads(line).get("kind") == "oracle"
    ]
    assert len(calls) == 1
    assert (calls[0]["oracle"], calls[0]["provider"]) == ("main", "scripted")
    assert calls[0]["answer"]["usage"]["fallback"]["oracle"] == "tiny"


CHAINED = """
sanctum: 1
name: t
aether: {said: {}, messages: {reducer: append, default: []}}
oracles:
  x: {provider: ollama, model: x, base_url: "{dead1}", fallback: [yy]}
  yy: {provider: ollama, model: yy, base_url: "{dead2}", fallback: [z]}
  z: {provider: ollama, model: z, base_url: "{live}"}
entry: speak
sigils:
  speak: {oracle: x, prompt: "hi", output: said, messages: messages, stream: false, next: END}
"""


def _chained(tmp_path: Path, live: str, **swap: str) -> Path:
    text = CHAINED.replace("{dead1}", f"http://127.0.0.1:{closed_port()}")
    text = text.replace("{dead2}", f"http://127.0.0.1:{closed_port()}").replace("{live}", live)
    for old, new in swap.items():
        text = text.replace(old, new)
    return write(tmp_path, text)


async def test_a_chain_is_followed_through_each_fallback_list(
    tmp_path: Path, server: ModelServer
) -> None:
    server.reply(ollama_chat("from z"))
    rite = compile_ritual(_chained(tmp_path, server.url))
    try:
        out = await rite.ainvoke({})
    finally:
        await rite.aclose()
    assert out["said"] == "from z"
    assert out["messages"][0]["usage"]["fallback"]["failed"] == [
        {"oracle": "x", "reason": "connection", "status": None},
        {"oracle": "yy", "reason": "connection", "status": None},
    ]
    assert server.requests[0].json["model"] == "z"


async def test_each_falls_back_to_the_other_and_the_cycle_is_cut(
    tmp_path: Path, server: ModelServer
) -> None:
    server.reply(ollama_chat("from z"), ollama_chat("from z again"))
    # z → [x]: x → yy → z → x is a cycle; every oracle is still asked once
    path = _chained(
        tmp_path, server.url, **{'model: z, base_url: "': 'fallback: [x], model: z, base_url: "'}
    )
    rite = compile_ritual(path)
    try:
        out = await rite.ainvoke({})
    finally:
        await rite.aclose()
    assert out["said"] == "from z"
    assert [f["oracle"] for f in out["messages"][0]["usage"]["fallback"]["failed"]] == ["x", "yy"]
    assert len(server.requests) == 1


def test_a_name_twice_in_one_fallback_list_is_an_error_at_its_position(tmp_path: Path) -> None:
    path = _chained(tmp_path, "http://127.0.0.1:9", **{"fallback: [yy]": "fallback: [yy, yy]"})
    lines = path.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if "[yy, yy]" in line)
    column = lines[row].index("yy]") + 1  # the second mention
    assert problems_of(path) == [
        f"{row + 1}:{column}: oracle 'x': fallback names 'yy' twice; name each oracle once"
    ]


async def test_an_override_of_the_primary_keeps_its_chain(
    tmp_path: Path, server: ModelServer
) -> None:
    from sanctum.oracle.ollama import OllamaOracle

    server.reply(ollama_chat("from z"))
    dead = OllamaOracle("other", base_url=f"http://127.0.0.1:{closed_port()}")
    rite = compile_ritual(_chained(tmp_path, server.url), oracles={"x": dead})
    try:
        out = await rite.ainvoke({})
    finally:
        await rite.aclose()
        await dead.aclose()
    assert out["said"] == "from z"
    assert out["messages"][0]["usage"]["fallback"]["oracle"] == "z"


async def test_a_benched_primary_is_named_as_skipped_in_the_next_run(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    text = RITUAL.replace("{url}", url).replace(
        'responses: ["from the fallback"]', 'responses: ["first", "second"]'
    )
    rite = compile_ritual(write(tmp_path, text))
    try:  # outside an agent loop the chain's own ledger spans the process's runs
        omens = [omen async for omen in rite.astream({}, mode="agent")]
        omens += [omen async for omen in rite.astream({}, mode="agent")]
    finally:
        await rite.aclose()
    fell = [omen for omen in omens if isinstance(omen, OracleFellBack)]
    assert [(o.from_oracle, o.to_oracle, o.reason) for o in fell] == [
        ("main", "tiny", "connection"),
        ("main", "tiny", "benched"),
    ]
