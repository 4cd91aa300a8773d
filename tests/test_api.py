"""The facade: inputs, codex URLs, results, and whole runs on real ritual files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from sanctum import api
from sanctum.api import RitualInputError, RunResult
from sanctum.cli._parsing import parse_input_pairs, parse_oracle_overrides
from sanctum.codex.memory import MemoryCodex
from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import SanctumError, SealError
from sanctum.omens.events import CircleEchoed, SigilCompleted, TokenEmitted
from sanctum.ritualfile import load

# --------------------------------------------------------------------------- inputs


def test_pairs_keep_their_text_for_the_ritual_to_read() -> None:
    values = parse_input_pairs(["n=3", "name=Ada", "empty=", "eq=a=b"])
    assert values == {"n": "3", "name": "Ada", "empty": "", "eq": "a=b"}
    assert all(isinstance(value, api.InputText) for value in values.values())


def test_later_pairs_win() -> None:
    assert parse_input_pairs(["a=1", "a=2"]) == {"a": "2"}


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e999", "[1, NaN]"])
def test_non_finite_numbers_are_refused(text: str, tmp_path: Path) -> None:
    ritual = tmp_path / "r.yaml"
    ritual.write_text(TYPED, encoding="utf-8")
    with pytest.raises(RitualInputError, match="NaN and Infinity"):
        load(ritual).bind_inputs(parse_input_pairs(["name=x", f"ratio={text}"]))


def test_raw_pairs_are_read_for_the_declared_type(tmp_path: Path) -> None:
    ritual = tmp_path / "r.yaml"
    ritual.write_text(TYPED, encoding="utf-8")
    spec = load(ritual)
    raw = parse_input_pairs(["name=42", "count=42", "ratio=0.5", "tags=[1]", "loose=true"])
    assert all(isinstance(value, api.InputText) for value in raw.values())
    checked = spec.bind_inputs(raw)
    assert checked == {"name": "42", "count": 42, "ratio": 0.5, "tags": [1], "loose": True}
    assert type(checked["name"]) is str
    assert spec.bind_inputs(parse_input_pairs(["name=NaN"]))["name"] == "NaN"
    with pytest.raises(RitualInputError, match="NaN and Infinity"):
        spec.bind_inputs(parse_input_pairs(["name=x", "ratio=NaN"]))
    with pytest.raises(RitualInputError, match="must be of type integer, got string"):
        spec.bind_inputs(parse_input_pairs(["name=x", "count=abc"]))


def test_updates_are_checked_against_the_conduits(tmp_path: Path) -> None:
    ritual = tmp_path / "r.yaml"
    ritual.write_text(TYPED, encoding="utf-8")
    spec = load(ritual)
    raw = parse_input_pairs(["approved=true", "note=7", "log=[1]", "name=3"])
    assert spec.bind_updates(raw) == {
        "approved": True,
        "note": "7",
        "log": [1],
        "name": "3",
    }
    with pytest.raises(RitualInputError, match="did you mean 'approved'") as caught:
        spec.bind_updates({"aproved": True})
    assert caught.value.name == "aproved"
    with pytest.raises(RitualInputError, match="must be of type boolean"):
        spec.bind_updates(parse_input_pairs(["approved=yes"]))
    with pytest.raises(RitualInputError, match="NaN and Infinity"):
        spec.bind_updates({"ratio": float("inf")})
    # an update goes through the conduit's reducer: append takes a list of items only
    with pytest.raises(RitualInputError, match=r"appends a list of items.*\[item\]"):
        spec.bind_updates({"log": 5})


TYPED = """\
sanctum: 1
name: typed
inputs:
  name: {type: string}
  count: {type: integer, default: 1}
  ratio: {type: number, default: 1.0}
  tags: {type: array, default: []}
  loose: {type: boolean, default: false}
aether:
  approved: {type: boolean, default: false}
  note: {type: string}
  log: {type: array, reducer: append, default: []}
entry: done
sigils:
  done:
    set: {note: "'x'"}
    next: END
"""


@pytest.mark.parametrize("bad", ["novalue", "=3", " =x"])
def test_malformed_pairs_are_refused_naming_the_option(bad: str) -> None:
    with pytest.raises(RitualInputError, match="--update") as caught:
        parse_input_pairs([bad], option="--update")
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


def test_input_file_refuses_non_utf8_and_non_finite(tmp_path: Path) -> None:
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(RitualInputError, match=r"bin\.json: not UTF-8"):
        api.load_input_file(binary)
    nan = tmp_path / "nan.json"
    nan.write_text('{"a": NaN}', encoding="utf-8")
    with pytest.raises(RitualInputError, match="NaN"):
        api.load_input_file(nan)
    inf = tmp_path / "inf.yaml"
    inf.write_text("a: .inf\n", encoding="utf-8")
    with pytest.raises(RitualInputError, match="NaN and Infinity"):
        api.load_input_file(inf)


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
    assert parse_oracle_overrides(["local=ollama:qwen2.5:0.5b", "b=openai:m"]) == {
        "local": api.OracleOverride("ollama", "qwen2.5:0.5b"),
        "b": api.OracleOverride("openai", "m"),
    }


@pytest.mark.parametrize("bad", ["local", "local=ollama", "=ollama:x", "local=:x", "local=o:"])
def test_malformed_oracle_overrides(bad: str) -> None:
    with pytest.raises(RitualInputError, match="NAME=provider:model"):
        parse_oracle_overrides([bad])


def test_oracle_override_address() -> None:
    assert parse_oracle_overrides(["l=openai:qwen@https://h:8080/v1"]) == {
        "l": api.OracleOverride("openai", "qwen", "https://h:8080/v1")
    }


@pytest.mark.parametrize(
    "bad", ["l=openai:qwen@ftp://x", "l=openai:qwen@http://", "l=openai:q@http://h:99999/v1"]
)
def test_oracle_override_address_must_be_http_with_a_host(bad: str) -> None:
    with pytest.raises(RitualInputError, match=r"http://") as caught:
        parse_oracle_overrides([bad])
    assert caught.value.source == "--oracle"


# --------------------------------------------------------------------------- codex


def test_default_codex_is_created_under_dot_sanctum(tmp_path: Path) -> None:
    codex = api.open_codex(None, cwd=tmp_path)
    assert isinstance(codex, SqliteCodex)
    assert codex.path == tmp_path / ".sanctum" / "codex.db"
    assert (tmp_path / ".sanctum").is_dir()


def test_sqlite_urls_follow_sqlalchemy(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "abs").mkdir()
    relative = api.open_codex("sqlite:///runs/c.db", cwd=tmp_path)
    assert isinstance(relative, SqliteCodex)
    assert relative.path == tmp_path / "runs" / "c.db"
    absolute = api.open_codex(f"sqlite:///{tmp_path}/abs/c.db", cwd="/")
    assert isinstance(absolute, SqliteCodex)
    assert absolute.path == tmp_path / "abs" / "c.db"
    bare = api.open_codex("plain.db", cwd=tmp_path)
    assert isinstance(bare, SqliteCodex)
    assert bare.path == tmp_path / "plain.db"


def test_a_missing_codex_folder_is_refused_but_the_default_one(tmp_path: Path) -> None:
    with pytest.raises(SealError, match=r"the folder of the codex .* does not exist"):
        api.open_codex("sqlite:///no/such/dir/x.db", cwd=tmp_path)
    assert not (tmp_path / "no").exists()
    default = api.open_codex(None, cwd=tmp_path / "fresh")
    assert isinstance(default, SqliteCodex)
    assert (tmp_path / "fresh" / ".sanctum").is_dir()


def test_memory_codex_url() -> None:
    assert isinstance(api.open_codex("memory:"), MemoryCodex)


@pytest.mark.parametrize(
    "url",
    [
        "redis://x",
        "sqlite://",
        "sqlite:",
        "sqlite://x.db",
        "sqlite:///",
        "sqlite:///:memory:",
        "garbage",
        "memory:foo",
        "MEMORY:",
        ":memory:",
        "::::",
        "notes.txt",
        "http://x/c.db",
    ],
)
def test_bad_codex_urls_are_refused_and_create_nothing(tmp_path: Path, url: str) -> None:
    with pytest.raises(SealError, match="codex") as caught:
        api.open_codex(url, cwd=tmp_path)
    assert "sqlite:///relative/path.db" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("url", "relative"),
    [
        ("sqlite:///c.db", "c.db"),
        ("runs/c.sqlite", "runs/c.sqlite"),
        ("c.sqlite3", "c.sqlite3"),
        (None, ".sanctum/codex.db"),
    ],
)
def test_codex_path_of_the_accepted_forms(tmp_path: Path, url: str | None, relative: str) -> None:
    assert api.codex_path(url, cwd=tmp_path) == tmp_path / relative
    assert api.codex_path("memory:") is None
    assert api.codex_path("postgres://u@h/db") is None


def test_read_only_open_refuses_a_missing_file_without_creating_it(tmp_path: Path) -> None:
    with pytest.raises(SealError, match="does not exist"):
        api.open_codex("sqlite:///gone.db", cwd=tmp_path, must_exist=True)
    with pytest.raises(SealError, match=r"no codex here yet"):
        api.open_codex(None, cwd=tmp_path, must_exist=True)
    with pytest.raises(SealError, match="lives only as long as the process"):
        api.open_codex("memory:", must_exist=True)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_is_no_codex(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(SealError, match="is a directory"):
        api.open_codex("dir.db", cwd=tmp_path)


async def test_listing_a_missing_codex_creates_nothing(tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path}/nope.db"
    with pytest.raises(SealError, match="does not exist"):
        await api.list_invocations(missing)
    with pytest.raises(SealError, match="does not exist"):
        await api.list_seals("x", missing)
    assert not (tmp_path / "nope.db").exists()


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
        status="paused",
        invocation_id="abc",
        aether={"x": 1},
        reason="why?",
        codex_url="sqlite:///runs/c.db",
    )
    data = result.to_dict()
    assert data["kind"] == "result"
    assert data["resume"] == "sanctum resume --invocation abc --codex sqlite:///runs/c.db"
    assert result.resume_command == data["resume"]
    assert not result.ephemeral
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


async def test_tokens_from_inside_a_circle_reach_the_tokens_mode(tmp_path: Path) -> None:
    (tmp_path / "inner.yaml").write_text(
        "sanctum: 1\nname: inner\naether:\n  said: {}\n"
        "oracles:\n  voice: {provider: scripted, responses: ['three little words']}\n"
        "entry: talk\nsigils:\n  talk:\n    oracle: voice\n    prompt: 'speak'\n"
        "    output: said\n    next: END\n",
        encoding="utf-8",
    )
    (tmp_path / "outer.yaml").write_text(
        "sanctum: 1\nname: outer\naether:\n  said: {}\nentry: sub\n"
        "sigils:\n  sub:\n    circle: inner.yaml\n    next: END\n",
        encoding="utf-8",
    )
    performance = api.run(tmp_path / "outer.yaml", codex="memory:", modes=("tokens",))
    omens = [omen async for omen in performance]
    tokens = [omen for omen in omens if isinstance(omen, TokenEmitted)]
    assert tokens, "no token reached the tokens mode"
    assert len(tokens) == len(omens)
    assert {t.sigil for t in tokens} == {"sub/talk"}
    assert "".join(str(t.payload) for t in tokens).split() == ["three", "little", "words"]
    assert performance.result is not None
    assert performance.result.aether["said"] == "three little words"


def test_inputs_nest_as_deep_as_a_yaml_file_may(tmp_path: Path) -> None:
    from sanctum.ritualfile.binding import MAX_INPUT_DEPTH
    from sanctum.ritualfile.loader import MAX_DEPTH

    assert MAX_INPUT_DEPTH == MAX_DEPTH == 64
    ritual = tmp_path / "r.yaml"
    ritual.write_text(TYPED, encoding="utf-8")
    spec = load(ritual)
    deep = parse_input_pairs(["name=x", "tags=" + "[" * 64 + "]" * 64])
    assert spec.bind_inputs(deep)["tags"]
    with pytest.raises(RitualInputError, match="nesting deeper than 64 levels"):
        spec.bind_inputs(parse_input_pairs(["name=x", "tags=" + "[" * 65 + "]" * 65]))
    loop: list[object] = []
    loop.append(loop)  # a value holding itself: answered at once, not walked forever
    with pytest.raises(RitualInputError, match="update tags: nesting deeper"):
        spec.bind_updates({"tags": loop})
