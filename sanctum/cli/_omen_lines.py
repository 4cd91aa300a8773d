"""One line per agent decision and per rejected spell call, for people.

The run view (:mod:`sanctum.cli._view`) and ``sanctum trace show``
(:mod:`sanctum.cli._trace_tree`) word an agent's Omens — OracleFellBack,
TranscriptCompacted, CompactionStalled, TurnBudgetReached, LoopGuardTripped,
ApprovalRequested — and SpellCallRejected alike: from live Omens or from the records
a trace file keeps. Every value is made printable (no control character reaches the
terminal); print the lines as rich ``Text``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sanctum.cli._common import printable
from sanctum.omens.events import (
    ApprovalRequested,
    CompactionStalled,
    LoopGuardTripped,
    Omen,
    OracleFellBack,
    TranscriptCompacted,
    TurnBudgetReached,
)

__all__ = ["AGENT_OMENS", "agent_line", "agent_record_line", "rejection_line"]


AGENT_OMENS: tuple[type[Omen], ...] = (
    OracleFellBack,
    TranscriptCompacted,
    CompactionStalled,
    TurnBudgetReached,
    LoopGuardTripped,
    ApprovalRequested,
)
"""The Omen classes drawn as one highlighted line each (the ``agent`` stream mode's)."""


def agent_line(omen: Omen, *, circle: str = "") -> str | None:
    """The highlighted line of an ``agent``-mode Omen, or None for any other Omen.

    Args:
        omen: Any Omen.
        circle: The Circle that echoed it, if any (prefixed to the Sigil's name).

    Returns:
        One line such as ``"  ⇄ answer: oracle local failed (connection); backup
        answered"``, or None when ``omen`` is not one the view highlights.
    """
    if not isinstance(omen, AGENT_OMENS):
        return None
    from sanctum.api import omen_to_dict

    sigil = printable(getattr(omen, "sigil", "") or "?")
    who = f"{printable(circle)}/{sigil}" if circle else sigil
    return agent_record_line(omen_to_dict(omen), who)


def agent_record_line(record: Mapping[str, Any], who: str) -> str | None:
    """The line of an agent-mode Omen given as data (``omen_to_dict``, a trace's record).

    Used by the run view and by ``sanctum trace show``, so both word an agent's
    decisions alike. Every value from ``record`` is made printable; ``who`` is printable
    already.

    Args:
        record: ``{"type": class name, ...fields}``.
        who: The Sigil (or ``circle/sigil``) to name.

    Returns:
        The line, or None for a record of another type.
    """
    kind = record.get("type")
    if kind == "OracleFellBack":
        return _fell_back_line(record, who)
    if kind == "TranscriptCompacted":
        forced = ", forced by an overflow" if record.get("forced") is True else ""
        return (
            f"  ⋯ {who}: compacted {printable(record.get('covered'))} messages into a "
            f"summary (~{printable(record.get('saved_tokens'))} tokens saved, by "
            f"{printable(record.get('summarizer'))}{forced})"
        )
    if kind == "CompactionStalled":
        return f"  ⋯ {who}: compaction stopped: {printable(record.get('reason'), lines=True)}"
    if kind == "TurnBudgetReached":
        return f"  ⏱ {who}: {printable(record.get('turns'))} turns spent; asking for a final answer"
    if kind == "LoopGuardTripped":
        did = "halted the loop at" if record.get("action") == "halt" else "blocked a call of"
        return (
            f"  ✋ {who}: the loop guard {did} {printable(record.get('spell'))} "
            f"({printable(record.get('code'))})"
        )
    if kind == "ApprovalRequested":
        return f"  ⏸ {who}: a call of {printable(record.get('spell'))} waits for approval"
    return None


def _fell_back_line(record: Mapping[str, Any], who: str) -> str:
    """``⇄ who: oracle a failed (reason, HTTP s); b answered`` (or ``skipped (benched)``)."""
    source = printable(record.get("from_oracle"))
    answered = printable(record.get("to_oracle"))
    reason = printable(record.get("reason"))
    if reason == "benched":
        return f"  ⇄ {who}: oracle {source} skipped (benched); {answered} answered"
    status = record.get("status")
    http = f", HTTP {printable(status)}" if status is not None else ""
    return f"  ⇄ {who}: oracle {source} failed ({reason}{http}); {answered} answered"


def rejection_line(spell: Any, reason: Any, who: str) -> str:
    """The line of a rejected spell call (SpellCallRejected or a trace's record).

    A rejection without a spell name is not about one call: the final answer's spell
    calls dropped once the turn budget or the loop guard stopped spells, or a notice
    (native spell calling refused).

    Args:
        spell: The spell's name ("" for the cases above).
        reason: The correction or the notice.
        who: The Sigil to name when there is no spell (printable already).
    """
    said = printable(reason, lines=True)
    if spell:
        return f"  ✗ rejected spell call {printable(spell)}: {said}"
    if reason in _DROPPED:
        return f"  ✗ {who}: final answer: spell calls dropped ({said})"
    return f"  ✗ {who}: {said}"


_DROPPED = frozenset({"turn budget spent", "loop guard stopped spells"})
"""The reasons the summon loop gives when a final answer's spell calls are dropped."""
