"""``sanctum run/resume --record/--replay`` and ``sanctum test`` with ``cassette:`` cases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.oracle.servers import ModelServer, closed_port, ollama_chat

SECRET = "s3cr3t-value-7781"

TWO_ASKS = """\
sanctum: 1
name: two-asks
inputs:
  topic: {type: string}
aether:
  draft: {}
  final: {}
  approved: {default: false}
oracles:
  local: {provider: ollama, model: "qwen2.5:7b", base_url: "${OLLAMA_URL}"}
public: [OLLAMA_URL]
entry: draft
sigils:
  draft:
    oracle: local
    prompt: "Draft a note on {{ topic }} (${NOTE_KEY})"
    output: draft
    next: approve
  approve:
    interrupt: "Approve {{ draft }}?"
    until: "approved"
    next: polish
  polish:
    oracle: local
    prompt: "Polish: {{ draft }}"
    output: final
    next: END
"""

TESTS = """\
ritual: two.yaml
cases:
  - name: drafts and polishes
    inputs: {topic: tides}
    cassette: cassettes/tides.jsonl
    resume: [{approved: true}]
    expect:
      status: done
      aether: {draft: "Tides rise.", final: "The tides rise twice a day."}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "two.yaml").write_text(TWO_ASKS, encoding="utf-8")
    (tmp_path / "two.test.yaml").write_text(TESTS, encoding="utf-8")
    return tmp_path


def served() -> ModelServer:
    server = ModelServer().start()
    server.reply(ollama_chat("Tides rise."), ollama_chat("The tides rise twice a day."))
    return server


def test_run_and_resume_record_then_replay_offline(folder: Path) -> None:
    server = served()
    env = {"OLLAMA_URL": server.url, "NOTE_KEY": SECRET}
    try:
        first = invoke(
            [
                "run",
                "two.yaml",
                "-i",
                "topic=tides",
                "--invocation",
                "r1",
                "--json",
                "--record",
                "tides.jsonl",
            ],
            folder,
            env=env,
        )
        assert first.exit_code == 3, first.output
        second = invoke(
            [
                "resume",
                "--invocation",
                "r1",
                "-u",
                "approved=true",
                "--json",
                "--record",
                "tides.jsonl",
            ],
            folder,
            env=env,
        )
        assert second.exit_code == 0, second.output
    finally:
        server.stop()
    recorded = json.loads(second.stdout.splitlines()[-1])["aether"]
    cassette = (folder / "tides.jsonl").read_text(encoding="utf-8")
    assert SECRET not in cassette
    lines = [json.loads(line) for line in cassette.splitlines()]
    sessions = [line for line in lines if line.get("kind") == "session"]
    assert [(s["command"], s["superstep"]) for s in sessions] == [("run", 0), ("resume", 1)]
    calls = [(c["sigil"], c["number"], c["session"]) for c in lines if c.get("kind") == "oracle"]
    assert calls == [("draft", 1, 0), ("polish", 1, 1)]

    env = {"OLLAMA_URL": f"http://127.0.0.1:{closed_port()}", "NOTE_KEY": SECRET}
    run = invoke(
        [
            "run",
            "two.yaml",
            "-i",
            "topic=tides",
            "--invocation",
            "p1",
            "--json",
            "--replay",
            "tides.jsonl",
        ],
        folder,
        env=env,
    )
    assert run.exit_code == 3, run.output
    resumed = invoke(
        [
            "resume",
            "--invocation",
            "p1",
            "-u",
            "approved=true",
            "--json",
            "--replay",
            "tides.jsonl",
        ],
        folder,
        env=env,
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout.splitlines()[-1])["aether"] == recorded

    # a prompt edit: exit 1, the sigil, the call and the diff on stderr
    (folder / "two.yaml").write_text(TWO_ASKS.replace("Draft a note", "Write a note"), "utf-8")
    edited = invoke(
        ["run", "two.yaml", "-i", "topic=tides", "--invocation", "p2", "--replay", "tides.jsonl"],
        folder,
        env=env,
    )
    assert edited.exit_code == 1, edited.output
    assert "sigil 'draft' call 1 to oracle 'local' differs" in edited.stderr
    assert "+  " in edited.stderr
    assert "Write a note on tides" in edited.stderr
    assert SECRET not in edited.stderr


def test_replaying_a_missing_cassette_is_bad_input(folder: Path) -> None:
    result = invoke(
        ["run", "two.yaml", "-i", "topic=tides", "--replay", "none.jsonl"],
        folder,
        env={"OLLAMA_URL": "http://127.0.0.1:9", "NOTE_KEY": SECRET},
    )
    assert result.exit_code == 2, result.output
    assert "--replay: the cassette none.jsonl does not exist" in result.stderr


def test_sanctum_test_records_then_replays_offline_with_junit(folder: Path) -> None:
    env = {"OLLAMA_URL": f"http://127.0.0.1:{closed_port()}", "NOTE_KEY": SECRET}
    missing = invoke(["test", "two.test.yaml"], folder, env=env)
    assert missing.exit_code == 1, missing.output
    assert "record-missing" in missing.output

    refused = invoke(["test", "--record-missing"], folder, env={**env, "CI": "true"})
    assert refused.exit_code == 2
    assert "--record-missing refused: CI=true is set" in refused.stderr
    assert not (folder / "cassettes").exists()
    refused = invoke(["test", "--record"], folder, env={**env, "CI": "true"})
    assert refused.exit_code == 2
    assert "--record refused" in refused.stderr

    server = served()
    try:
        recorded = invoke(  # on a developer's machine: CI unset, even when the suite runs in CI
            ["test", "--record-missing"], folder, env={**env, "OLLAMA_URL": server.url, "CI": ""}
        )
    finally:
        server.stop()
    assert recorded.exit_code == 0, recorded.output
    cassette = folder / "cassettes" / "tides.jsonl"
    assert SECRET not in cassette.read_text(encoding="utf-8")

    replayed = invoke(
        ["test", "two.test.yaml", "--junit-xml", "report.xml"], folder, env={**env, "CI": "true"}
    )
    assert replayed.exit_code == 0, replayed.output
    assert "1 passed" in replayed.output
    suite = ET.parse(folder / "report.xml").getroot()
    case = suite.find(".//testcase")
    assert case is not None
    assert case.get("name") == "drafts and polishes"
    assert suite.find(".//failure") is None


def test_a_case_cannot_name_both_a_cassette_and_responses(folder: Path) -> None:
    (folder / "two.test.yaml").write_text(
        TESTS.replace("    resume:", "    responses: {local: [a, b]}\n    resume:"), "utf-8"
    )
    result = invoke(
        ["test", "two.test.yaml"], folder, env={"OLLAMA_URL": "http://x", "NOTE_KEY": "k"}
    )
    assert result.exit_code == 2
    assert "names both `cassette:` and `responses:`" in result.output
