"""What a person sees of an agent's decisions: the run's own ids, skips, trace show.

An agent whose Ollama is dead falls back to a scripted oracle. ``--json --stream
agent`` yields the inner Omens placed in the run (its invocation id and superstep, the
``circle/sigil`` path), ``--stream omens`` keeps them in their echo with the Circle's
own id, and ``sanctum trace show`` lists the fallback under the Sigil that made it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sanctum.cli._omen_lines import agent_line, agent_record_line, rejection_line
from sanctum.cli._trace_tree import trace_tree
from sanctum.omens.events import OracleFellBack
from tests.cli.helpers import invoke
from tests.cli.render import console, text_of
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


RUN = ["run", "--codex", "memory:"]


@pytest.fixture
def agent_ritual(tmp_path: Path) -> Path:
    path = tmp_path / "fallback.yaml"
    path.write_text(AGENT.replace("URL", f"http://127.0.0.1:{closed_port()}"), encoding="utf-8")
    return path


def _lines(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_stream_agent_omens_carry_the_runs_invocation_id(agent_ritual: Path) -> None:
    done = invoke(
        [*RUN, agent_ritual.name, "--json", "--stream", "agent", "--invocation", "run-1"],
        agent_ritual.parent,
    )
    assert done.exit_code == 0, done.output
    fell = _lines(done.stdout)[0]
    assert fell["type"] == "OracleFellBack"
    assert (fell["invocation_id"], fell["superstep"], fell["sigil"]) == (
        "run-1",
        1,
        "answer/oracle",
    )


def test_stream_omens_keep_the_circles_own_id_inside_the_echo(agent_ritual: Path) -> None:
    done = invoke(
        [*RUN, agent_ritual.name, "--json", "--stream", "omens", "--invocation", "run-2"],
        agent_ritual.parent,
    )
    assert done.exit_code == 0, done.output
    echoes = [
        o
        for o in _lines(done.stdout)
        if o.get("type") == "CircleEchoed"
        and isinstance(o["omen"], dict)
        and o["omen"]["type"] == "OracleFellBack"
    ]
    assert len(echoes) == 1
    echo = echoes[0]
    inner = echo["omen"]
    assert isinstance(inner, dict)
    assert (echo["invocation_id"], echo["circle"], echo["sigil"]) == ("run-2", "answer", "answer")
    assert inner["invocation_id"] not in ("", "run-2")  # the Circle's own run
    assert inner["sigil"] == "oracle"


def test_trace_show_lists_the_fallback_under_its_sigil(agent_ritual: Path) -> None:
    done = invoke(
        [*RUN, agent_ritual.name, "-q", "--trace", "run.trace"],
        agent_ritual.parent,
    )
    assert done.exit_code == 0, done.output
    shown = invoke(["trace", "show", "run.trace"], agent_ritual.parent, env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    lines = [line.strip("│ ├└─") for line in shown.stdout.splitlines()]
    at = next(i for i, line in enumerate(lines) if line.startswith("✓ oracle  completed"))
    assert lines[at + 1] == "⇄ oracle: oracle main failed (connection); tiny answered"


def test_a_benched_oracle_passed_over_has_its_own_words() -> None:
    omen = OracleFellBack(from_oracle="fast", to_oracle="solid", reason="benched", sigil="s")
    assert agent_line(omen) == "  ⇄ s: oracle fast skipped (benched); solid answered"


@pytest.mark.parametrize(
    ("spell", "reason", "line"),
    [
        ("lookup", "unknown argument 'k'", "  ✗ rejected spell call lookup: unknown argument 'k'"),
        (
            "",
            "turn budget spent",
            "  ✗ work/final: final answer: spell calls dropped (turn budget spent)",
        ),
        (
            "",
            "loop guard stopped spells",
            "  ✗ work/final: final answer: spell calls dropped (loop guard stopped spells)",
        ),
        (
            "",
            "native spell calling was refused",
            "  ✗ work/final: native spell calling was refused",
        ),
    ],
)
def test_a_rejection_without_a_spell_says_what_was_dropped(
    spell: str, reason: str, line: str
) -> None:
    assert rejection_line(spell, reason, "work/final") == line


DOCUMENT = {
    "invocation_id": "inv1",
    "status": "completed",
    "duration": 0.5,
    "supersteps": [
        {
            "superstep": 11,
            "frontier": ["final"],
            "duration": 0.001,
            "sigils": [{"sigil": "final", "duration": 0.001, "status": "completed"}],
        }
    ],
    "rejections": [
        {
            "kind": "spell",
            "superstep": 11,
            "sigil": "final",
            "spell": "",
            "reason": "turn budget spent",
        }
    ],
    "other_omens": [
        {"type": "TurnBudgetReached", "turns": 5, "superstep": 11, "sigil": "final"},
        {
            "type": "TranscriptCompacted",
            "covered": 8,
            "saved_tokens": 810,
            "summarizer": "mechanical",
            "forced": False,
            "superstep": 11,
            "sigil": "final",
        },
        {"type": "SomethingElse", "superstep": 11, "sigil": "final"},
    ],
}


def test_trace_show_lists_budget_compaction_and_the_dropped_calls() -> None:
    target = console(width=120)
    target.print(trace_tree(DOCUMENT))
    assert text_of(target) == (
        "trace inv1  completed  500.0ms\n"
        "└── superstep 11  final  1.0ms\n"
        "    └── ✓ final  completed  1.0ms\n"
        "        ├── ✗ final: final answer: spell calls dropped (turn budget spent)\n"
        "        ├── ⏱ final: 5 turns spent; asking for a final answer\n"
        "        └── ⋯ final: compacted 8 messages into a summary (~810 tokens saved, "
        "by mechanical)\n"
    )


def test_a_record_of_another_type_has_no_agent_line() -> None:
    assert agent_record_line({"type": "SigilBegan"}, "s") is None


def test_an_oracle_override_keeps_the_entrys_fallback_chain(agent_ritual: Path) -> None:
    dead = f"ollama:other@127.0.0.1:{closed_port()}"
    done = invoke(
        [*RUN, agent_ritual.name, "--json", "--stream", "agent", "--oracle", f"main={dead}"],
        agent_ritual.parent,
    )
    assert done.exit_code == 0, done.output
    fell, result = _lines(done.stdout)
    assert (fell["from_oracle"], fell["to_oracle"], fell["reason"]) == (
        "main",
        "tiny",
        "connection",
    )
    assert isinstance(result["aether"], dict)
    assert result["aether"]["answer"] == "from the fallback"
