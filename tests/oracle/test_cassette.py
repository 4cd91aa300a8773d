"""Cassettes: record against the loopback model servers, stop them, replay offline."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sanctum import api
from sanctum.errors import CassetteError, CassetteMismatch
from sanctum.oracle import OracleResponse
from sanctum.oracle.cassette import (
    CASSETTE_VERSION,
    CassettePlayer,
    CassetteRecorder,
    RecordingOracle,
    ReplayOracle,
)
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from sanctum.wards import Secrets
from tests.oracle.servers import (
    ModelServer,
    closed_port,
    oa_completion,
    oa_stream_events,
    oa_tool_call,
    ollama_chat,
    ollama_stream,
    ollama_tool_call,
    sse,
)

REPO = Path(__file__).resolve().parents[2]
SECRET = "hint-4f9c2b7e1d"
SPELLS = [
    {
        "name": "lookup_order",
        "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }
]
ASK = [{"role": "user", "content": f"Where is A-1001? ({SECRET})"}]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def drain(stream: Any) -> list[Any]:
    return [item async for item in stream]


# ----------------------------------------------------------------- Python level


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_record_then_replay_without_the_server(tmp_path: Path, provider: str) -> None:
    cassette = tmp_path / "calls.jsonl"
    server = ModelServer().start()
    if provider == "ollama":
        server.reply(
            ollama_chat("", [ollama_tool_call("lookup_order", {"order_id": "A-1001"})]),
            ollama_stream(["It ", "has ", "shipped", "."]),
        )
        inner: Any = OllamaOracle("qwen2.5:7b", base_url=server.url)
    else:
        fragments = [
            [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": ""},
                }
            ],
            [{"index": 0, "function": {"arguments": '{"order_id": "A-1001"}'}}],
        ]
        server.reply(
            oa_completion(None, [oa_tool_call("lookup_order", '{"order_id": "A-1001"}')]),
            sse(oa_stream_events(["It ", "has ", "shipped", "."], fragments)),
        )
        inner = OpenAICompatibleOracle("m", base_url=server.url + "/v1")
    recorder = CassetteRecorder(cassette, secrets=Secrets([SECRET]))
    recording = RecordingOracle(inner, recorder, name="local")

    async def record() -> tuple[OracleResponse, list[Any]]:
        try:
            first = await recording.generate(ASK, SPELLS)
            streamed = await drain(recording.stream_response(ASK, SPELLS))
            return first, streamed
        finally:
            await recording.aclose()

    try:
        first, streamed = asyncio.run(record())
    finally:
        server.stop()
    assert first.spell_calls[0].spell == "lookup_order"
    assert first.spell_calls[0].arguments == {"order_id": "A-1001"}
    tokens = [item for item in streamed if isinstance(item, str)]
    assert tokens == ["It ", "has ", "shipped", "."]

    text = cassette.read_text(encoding="utf-8")
    assert SECRET not in text
    header, session, one, two = lines_of(cassette)
    assert header == {
        "cassette": "sanctum",
        "version": CASSETTE_VERSION,
        "match": "request",
        "ignore": [],
        "oracles": {},
    }
    assert session["kind"] == "session"
    assert session["superstep"] == 0
    assert (one["oracle"], one["number"], one["provider"]) == ("local", 1, provider)
    assert two["number"] == 2
    assert [c for _, c in two["stream"]] == tokens
    assert all(t >= 0 for t, _ in two["stream"])
    assert one["request"]["spells"] == SPELLS
    assert "[REDACTED]" in one["request"]["messages"][0]["content"]

    replay = ReplayOracle(cassette, name="local")
    replay.player.add_secrets(Secrets([SECRET]))  # the run's masking, as compile_ritual adds

    async def play() -> tuple[OracleResponse, list[Any]]:
        return await replay.generate(ASK, SPELLS), await drain(replay.stream_response(ASK, SPELLS))

    again, restreamed = asyncio.run(play())  # the server is gone: any contact would fail
    assert again == first
    assert [i for i in restreamed if isinstance(i, str)] == tokens
    assert restreamed[-1] == streamed[-1]
    assert replay.player.remaining() == 0


def test_a_different_request_is_a_mismatch_with_a_diff(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    from sanctum.oracle import ScriptedOracle

    recording = RecordingOracle(ScriptedOracle(["fine"]), cassette, name="bard", sigil="greet")
    asyncio.run(recording.generate([{"role": "user", "content": "Greet Ada warmly"}]))
    replay = ReplayOracle(cassette, name="bard", sigil="greet")
    with pytest.raises(CassetteMismatch) as caught:
        asyncio.run(replay.generate([{"role": "user", "content": "Greet Ada coldly"}]))
    error = caught.value
    assert (error.sigil, error.oracle, error.call) == ("greet", "bard", 1)
    assert "sigil 'greet' call 1" in str(error)
    assert '-      "content": "Greet Ada warmly",' in error.diff
    assert '+      "content": "Greet Ada coldly",' in error.diff
    # the recorded call is still there for the right request
    assert asyncio.run(replay.generate([{"role": "user", "content": "Greet Ada warmly"}])).text == (
        "fine"
    )
    with pytest.raises(CassetteMismatch, match="holds 1 such call"):
        asyncio.run(replay.generate([{"role": "user", "content": "Greet Ada warmly"}]))


def test_match_order_ignores_declared_volatile_parts(tmp_path: Path) -> None:
    from sanctum.oracle import ScriptedOracle

    cassette = tmp_path / "c.jsonl"
    recording = RecordingOracle(ScriptedOracle(["ok"]), cassette, name="bard")
    asked = [
        {"role": "system", "content": "Now: 2025-01-01T10:00:00Z"},
        {"role": "user", "content": "hi"},
    ]
    asyncio.run(recording.generate(asked))
    later = [
        {"role": "system", "content": "Now: 2026-03-09T17:45:12Z"},
        {"role": "user", "content": "hi"},
    ]
    with pytest.raises(CassetteMismatch):
        asyncio.run(ReplayOracle(cassette).generate(later))
    # the rule lives in the header, and survives re-recording
    lines = cassette.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["oracles"] = {"bard": {"match": "order", "ignore": [r"\d{4}-\d\d-\d\dT[\d:]+Z"]}}
    cassette.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert asyncio.run(ReplayOracle(cassette).generate(later)).text == "ok"
    # the rule does not hide a real change
    edited = [later[0], {"role": "user", "content": "hello"}]
    with pytest.raises(CassetteMismatch, match="match: order"):
        asyncio.run(ReplayOracle(cassette).generate(edited))
    RecordingOracle(ScriptedOracle(["ok"]), cassette, name="bard")  # re-record: a new file
    assert lines_of(cassette)[0]["oracles"]["bard"]["match"] == "order"


def test_bad_cassettes_are_refused_with_their_place(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="does not exist"):
        CassettePlayer(tmp_path / "none.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"cassette": "sanctum", "version": 1}\n{oops\n', encoding="utf-8")
    with pytest.raises(CassetteError, match=r"broken.jsonl:2:2: not a JSON line"):
        CassettePlayer(broken)
    future = tmp_path / "future.jsonl"
    future.write_text('{"cassette": "sanctum", "version": 99}\n', encoding="utf-8")
    with pytest.raises(CassetteError, match="version 99 is not supported"):
        CassettePlayer(future)
    bad_rule = tmp_path / "rule.jsonl"
    bad_rule.write_text('{"cassette": "sanctum", "version": 1, "match": "fuzzy"}\n', "utf-8")
    with pytest.raises(CassetteError, match="choose request or order"):
        CassettePlayer(bad_rule)


# ----------------------------------------------------------------- ritual level

RITUAL = """\
sanctum: 1
name: desk
inputs:
  ticket: {type: string}
  now: {type: string, default: "2025-01-01T10:00:00Z"}
aether:
  category: {}
  messages: {reducer: append, default: []}
  answer: {}
oracles:
  local: {provider: ollama, model: "qwen2.5:7b", base_url: "${OLLAMA_URL}"}
  cloud: {provider: openai, model: m, base_url: "${OPENAI_URL}", api_key: "${CLOUD_KEY}"}
public: [OLLAMA_URL, OPENAI_URL]
tomes:
  desk: {path: spells/desk}
entry: classify
sigils:
  classify:
    oracle: local
    stream: true
    system: "Now: {{ now }}. Hint: ${HINT}"
    prompt: "Classify: {{ ticket }}"
    output: category
    next: investigate
  investigate:
    agent: {oracle: cloud, tome: desk, spell_calling: native}
    prompt: "{{ ticket }}"
    output: answer
    next: END
"""


def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    shutil.copytree(REPO / "spells" / "desk", tmp_path / "spells" / "desk")
    ritual = tmp_path / "desk.yaml"
    ritual.write_text(RITUAL, encoding="utf-8")
    return ritual


def serve_desk(ollama: ModelServer, openai: ModelServer) -> None:
    ollama.reply(ollama_stream(["bill", "ing"]))
    openai.reply(
        oa_completion(None, [oa_tool_call("lookup_order", '{"order_id": "A-1001"}')]),
        oa_completion("Order A-1001 has shipped."),
    )


def perform(ritual: Path, codex: Path, **options: Any) -> tuple[Any, list[str]]:
    async def go() -> tuple[Any, list[str]]:
        performance = api.run(
            ritual,
            {"ticket": "Where is A-1001?", **options.pop("inputs", {})},
            codex=f"sqlite:///{codex}",
            modes=("tokens",),
            **options,
        )
        tokens = [str(getattr(omen, "payload", "")) async for omen in performance]
        assert performance.result is not None
        return performance.result, tokens

    return asyncio.run(go())


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "HINT": SECRET,
        "CLOUD_KEY": "sk-test-0123456789abcdef",
        "OLLAMA_URL": f"http://127.0.0.1:{closed_port()}",
        "OPENAI_URL": f"http://127.0.0.1:{closed_port()}/v1",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


def test_a_ritual_replays_offline_to_the_same_aether_and_tokens(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ritual = project(tmp_path)
    ollama, openai = ModelServer().start(), ModelServer().start()
    monkeypatch.setenv("OLLAMA_URL", ollama.url)
    monkeypatch.setenv("OPENAI_URL", openai.url + "/v1")
    serve_desk(ollama, openai)
    cassette = tmp_path / "desk.cassette.jsonl"
    try:
        recorded, tokens = perform(ritual, tmp_path / "a.db", record=cassette)
    finally:
        ollama.stop()
        openai.stop()
    assert recorded.status == "done", recorded.error
    assert recorded.aether["category"] == "billing"
    assert recorded.aether["answer"] == "Order A-1001 has shipped."
    assert tokens == ["bill", "ing"]
    assert len(openai.requests) == 2
    assert len(ollama.requests) == 1
    text = cassette.read_text(encoding="utf-8")
    assert SECRET not in text
    assert env["CLOUD_KEY"] not in text
    calls = [line for line in lines_of(cassette) if line.get("kind") == "oracle"]
    assert [(c["oracle"], c["sigil"], c["number"]) for c in calls] == [
        ("local", "classify", 1),
        ("cloud", "investigate", 1),
        ("cloud", "investigate", 2),
    ]
    assert calls[0]["model"] == "qwen2.5:7b"
    assert calls[1]["provider"] == "openai"

    # the servers are stopped: every answer must come from the cassette
    replayed, again = perform(ritual, tmp_path / "b.db", replay=cassette)
    assert replayed.status == "done", replayed.error
    assert replayed.aether == recorded.aether
    assert again == tokens

    # a prompt edit: the run fails naming the sigil and the call, with a diff
    ritual.write_text(RITUAL.replace("Classify: ", "Sort: "), encoding="utf-8")
    failed, _ = perform(ritual, tmp_path / "c.db", replay=cassette)
    assert failed.status == "failed"
    assert "sigil 'classify' call 1 to oracle 'local' differs" in failed.error
    assert '-      "content": "Classify: Where is A-1001?",' in failed.error
    assert '+      "content": "Sort: Where is A-1001?",' in failed.error
    assert SECRET not in failed.error


def test_match_order_with_an_ignored_timestamp_passes(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ritual = project(tmp_path)
    ollama, openai = ModelServer().start(), ModelServer().start()
    monkeypatch.setenv("OLLAMA_URL", ollama.url)
    monkeypatch.setenv("OPENAI_URL", openai.url + "/v1")
    serve_desk(ollama, openai)
    cassette = tmp_path / "desk.jsonl"
    try:
        recorded, _ = perform(ritual, tmp_path / "a.db", record=cassette)
    finally:
        ollama.stop()
        openai.stop()
    assert recorded.status == "done", recorded.error
    later = {"inputs": {"now": "2026-07-04T08:30:00Z"}}
    strict, _ = perform(ritual, tmp_path / "b.db", replay=cassette, **dict(later))
    assert strict.status == "failed"
    assert "differs from the recording" in strict.error
    lines = cassette.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header.update(match="order", ignore=[r"\d{4}-\d\d-\d\dT[\d:]+Z"])
    cassette.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    tolerant, _ = perform(ritual, tmp_path / "c.db", replay=cassette, **dict(later))
    assert tolerant.status == "done", tolerant.error
    assert tolerant.aether["answer"] == recorded.aether["answer"]


def test_record_and_replay_exclude_each_other(tmp_path: Path, env: dict[str, str]) -> None:
    ritual = project(tmp_path)
    performance = api.run(
        ritual,
        {"ticket": "x"},
        codex="memory:",
        record=tmp_path / "a.jsonl",
        replay=tmp_path / "a.jsonl",
    )
    with pytest.raises(api.RitualInputError, match="exclude each other"):
        asyncio.run(performance.wait())


def test_a_replay_refuses_oracle_overrides(tmp_path: Path, env: dict[str, str]) -> None:
    ritual = project(tmp_path)
    (tmp_path / "a.jsonl").write_text(
        '{"cassette": "sanctum", "version": 1, "match": "request", "ignore": [], "oracles": {}}\n',
        encoding="utf-8",
    )
    performance = api.run(
        ritual,
        {"ticket": "x"},
        codex="memory:",
        replay=tmp_path / "a.jsonl",
        oracles={"local": api.OracleOverride("ollama", "other")},
    )
    with pytest.raises(api.RitualInputError, match="--oracle and --replay exclude each other"):
        asyncio.run(performance.wait())


def test_a_constrained_call_is_recorded_and_replayed_with_its_schema(
    tmp_path: Path, server: ModelServer
) -> None:
    from sanctum.oracle.constrained import ConstrainedSpellCalling, spell_call_schema

    count = {
        "name": "word_count",
        "description": "Count the words of a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }
    ask = [{"role": "user", "content": "How many words are in 'a b c'?"}]
    call = '{"spell": "word_count", "arguments": {"text": "a b c"}}'
    server.reply(ollama_chat(call))
    cassette = tmp_path / "c.jsonl"

    async def record() -> Any:
        inner = RecordingOracle(
            OllamaOracle("tiny", base_url=server.url), cassette, name="local", sigil="s"
        )
        assert inner.constrains_output
        oracle = ConstrainedSpellCalling(inner)
        try:
            return await oracle.generate(ask, [count])
        finally:
            await oracle.aclose()

    recorded = asyncio.run(record())
    assert recorded.spell_calls[0].arguments == {"text": "a b c"}
    [line] = [x for x in lines_of(cassette) if x.get("kind") == "oracle"]
    assert line["request"]["schema"] == spell_call_schema([count])

    async def replay(spells: list[dict[str, Any]]) -> Any:
        replayer = ReplayOracle(cassette)
        assert replayer.constrains_output  # the replay takes the recording's path
        return await ConstrainedSpellCalling(replayer).generate(ask, spells)

    replayed = asyncio.run(replay([count]))
    assert replayed.spell_calls[0].arguments == {"text": "a b c"}
    assert len(server.requests) == 1  # the replay asked no server
    wider = {**count, "name": "char_count", "description": "Count characters."}
    with pytest.raises(CassetteMismatch, match="differs from the recording"):
        asyncio.run(replay([count, wider]))  # another schema is another request
