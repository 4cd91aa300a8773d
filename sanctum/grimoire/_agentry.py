"""Per-call policy of the summon loop: access, approvals, the loop guard, the budget.

Private to :mod:`sanctum.grimoire.summon`, which calls these helpers from its Sigils.
Policy lives in the loop rather than in Wards (a Ward sees a Sigil's whole delta after
it ran: it cannot stop one call before it is cast, nor send the loop to ``final``).
Every piece of loop state is a Conduit (``turns``, ``stop_reason``, ``guard``,
``approvals``), so resume and time-travel cover it; nothing here reads the clock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanctum._agent_errors import TurnBudgetExceeded
from sanctum.aether import Conduit, add, merge_dict
from sanctum.grimoire.guard import GuardDecision, GuardLimits, LoopGuard, call_signature
from sanctum.grimoire.repair import RepairOutcome
from sanctum.grimoire.spell import ACCESS_LEVELS, injected_parameters
from sanctum.grimoire.tome import Tome
from sanctum.omens.events import ApprovalRequested, LoopGuardTripped, TurnBudgetReached, Writer
from sanctum.oracle.base import Message, OracleResponse, SpellCall
from sanctum.ritual.mandate import KeepingInterrupt, current_mandate

__all__ = ["LOOP_KEY", "LOOP_STATE", "ApprovalPause", "LoopPolicy", "loop_policy"]

LOOP_STATE = ("turns", "guard", "compaction", "system_prompt", "oracle_bench")
"""The loop's own Conduits an agent Circle keeps across an approval pause."""
LOOP_KEY = "loop"
"""The key of those counters in an outer ``approvals`` Conduit (no call key has no colon)."""

FINAL_SIGIL = "final"
BUDGET_NOTE = (
    "You have used all your turns. Do not cast spells. Answer the user now with what you "
    "have found and done so far."
)
NO_ANSWER = "The turn budget ran out before an answer was written; no summary is available."
_GUARD_WHY = {
    "repeat_failure": "the same spell call kept failing",
    "tool_failure": "a spell kept failing",
    "same_result": "the same spell call kept returning the same result",
}
"""What each loop guard counter saw, as the stop's note and empty answer say it."""


def guard_note(code: str) -> str:
    """The message that ends a loop the guard stopped (the model answers after it)."""
    why = _GUARD_WHY.get(code, "spell calls kept repeating")
    return (
        f"The loop guard stopped spell casting: {why}. Do not cast spells. Answer the "
        "user now with what you have found and done so far, and say what kept failing or "
        "repeating."
    )


def guard_no_answer(code: str) -> str:
    """The answer a guard-stopped loop ends with when the model wrote none."""
    why = _GUARD_WHY.get(code, "spell calls kept repeating")
    return f"The loop guard stopped the agent ({why}) before an answer was written."


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_CALL_BLOCK = re.compile(r"<spell_call>.*?</spell_call>", re.DOTALL | re.IGNORECASE)


class ApprovalPause(KeepingInterrupt):
    """The approval gate paused the loop: calls of the round await a person.

    ``pending`` maps each call id to ``{"decision": "pending", "spell", "arguments",
    "signature"}``; ``transcript`` is the loop's transcript when it paused (a Circle
    mounting the loop keeps it, so the loop resumes where it stopped).
    """

    def __init__(
        self,
        reason: str,
        pending: Mapping[str, Any],
        transcript: Sequence[Message],
        loop: Mapping[str, Any] | None = None,
    ):
        super().__init__(reason, {"approvals": dict(pending)})
        self.pending = dict(pending)
        self.transcript = list(transcript)
        self.loop = dict(loop or {})
        """The loop's state at the pause (``turns``, ``guard``, ``compaction``, and the
        frozen ``system_prompt`` of prompt layers)."""


@dataclass(frozen=True, slots=True)
class LoopPolicy:
    """The options that make summon's loop an agent for real work (all off: the seed)."""

    approve: frozenset[str] = frozenset()
    limits: GuardLimits | None = None
    max_turns: int | None = None
    on_budget: str = "answer"

    @property
    def final(self) -> bool:
        """Whether the loop has a ``final`` Sigil (a budget or a guard can end it)."""
        return self.max_turns is not None or self.limits is not None

    def conduits(self) -> dict[str, Conduit]:
        """The Conduits the enabled features keep their state in."""
        found: dict[str, Conduit] = {}
        if self.final:
            found["stop_reason"] = Conduit(type=str)
        if self.max_turns is not None:
            found["turns"] = Conduit(reducer=add, type=int)
        if self.limits is not None:
            found["guard"] = Conduit(type=dict)
        if self.approve:
            found["approvals"] = Conduit(reducer=merge_dict, type=dict)
        return found

    def guard(self, aether: Mapping[str, Any]) -> LoopGuard | None:
        """The loop guard, continued from the ``guard`` Conduit (None when off)."""
        if self.limits is None:
            return None
        return LoopGuard(self.limits, aether.get("guard"))

    def gate(
        self,
        entries: Sequence[tuple[SpellCall, RepairOutcome]],
        seen: Tome | None,
        aether: Mapping[str, Any],
    ) -> dict[str, dict[str, Any]]:
        """Decide the round's calls that need a person, or pause the loop for them.

        A call to a Spell whose access level is in ``approve`` needs a decision
        (``approvals[call_id]``). A call identical to one rejected earlier is rejected
        again with the same reason, without asking twice. When any call still has no
        decision, the loop pauses before ANY call of the round is cast.

        Returns:
            ``{call_id: decision entry}`` for the calls decided.

        Raises:
            ApprovalPause: When a call awaits a decision.
        """
        if not self.approve or seen is None:
            return {}
        approvals = dict(aether.get("approvals") or {})
        decided: dict[str, dict[str, Any]] = {}
        pending: dict[str, Any] = {}
        transcript = list(aether.get("messages") or [])
        turn = sum(1 for m in transcript if m.get("role") == "assistant")
        for call, outcome in entries:
            mended = outcome.call
            if mended is None or mended.spell not in seen:
                continue
            if seen.get(mended.spell).level not in self.approve:
                continue
            call_id = approval_key(turn, call.call_id)
            signature = call_signature(mended.spell, mended.arguments)
            basis = {
                "spell": mended.spell,
                "arguments": dict(mended.arguments),
                "signature": signature,
            }
            entry = approvals.get(call_id)
            if isinstance(entry, Mapping) and entry.get("decision") in ("approve", "reject"):
                decided[call_id] = {**basis, **entry}
                continue
            earlier = next(
                (
                    e
                    for e in approvals.values()
                    if isinstance(e, Mapping)
                    and e.get("decision") == "reject"
                    and e.get("signature") == signature
                ),
                None,
            )
            if earlier is not None:
                decided[call_id] = {**earlier, **basis, "auto": True}
                continue
            pending[call_id] = {**basis, "decision": "pending"}
        if pending:
            loop = {k: aether[k] for k in LOOP_STATE if aether.get(k) is not None}
            raise ApprovalPause(_question(pending), pending, transcript, loop)
        return decided

    def delta(
        self, guard: LoopGuard | None, halt: str | None, decided: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The loop state a round of the ``spells`` Sigil writes."""
        delta: dict[str, Any] = {}
        if guard is not None:
            delta["guard"] = guard.state()
        if halt is not None:
            delta["stop_reason"] = f"guard:{halt}"
        if decided:
            delta["approvals"] = {k: dict(v) for k, v in decided.items()}
        return delta

    def after_spells(self, aether: Mapping[str, Any]) -> str:
        """Where the loop goes after the ``spells`` Sigil: ``oracle`` or ``final``."""
        reason = aether.get("stop_reason")
        if isinstance(reason, str) and reason.startswith("guard:"):
            return FINAL_SIGIL
        if self.max_turns is not None and int(aether.get("turns") or 0) >= self.max_turns:
            return FINAL_SIGIL
        return "oracle"


def approval_key(turn: int, call_id: str | None) -> str:
    """The key of a call's decision in ``approvals``: its turn and its call id.

    Call ids repeat across turns with some servers (``call_0`` every turn); the turn
    (the number of assistant messages up to the call, stable across resumes) makes
    the key unique in the transcript.
    """
    return f"{turn}:{call_id}"


def loop_policy(
    approve: Collection[str] | None,
    guard: GuardLimits | bool | None,
    max_turns: int | None,
    on_budget: str,
) -> LoopPolicy:
    """Check summon's agent options and gather them.

    Raises:
        ValueError: If an option is out of range.
    """
    levels = frozenset([approve] if isinstance(approve, str) else approve or ())
    unknown = sorted(levels - set(ACCESS_LEVELS))
    if unknown:
        raise ValueError(
            f"approve names unknown access level {unknown[0]!r}; use {', '.join(ACCESS_LEVELS)}"
        )
    if max_turns is not None and (
        isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
    ):
        raise ValueError(f"max_turns must be an int >= 1 or None, not {max_turns!r}")
    if on_budget not in ("answer", "fail"):
        raise ValueError(f"on_budget must be 'answer' or 'fail', not {on_budget!r}")
    limits = GuardLimits() if guard is True else (guard or None)
    if limits is not None and not isinstance(limits, GuardLimits):
        raise ValueError(f"guard must be True, None or a GuardLimits, not {guard!r}")
    return LoopPolicy(levels, limits, max_turns, on_budget)


def _question(pending: Mapping[str, Any]) -> str:
    calls = "; ".join(
        f"{entry['spell']}({_arguments(entry['arguments'])}) [{call_id}]"
        for call_id, entry in pending.items()
    )
    return f"Approve {calls}?"


def _arguments(arguments: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in arguments.items()
    )


def screen(outcome: RepairOutcome, seen: Tome | None) -> RepairOutcome:
    """Refuse a call that supplies an argument the host injects (a Mandate).

    Holds for every Spell, also one whose only parameter is injected (the repair layer
    checks unexpected arguments only when the schema has properties).
    """
    mended = outcome.call
    if mended is None or seen is None or mended.spell not in seen:
        return outcome
    taken = [k for k in injected_parameters(seen.get(mended.spell).fn) if k in mended.arguments]
    if not taken:
        return outcome
    raw = json.dumps({"spell": mended.spell, "arguments": mended.arguments}, default=str)
    return RepairOutcome(
        correction=(
            f'Do not pass "{taken[0]}" to {mended.spell}: it is filled in for you. Cast '
            f"{mended.spell} again without it."
        ),
        raw=raw,
    )


def visible(tome: Tome | None) -> Tome | None:
    """The Spells the current run's Mandate may see (the Tome itself when all are)."""
    return None if tome is None else tome.visible_to(current_mandate())


def rejected_content(spell: str, entry: Mapping[str, Any]) -> str:
    """The spell message a rejected call becomes, so the model can react."""
    who = entry.get("by") or "the reviewer"
    reason = entry.get("reason") or "no reason given"
    return (
        f"Error: the call to {spell} was rejected by {who}: {reason}. Do not cast it again "
        "with the same arguments; answer the user or try something else."
    )


def signed(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The decision as the transcript records it on the call's spell message."""
    kept = {k: entry[k] for k in ("decision", "by", "reason", "auto") if entry.get(k)}
    return kept


def guarded(decision: GuardDecision, spell: str, call_id: str | None, writer: Writer) -> str | None:
    """Emit the Omen of a block or a halt; returns the halt code, if any."""
    if decision.action in ("block", "halt"):
        writer.emit(
            LoopGuardTripped(
                spell=spell, code=decision.code, action=decision.action, call_id=call_id
            )
        )
        return decision.code
    return None


def announce(pause: ApprovalPause, writer: Writer) -> None:
    """Emit an ApprovalRequested Omen per call awaiting a decision."""
    for call_id, entry in pause.pending.items():
        writer.emit(ApprovalRequested(spell=entry["spell"], call_id=call_id))


def _clean(text: str) -> str:
    return _CALL_BLOCK.sub("", _THINK.sub("", text)).strip()


async def final_answer(
    policy: LoopPolicy,
    ask: Callable[[Message], Awaitable[OracleResponse]],
    aether: Mapping[str, Any],
    writer: Writer,
) -> dict[str, Any]:
    """The ``final`` Sigil's work: one consultation without spells, a text answer.

    ``ask`` sends the Oracle (LLM adapter) the request closed by the note it is given
    (a user message telling the model to answer now) and returns the answer; the
    caller builds the request — the system prompt, the transcript or its compacted
    view, a volatile prompt layer — exactly as for the other consultations. It is
    called again once when the first answer holds no text.

    Returns:
        The delta: ``messages`` (the note and the answer, ``list[Message]``) and
        ``stop_reason`` (``"budget"`` or ``"guard:<code>"``).

    Raises:
        TurnBudgetExceeded: With ``on_budget="fail"`` when the budget (not a guard)
            ended the loop.
    """
    reason = aether.get("stop_reason")
    stop = reason if isinstance(reason, str) and reason.startswith("guard:") else "budget"
    if stop == "budget":
        writer.emit(TurnBudgetReached(turns=int(aether.get("turns") or 0)))
        if policy.on_budget == "fail":
            raise TurnBudgetExceeded(turns=int(aether.get("turns") or 0))
    code = stop.removeprefix("guard:")
    note: Message = (
        {"role": "user", "content": BUDGET_NOTE, "synthetic": "budget"}
        if stop == "budget"
        else {"role": "user", "content": guard_note(code), "synthetic": "guard"}
    )
    text = ""
    usage: dict[str, Any] = {}
    for _attempt in range(2):
        response = await ask(note)
        if response.spell_calls or "<spell_call>" in (response.text or ""):
            from sanctum.omens.events import SpellCallRejected

            spent = "turn budget spent" if stop == "budget" else "loop guard stopped spells"
            writer.emit(SpellCallRejected(spell="", reason=spent))
        text = _clean(response.text or "")
        usage = dict(response.usage or {})
        if text:
            break
    empty = NO_ANSWER if stop == "budget" else guard_no_answer(code)
    answer: Message = {"role": "assistant", "content": text or empty}
    if usage:
        answer["usage"] = usage
    return {"messages": [note, answer], "stop_reason": stop}
