"""``--stream`` takes its choices from ``sanctum.omens.STREAM_MODES``; agent events show.

An agent whose Ollama is dead falls back to a scripted oracle: the human view highlights
the fallback in one line, ``--json --stream agent`` yields it (out of its Circle's
echo), and every mode the engine declares can be chosen and is named in ``--help``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sanctum.cli._options import split_modes, view_modes
from sanctum.cli._view import agent_line
from sanctum.omens import STREAM_MODES
from sanctum.omens.events import (
    ApprovalRequested,
    CompactionStalled,
    LoopGuardTripped,
    OracleFellBack,
    SigilBegan,
    TranscriptCompacted,
    TurnBudgetReached,
)
from tests.cli.helpers import invoke, mask
from tests.oracle.servers import closed_port

AGENT = """\
sanctum: 1
name: fallback
aether:
  answer: {type: string}
  messages: {reducer: append, default: []}
oracles:
  main: {provider: ollama, model: "qwen2.5:3b", base_url: "URL", fallback: [tiny]}
  tiny: {provider: scripted, responses: ["from the fallback"]}
entry: answer
sigils:
  answer:
    agent: {oracle: main}
    prompt: "hi"
    output: answer
    next: END
"""

FELL_BACK = "  ⇄ answer/oracle: oracle main failed (connection); tiny answered"


@pytest.fixture
def agent_ritual(tmp_path: Path) -> Path:
    path = tmp_path / "fallback.yaml"
    path.write_text(AGENT.replace("URL", f"http://127.0.0.1:{closed_port()}"), encoding="utf-8")
    return path


def test_the_human_view_highlights_a_fallback_once(agent_ritual: Path) -> None:
    done = invoke(["run", agent_ritual.name, "--codex", "memory:", "-q"], agent_ritual.parent)
    assert done.exit_code == 0, done.output
    lines = mask(done.stdout).splitlines()
    assert lines[0] == FELL_BACK
    assert lines[1] == "✓ superstep 1  answer  <t>"
    assert lines.count(FELL_BACK) == 1


def test_json_stream_agent_yields_the_fallback_out_of_its_circle(agent_ritual: Path) -> None:
    done = invoke(
        ["run", agent_ritual.name, "--codex", "memory:", "--json", "--stream", "agent"],
        agent_ritual.parent,
    )
    assert done.exit_code == 0, done.output
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o.get("type", o["kind"]) for o in objects] == ["OracleFellBack", "result"]
    fell = objects[0]
    assert (fell["from_oracle"], fell["to_oracle"], fell["reason"]) == (
        "main",
        "tiny",
        "connection",
    )
    assert fell["sigil"] == "answer/oracle"


def test_every_engine_mode_can_be_chosen_and_a_typo_names_them_all(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("sanctum: 1\n", encoding="utf-8")
    done = invoke(["run", "r.yaml", "--stream", "agnet"], tmp_path)
    assert done.exit_code == 2
    assert (
        f"unknown stream mode 'agnet'; did you mean 'agent'? (choose from "
        f"{', '.join(STREAM_MODES)})"
    ) in done.output
    assert split_modes([",".join(STREAM_MODES)]) == list(STREAM_MODES)


def test_a_mode_added_to_the_engine_is_a_choice_and_reaches_the_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(STREAM_MODES, "later", (SigilBegan,))
    assert split_modes(["later"]) == ["later"]
    assert "later" in view_modes([], json_lines=False)
    assert view_modes([], json_lines=True) == ["updates"]


@pytest.mark.parametrize("command", ["run", "resume"])
def test_the_help_names_every_stream_mode(command: str, tmp_path: Path) -> None:
    done = invoke([command, "--help"], tmp_path, env={"COLUMNS": "2000"})
    assert done.exit_code == 0
    text = " ".join(done.stdout.split())
    for mode in STREAM_MODES:
        assert f"{mode} (" in text, mode


@pytest.mark.parametrize(
    ("omen", "line"),
    [
        (
            OracleFellBack(from_oracle="a", to_oracle="b", reason="status", status=503, sigil="s"),
            "  ⇄ s: oracle a failed (status, HTTP 503); b answered",
        ),
        (
            TranscriptCompacted(covered=12, saved_tokens=900, summarizer="mechanical", sigil="s"),
            "  ⋯ s: compacted 12 messages into a summary (~900 tokens saved, by mechanical)",
        ),
        (
            CompactionStalled(reason="saved too little", sigil="s"),
            "  ⋯ s: compaction stopped: saved too little",
        ),
        (
            TurnBudgetReached(turns=8, sigil="s"),
            "  ⏱ s: 8 turns spent; asking for a final answer",
        ),
        (
            LoopGuardTripped(spell="fetch", code="same_result", action="halt", sigil="s"),
            "  ✋ s: the loop guard halted the loop at fetch (same_result)",
        ),
        (
            ApprovalRequested(spell="write", sigil="s"),
            "  ⏸ s: a call of write waits for approval",
        ),
    ],
)
def test_each_agent_omen_has_its_line(omen: object, line: str) -> None:
    assert agent_line(omen) == line  # type: ignore[arg-type]


def test_every_agent_mode_omen_is_drawn() -> None:
    covered = {
        OracleFellBack,
        TranscriptCompacted,
        CompactionStalled,
        TurnBudgetReached,
        LoopGuardTripped,
        ApprovalRequested,
    }
    assert set(STREAM_MODES["agent"]) <= covered
