"""A summariser's failure quoted in CompactionStalled: masked before it is cut, cut marked."""

from __future__ import annotations

from typing import Any

from sanctum.errors import OracleConnectionError
from sanctum.grimoire.compaction import Compaction
from sanctum.omens import CompactionStalled, Omen
from sanctum.oracle import OracleResponse, ScriptedOracle
from sanctum.wards import Secrets

SECRET = "SEKRIT-4242-xyz"
TASK = "Count the words of every file under /srv/notes and report the total."


class Pen:
    """A Writer that keeps the Omens, and the Rite's masking policy (``writer.secrets``)."""

    def __init__(self, secrets: Secrets | None) -> None:
        self.omens: list[Omen] = []
        self.secrets = secrets

    def __call__(self, payload: Any) -> Any:
        return None

    def emit(self, omen: Omen) -> None:
        self.omens.append(omen)


class Failing(ScriptedOracle):
    """A summariser whose server echoes a secret right where the quote is cut (200)."""

    async def generate(self, messages: Any, spells: Any = None) -> OracleResponse:
        raise OracleConnectionError("p" * 192 + SECRET + " and more")


def _transcript() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for turn in range(1, 7):
        call = {"spell": "read", "arguments": {"path": f"/n/{turn}"}, "call_id": f"c{turn}"}
        messages.append({"role": "assistant", "content": "", "spell_calls": [call]})
        body = f"file {turn}: " + "word " * 320
        messages.append({"role": "spell", "name": "read", "call_id": f"c{turn}", "content": body})
    return messages


async def _stalled(secrets: Secrets | None) -> str:
    pen = Pen(secrets)
    compaction = Compaction(window=2048, summarizer=Failing([], arcana="ollama:tiny"))
    await compaction.compact(_transcript(), {}, writer=pen)
    stalled = pen.omens[0]
    assert isinstance(stalled, CompactionStalled)
    return stalled.reason


async def test_the_quote_is_masked_with_the_writer_s_policy_before_it_is_cut() -> None:
    reason = await _stalled(Secrets([SECRET]))
    assert "p[REDACTED]" in reason
    assert "SEKR" not in reason


async def test_without_a_policy_the_cut_is_marked_for_the_rite_s_masking() -> None:
    reason = await _stalled(None)
    assert "pSEKRIT-4…); this round" in reason
    assert "SEKR" not in Secrets([SECRET]).mask_text(reason)
