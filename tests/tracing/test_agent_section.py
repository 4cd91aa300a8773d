"""The trace shows an agent's fallbacks, compactions and each consultation's cache hits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sanctum.errors import OracleConnectionError
from sanctum.grimoire import Tome, spell, summon
from sanctum.grimoire.compaction import Compaction
from sanctum.oracle import OracleResponse, ScriptedOracle, SpellCall
from sanctum.oracle.fallback import FallbackOracle
from sanctum.tracing import TraceRecorder
from sanctum.tracing.sections import agent_section, body_sections

ASK = {"messages": [{"role": "user", "content": "Read pages 1 to 6; which names the pin?"}]}


@spell
def page(number: int) -> str:
    """Read one page of the manual."""
    return f"page {number}: " + "lorem ipsum dolor " * 90


class _Dead(ScriptedOracle):
    async def generate(self, messages: Any, spells: Any = None) -> OracleResponse:
        raise OracleConnectionError("nobody listens", endpoint="http://127.0.0.1:9")


def script() -> list[OracleResponse | str]:
    calls: list[OracleResponse | str] = [
        OracleResponse("", [SpellCall("page", {"number": n})]) for n in range(1, 7)
    ]
    return [*calls, OracleResponse("Page 5.", [], {"prompt_tokens": 900, "cached_tokens": 850})]


async def test_fallbacks_compactions_and_cache_hits_reach_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "agent.sanctum-trace.json"
    chain = FallbackOracle(_Dead([]), ScriptedOracle(script()), names=["fast", "tiny"])
    recorder = TraceRecorder(path)
    rite = summon(chain, Tome([page]), compact=Compaction(window=2048), wards=[recorder])
    await rite.ainvoke(ASK)
    assert path.exists()
    document = recorder.build()  # the expanded form every reader uses
    kinds = {o["type"] for o in document["other_omens"]}
    assert {"OracleFellBack", "TranscriptCompacted"} <= kinds
    html = agent_section(document)
    assert "<strong>fast</strong> failed (connection); <strong>tiny</strong> answered" in html
    # the next consultations pass the benched "fast" over, and say so
    assert "<strong>fast</strong> skipped (benched); <strong>tiny</strong> answered" in html
    skipped = [
        message["usage"]["fallback"]
        for message in document["final_aether"]["messages"]
        if "fallback" in message.get("usage", {})
    ]
    assert skipped[1] == {"oracle": "tiny", "failed": [], "skipped": ["fast"]}
    assert "summary by <strong>mechanical</strong> covers" in html
    assert "<td>850</td>" in html  # the cached prompt tokens of the last consultation
    assert 'id="agent"' in body_sections(document)


def test_a_trace_without_an_agent_says_so() -> None:
    assert "No agent events or consultations recorded." in agent_section({})


def test_agent_values_are_escaped() -> None:
    omen = {"type": "OracleFellBack", "from_oracle": "<b>x</b>", "to_oracle": "y", "reason": "r"}
    html = agent_section({"other_omens": [omen]})
    assert "<b>x</b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
