"""The facade: inputs, codex URLs, results, and whole runs on real ritual files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from sanctum import api
from sanctum.api import RitualInputError, RunResult
from sanctum.codex.memory import MemoryCodex
from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import SanctumError, SealError
from sanctum.omens.events import CircleEchoed, SigilCompleted, TokenEmitted

# --------------------------------------------------------------------------- inputs


def test_pairs_parse_json_values_and_keep_plain_strings() -> None:
    values = api.parse_input_pairs(
        ["n=3", "ok=true", "xs=[1, 2]", "name=Ada", 'quoted="3"', "empty=", "eq=a=b"]
    )
    assert values == {
        "n": 3,
        "ok": True,
        "xs": [1, 2],
        "name": "Ada",
        "quoted": "3",
        "empty": "",
        "eq": "a=b",
    }


def test_later_pairs_win() -> None:
    assert api.parse_input_pairs(["a=1", "a=2"]) == {"a": 2}


@pytest.mark.parametrize("bad", ["novalue", "=3", " =x"])
def test_malformed_pairs_are_refused_naming_the_option(bad: str) -> None:
    with pytest.raises(RitualInputError, match="--update") as caught:
        api.parse_input_pairs([bad], option="--update")
    assert isinstance(caught.value, SanctumError)
    assert isinstance(caught.value, ValueError)


def test_input_file_json_and_yaml(tmp_path: Path) -> None:
    as_json = tmp_path / "in.json"
    as_json.write_text('{"name": "Ada", "n": 2}', encoding="utf-8")
    as_yaml = tmp_path / "in.yaml"
    as_yaml.write_text("name: Ada\nflag: yes\nn: 2\n", encoding="utf-8")
    assert api.load_input_file(as_json) == {"name": "Ada", "n": 2}
    # the ritual format's strict YAML: `yes` stays a string (YAML 1.2 core)
    assert api.load_input_file(as_yaml) == {"name": "Ada", "flag": "yes", "n": 2}


def test_input_file_from_stdin() -> None:
    assert api.load_input_file("-", stdin=io.StringIO('{"a": [1]}')) == {"a": [1]}


def test_input_file_must_hold_a_mapping(tmp_path: Path) -> None:
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(RitualInputError, match="mapping"):
        api.load_input_file(listed)
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [1, 2\n", encoding="utf-8")
    with pytest.raises(RitualInputError, match=r"broken\.yaml"):
        api.load_input_file(broken)


def test_missing_input_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        api.load_input_file(tmp_path / "nope.json")


def test_oracle_overrides_keep_model_tags_with_colons() -> None:
    assert api.parse_oracle_overrides(["local=ollama:qwen2.5:0.5b", "b=openai:m"]) == {
        "local": {"provider": "ollama", "model": "qwen2.5:0.5b"},
        "b": {"provider": "openai", "model": "m"},
    }


@pytest.mark.parametrize("bad", ["local", "local=ollama", "=ollama:x", "local=:x", "local=o:"])
def test_malformed_oracle_overrides(bad: str) -> None:
    with pytest.raises(RitualInputError, match="NAME=provider:model"):
        api.parse_oracle_overrides([bad])


# --------------------------------------------------------------------------- codex


def test_default_codex_is_created_under_dot_sanctum(tmp_path: Path) -> None:
    codex = api.open_codex(None, cwd=tmp_path)
    assert isinstance(codex, SqliteCodex)
    assert codex.path == tmp_path / ".sanctum" / "codex.db"
    assert (tmp_path / ".sanctum").is_dir()


def test_sqlite_urls_follow_sqlalchemy(tmp_path: Path) -> None:
    relative = api.open_codex("sqlite:///runs/c.db", cwd=tmp_path)
    assert isinstance(relative, SqliteCodex)
    assert relative.path == tmp_path / "runs" / "c.db"
    absolute = api.open_codex(f"sqlite:///{tmp_path}/abs/c.db", cwd="/")
    assert isinstance(absolute, SqliteCodex)
    assert absolute.path == tmp_path / "abs" / "c.db"
    bare = api.open_codex("plain.db", cwd=tmp_path)
    assert isinstance(bare, SqliteCodex)
    assert bare.path == tmp_path / "plain.db"


def test_memory_codex_url() -> None:
    assert isinstance(api.open_codex("memory:"), MemoryCodex)


@pytest.mark.parametrize("url", ["redis://x", "sqlite://", "sqlite:"])
def test_bad_codex_urls(url: str) -> None:
    with pytest.raises(SealError, match="codex URL"):
        api.open_codex(url)


# --------------------------------------------------------------------------- results


def test_omen_to_dict_is_plain_json() -> None:
    inner = TokenEmitted(payload="hi", sigil="s", invocation_id="i", superstep=1, timestamp=1.0)
    echo = CircleEchoed(circle="c", omen=inner, timestamp=2.0)
    data = api.omen_to_dict(echo)
    assert data["kind"] == "omen"
    assert data["type"] == "CircleEchoed"
    assert data["circle"] == "c"
    assert data["timestamp"] == 2.0
    assert data["omen"]["type"] == "TokenEmitted"
    assert data["omen"]["payload"] == "hi"
    json.dumps(data)  # nothing left that JSON cannot carry
    completed = api.omen_to_dict(
        SigilCompleted(invocation_id="i", superstep=2, sigil="s", delta={"a": (1, 2)}, timestamp=3)
    )
    assert completed["delta"] == {"a": [1, 2]}
    assert completed["timestamp"] == 3


def test_paused_result_carries_the_resume_command() -> None:
    result = RunResult(
        status="paused", invocation_id="abc", aether={"x": 1}, reason="why?", codex_url="memory:"
    )
    data = result.to_dict()
    assert data["kind"] == "result"
    assert data["resume"] == "sanctum resume --invocation abc --codex memory:"
    assert result.resume_command == data["resume"]
    assert RunResult(status="done", invocation_id="abc", aether={}).resume_command == (
        "sanctum resume --invocation abc"
    )


def test_digest_changes_with_content(tmp_path: Path) -> None:
    ritual = tmp_path / "r.yaml"
    ritual.write_text("a: 1\n", encoding="utf-8")
    first = api.ritual_digest(ritual)
    assert first.startswith("sha256:")
    assert len(first) == 7 + 64
    ritual.write_text("a: 2\n", encoding="utf-8")
    assert api.ritual_digest(ritual) != first
