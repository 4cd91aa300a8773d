"""The agent block's compact key: checked, compiled, and the view it sends."""

from __future__ import annotations

from pathlib import Path

from sanctum.grimoire.compaction import SUMMARY_OPEN, estimate_tokens
from sanctum.omens import CircleEchoed, CompactionStalled, TranscriptCompacted
from sanctum.oracle import OracleResponse, ScriptedOracle, SpellCall
from sanctum.ritualfile import check_ritual, compile_ritual
from tests.oracle.servers import closed_port

from .helpers import write

TASK = "Read pages 1 to 6 of the manual and say which page names the reset pin."

SPELL = '''
def page(number: int) -> str:
    """Read one page of the manual.

    Args:
        number: The page number.
    """
    return f"page {number}: " + "lorem ipsum dolor " * 90
'''

RITUAL = """
sanctum: 1
name: manual-reader
aether:
  messages: {reducer: append}
  answer: {}
oracles:
  main: {provider: scripted, context_window: 2048}
  tiny: {provider: scripted, model: tiny}
tomes:
  manual: {path: spells}
entry: read
sigils:
  read:
    agent:
      oracle: main
      tome: manual
      compact: COMPACT
    prompt: "TASK"
    output: answer
    next: END
""".replace("TASK", TASK)


def ritual(tmp_path: Path, compact: str) -> Path:
    folder = tmp_path / "spells" / "page"
    folder.mkdir(parents=True)
    (folder / "spell.py").write_text(SPELL, encoding="utf-8")
    (folder / "spell.json").write_text(
        '{"name": "page", "entrypoint": "spell.py:page", "access": "read"}', encoding="utf-8"
    )
    return write(tmp_path, RITUAL.replace("COMPACT", compact))


def script() -> list[OracleResponse | str]:
    calls: list[OracleResponse | str] = [
        OracleResponse("", [SpellCall("page", {"number": n})]) for n in range(1, 7)
    ]
    return [*calls, "Page 5 names the reset pin."]


def test_compact_true_summarises_mechanically_within_the_oracles_window(tmp_path: Path) -> None:
    path = ritual(tmp_path, "true")
    assert check_ritual(path, resolve=True) == []
    main = ScriptedOracle(script())
    final = compile_ritual(path, oracles={"main": main}).invoke({})
    assert final["answer"] == "Page 5 names the reset pin."
    assert len(final["messages"]) == 1 + 2 * 6 + 1  # the stored transcript is whole
    last_view = main.calls[-1][0]
    assert len(last_view) < len(final["messages"])
    assert f"Task (verbatim): {TASK}" in str(last_view)
    assert SUMMARY_OPEN in str(last_view)


def test_a_named_summarizer_writes_the_summary(tmp_path: Path) -> None:
    path = ritual(tmp_path, "{summarizer: tiny, at: 0.6, keep_tail: 0.2}")
    assert check_ritual(path, resolve=True) == []
    main = ScriptedOracle(script())
    tiny = ScriptedOracle([f"Task (verbatim): {TASK}\nDone: pages read."] * 6, arcana="tiny")
    final = compile_ritual(path, oracles={"main": main, "tiny": tiny}).invoke({})
    assert final["answer"] == "Page 5 names the reset pin."
    assert tiny.calls, "the named summariser was never consulted"
    assert "Done: pages read." in str(main.calls[-1][0])


def test_without_compact_the_whole_transcript_is_sent(tmp_path: Path) -> None:
    path = ritual(tmp_path, "false")
    main = ScriptedOracle(script())
    final = compile_ritual(path, oracles={"main": main}).invoke({})
    assert len(main.calls[-1][0]) == len(final["messages"])  # system prompt + all but answer


def test_an_unknown_summarizer_is_placed_in_the_file(tmp_path: Path) -> None:
    path = ritual(tmp_path, "{summarizer: tinny}")
    problems = check_ritual(path, resolve=True)
    assert len(problems) == 1
    (problem,) = problems
    assert "oracle 'tinny' does not exist" in problem.message
    assert "did you mean 'tiny'" in problem.message
    assert problem.line == 17


def test_a_share_out_of_range_is_placed_in_the_file(tmp_path: Path) -> None:
    path = ritual(tmp_path, "{at: 1.5}")
    (problem,) = check_ritual(path)
    assert problem.line == 17
    assert "0.95" in problem.message
    assert str(problem).startswith(f"{path}:17:")


def _column(path: Path, line: int, key: str) -> int:
    return path.read_text(encoding="utf-8").splitlines()[line - 1].index(key) + 1


def test_a_max_output_leaving_no_room_is_placed_at_its_key(tmp_path: Path) -> None:
    path = ritual(tmp_path, "{max_output: 4096}")
    (problem,) = check_ritual(path)
    assert (problem.line, problem.column) == (17, _column(path, 17, "max_output"))
    assert problem.message == (
        "sigil 'read': compact max_output 4096 leaves no room for the prompt in oracle "
        "'main''s 2048-token context_window: max_output + 256 may take at most half the "
        "window, or every consultation would compact again; set `max_output:` under "
        "`compact:` to 768 or less"
    )
    assert check_ritual(ritual(tmp_path / "fits", "{max_output: 768}")) == []


def test_the_default_max_output_shrinks_to_fit_a_small_window(tmp_path: Path) -> None:
    path = ritual(tmp_path, "true")
    path.write_text(path.read_text().replace("context_window: 2048", "context_window: 1024"))
    assert check_ritual(path) == []  # unwritten, the answer budget fits the window (256)
    path.write_text(path.read_text().replace("compact: true", "compact: {max_output: 512}"))
    (problem,) = check_ritual(path)
    assert "compact max_output 512 leaves no room" in problem.message
    assert problem.message.endswith("set `max_output:` under `compact:` to 256 or less")


async def test_a_dead_summarizer_is_named_and_the_summary_written_mechanically(
    tmp_path: Path,
) -> None:
    path = ritual(tmp_path, "{summarizer: dead}")
    dead = (
        f'  dead: {{provider: ollama, model: s, base_url: "http://127.0.0.1:{closed_port()}", '
        "timeout: 2}"
    )
    text = path.read_text().replace("  tiny: {provider: scripted, model: tiny}", dead)
    path.write_text(text)
    assert check_ritual(path, resolve=True) == []
    main = ScriptedOracle(script())
    rite = compile_ritual(path, oracles={"main": main})
    omens = [
        omen.omen if isinstance(omen, CircleEchoed) else omen  # the agent's own Omens
        async for omen in rite.astream({}, mode={"omens", "agent"})
    ]
    stalled = [o for o in omens if isinstance(o, CompactionStalled)]
    assert stalled
    assert stalled[0].reason.startswith("the summariser ollama:s failed (connection: ")
    compacted = [o for o in omens if isinstance(o, TranscriptCompacted)]
    assert compacted
    assert {o.summarizer for o in compacted} == {"mechanical"}
    assert f"Task (verbatim): {TASK}" in str(main.calls[-1][0])
    assert max(estimate_tokens(call[0]) for call in main.calls) < 1280  # the trigger
