"""A key read through ${VAR} never lands in Seals, Omens, traces, audit files or errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import RitualFileError
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.ritualfile import check_ritual, compile_ritual, load_ritual

KEY = "sk-test-4f9a1c2b7d8e9f0a1b2c3d4e"


def _ritual(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: leaky\n"
        "aether: {said: {}, messages: {reducer: append}}\n"
        "oracles:\n  cloud:\n    provider: openai\n    model: m\n"
        "    base_url: http://127.0.0.1:9/v1\n    api_key: ${LEAKY_API_KEY}\n"
        "entry: speak\n"
        "sigils:\n  speak:\n    oracle: cloud\n    prompt: 'hi'\n    output: said\n"
        "    messages: messages\n    next: END\n"
        f"wards:\n  - audit: {{path: {tmp_path / 'audit.jsonl'}}}\n"
        f"  - trace: {{path: {tmp_path / 'run.sanctum-trace.json'}}}\n"
    )
    return path


async def test_secret_never_persisted_or_streamed(tmp_path: Path) -> None:
    path = _ritual(tmp_path)
    env = {"LEAKY_API_KEY": KEY}
    spec = load_ritual(path, env=env)
    # a model that echoes the key it was never meant to see
    oracle = ScriptedOracle([f"my key is {KEY}, keep it safe"])
    codex = SqliteCodex(tmp_path / "codex.db")
    rite = compile_ritual(spec, codex=codex, oracles={"cloud": oracle})
    omens = []
    async for omen in rite.astream(
        {}, invocation_id="leak", mode={"updates", "tokens", "omens", "values"}
    ):
        omens.append(repr(omen))
    await asyncio.sleep(0)
    assert omens
    seals = [repr(s) for s in await codex.list("leak")]
    assert seals
    assert "[REDACTED]" in "".join(seals)
    for text in [*omens, *seals]:
        assert KEY not in text
    for artefact in ("audit.jsonl", "run.sanctum-trace.json", "codex.db"):
        data = (tmp_path / artefact).read_bytes()
        assert KEY.encode() not in data, artefact
    assert rite.secrets  # the engine masks, before any Ward sees a delta


def test_secret_not_in_error_messages(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: t\nrecursion_limit: ${MY_TOKEN}\n"
        "oracles:\n  o: {provider: openai, model: m, base_url: 'x', api_key: '${MY_TOKEN}'}\n"
        'aether: {x: {}}\nentry: a\nsigils:\n  a: {set: {x: "${MY_TOKEN}"}, next: END}\n'
    )
    problems = check_ritual(path, env={"MY_TOKEN": "supersecretvalue"})
    assert problems
    text = "\n".join(str(p) for p in problems)
    assert "supersecretvalue" not in text
    with pytest.raises(RitualFileError) as caught:
        load_ritual(path, env={"MY_TOKEN": "supersecretvalue"})
    assert "supersecretvalue" not in str(caught.value)
