"""Keeping an Entity's memory within a small window: the transcript seen through a summary.

When the prompt of a consultation would pass a share of the Oracle's context window,
the older turns are replaced — in the *view sent to the model* only — by a structured
summary; the stored ``messages`` stay append-only, so Seals, the audit trail and
time-travel keep every word. The state (the summary, how far it reaches, the learnt
window, the back-off counters) lives in the ``compaction`` Conduit, so a resumed run
sends the very same view.

The numbers suit 2K-8K windows (``W`` tokens; ``max_output`` the answer's budget):

* trigger ``T = min(at·W, W − max_output − 256)`` with ``at`` 0.75 up to 64K windows
  and 0.5 above;
* tail kept verbatim: ``clamp(keep_tail·W, 256, 16000)`` tokens, always holding the
  last user message and the last assistant turn with its spell results — an
  assistant's spell calls and their results are never split;
* head: the messages up to the first user request, kept verbatim; the summary is
  appended to the last of them, so roles keep alternating and the system prompt stays
  byte-identical.

Tokens are counted from the last answer's ``usage["prompt_tokens"]`` (the server's
own count) plus characters ÷ 4 for what was appended since, or characters ÷ 4 for
everything before the first answer. Back-off is counted in consultations, never
seconds: a failing summariser rests 1, then 3, then 8 consultations; the round it
failed (with a ``CompactionStalled`` Omen naming the failure) and the rounds it rests
are summarised mechanically, so the window is still kept. Two compactions in a row
saving under 10 % stop compaction for the run (``CompactionStalled``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanctum.errors import ContextOverflowError, OracleError
from sanctum.grimoire._compaction_rules import (
    OUTPUT_MARGIN,
    Overflow,
    answer_budget,
    check_options,
    max_output_limit,
    overflow_error,
)
from sanctum.grimoire._summaries import mechanical_summary, summariser_request
from sanctum.omens.events import CompactionStalled, TranscriptCompacted, Writer
from sanctum.oracle.base import Message, Oracle, OracleResponse
from sanctum.oracle.classify import classify_oracle_fault
from sanctum.wards.redact import clip

__all__ = [
    "DEFAULT_WINDOW",
    "Compaction",
    "Thresholds",
    "answer_budget",
    "estimate_tokens",
    "max_output_limit",
    "mechanical_summary",
    "tail_start",
    "thresholds",
]

DEFAULT_WINDOW = 4096
"""The window (tokens) assumed when neither the file nor the server states one."""

SUMMARY_OPEN = "[Summary of the earlier conversation — reference only; answer the latest message]"
SUMMARY_CLOSE = "[End of summary]"
_COOLDOWNS = (1, 3, 8)
_WEAK_SAVING = 0.10


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A rough prompt size: characters ÷ 4, plus 4 tokens per message for its framing.

    Args:
        messages: Messages as sent (``list[Message]``); spell calls count by their JSON.

    Returns:
        The estimate in tokens.
    """
    total = 0
    for message in messages:
        chars = len(str(message.get("content") or ""))
        if message.get("spell_calls"):
            chars += len(json.dumps(message["spell_calls"], ensure_ascii=False, default=str))
        total += chars // 4 + 4
    return total


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The compaction numbers for one window, in tokens."""

    window: int
    trigger: int
    tail: int
    summary_lo: int
    summary_hi: int


def thresholds(
    window: int, *, at: float | None = None, keep_tail: float = 0.2, max_output: int = 512
) -> Thresholds:
    """The trigger, tail and summary budgets for a window of ``window`` tokens.

    Args:
        window: The context window in tokens.
        at: The trigger as a fraction of the window; 0.75 up to 64K, 0.5 above.
        keep_tail: The share of the window kept verbatim at the end.
        max_output: Tokens kept free for the answer.

    Returns:
        The numbers, e.g. 2,048 → trigger 1,280, tail 409, summary 163-245.
    """
    share = at if at is not None else (0.75 if window <= 65_536 else 0.5)
    trigger = int(min(share * window, window - max_output - OUTPUT_MARGIN))
    tail = int(min(max(keep_tail * window, 256), 16_000))
    return Thresholds(
        window=window,
        trigger=max(trigger, 1),
        tail=tail,
        summary_lo=int(min(512, 0.08 * window)),
        summary_hi=int(min(12_000, 0.12 * window)),
    )


def _head_end(transcript: Sequence[Message]) -> int:
    """Index after the head: the leading messages up to and including the first user's."""
    for index, message in enumerate(transcript):
        if message.get("role") == "user":
            return index + 1
    return 0


def _group_starts(transcript: Sequence[Message], start: int) -> list[int]:
    """Indexes from ``start`` where a cut may fall: never on a spell result."""
    return [i for i in range(start, len(transcript)) if transcript[i].get("role") != "spell"]


def tail_start(transcript: Sequence[Message], start: int, budget: int) -> int:
    """Where the verbatim tail begins: a cut that never splits a call from its results.

    Walks back from the end adding estimated tokens until ``budget``; the tail always
    holds the last user message after ``start`` and the last assistant turn with its
    spell results.

    Args:
        transcript: The stored messages.
        start: The first index that may be summarised (after the head and any earlier
            summary).
        budget: The tail budget in tokens.

    Returns:
        The index of the tail's first message (``len(transcript)`` only when there is
        nothing after ``start``); ``start`` means nothing can be summarised.
    """
    cuts = _group_starts(transcript, start)
    if not cuts:
        return len(transcript)
    users = [i for i in range(start, len(transcript)) if transcript[i].get("role") == "user"]
    assistants = [i for i in cuts if transcript[i].get("role") == "assistant"]
    kept = [found[-1] for found in (users, assistants) if found]
    must = min(kept) if kept else cuts[-1]
    chosen = must
    for cut in reversed(cuts):
        if cut > must:
            continue
        if estimate_tokens(transcript[cut:]) > budget:
            break
        chosen = cut
    return chosen


@dataclass(frozen=True, slots=True)
class Compaction:
    """How an Entity's transcript is compacted for small windows (``summon(compact=)``).

    Context compaction: the view of the transcript sent to the Oracle (LLM adapter)
    is shortened by a summary when the prompt nears the context window.

    Args:
        window: The Oracle's context window in tokens (int >= 512); ``None``: learnt
            from the server's overflow error, else :data:`DEFAULT_WINDOW`.
        at: Trigger as a fraction of the window in [0.1, 0.95] (0.75 up to 64K, 0.5
            above by default).
        keep_tail: Share of the window kept verbatim at the end, in [0.05, 0.6].
        summarizer: The Oracle that writes the summary (usually a smaller one); ``None``
            writes it mechanically (deterministic, no model call). A round in which it
            fails, or backs off, uses the mechanical summary.
        quotes: Characters (int >= 0) of user messages quoted verbatim in a mechanical
            summary.
        max_output: Tokens (int >= 1) kept free for the answer; with a declared
            ``window``, ``max_output + 256`` may take at most half of it (2,048 → 768).
            ``None``: 512, lowered for small windows (1,024 → 256, 512 → 64).

    Raises:
        ValueError: If an option has the wrong type or is out of range, or
            ``max_output`` leaves no room for the prompt in ``window``.
    """

    window: int | None = None
    at: float | None = None
    keep_tail: float = 0.2
    summarizer: Oracle | None = None
    quotes: int = 1200
    max_output: int | None = None

    def __post_init__(self) -> None:
        check_options(
            window=self.window,
            at=self.at,
            keep_tail=self.keep_tail,
            quotes=self.quotes,
            max_output=self.max_output,
        )
        if self.summarizer is not None and not isinstance(self.summarizer, Oracle):
            raise ValueError(
                "compact summarizer must be an Oracle or None, not "
                f"{type(self.summarizer).__name__}"
            )

    @property
    def summarizer_name(self) -> str:
        """The summariser's arcana, or ``"mechanical"``."""
        return "mechanical" if self.summarizer is None else self.summarizer.arcana

    def view(self, transcript: Sequence[Message], state: Mapping[str, Any]) -> list[Message]:
        """The messages sent to the Oracle: head (with the summary) + the verbatim rest.

        Args:
            transcript: The stored messages.
            state: The ``compaction`` Conduit's value (``{}`` before any compaction).

        Returns:
            The view; the transcript itself when nothing was compacted yet.
        """
        summary = state.get("summary")
        if not summary:
            return list(transcript)
        head_end = _head_end(transcript)
        head = [dict(m) for m in transcript[:head_end]]
        framed = f"{SUMMARY_OPEN}\n{summary}\n{SUMMARY_CLOSE}"
        if head:
            head[-1]["content"] = f"{head[-1].get('content') or ''}\n\n{framed}"
        else:
            head = [{"role": "user", "content": framed}]
        return [*head, *transcript[int(state.get("covers_through") or head_end) :]]

    def _tokens(self, transcript: Sequence[Message], state: Mapping[str, Any], fixed: int) -> int:
        """The prompt size: the last answer's prompt_tokens plus what came since."""
        covers = int(state.get("covers_through") or 0)
        for index in range(len(transcript) - 1, covers - 1, -1):
            usage = transcript[index].get("usage")
            if transcript[index].get("role") == "assistant" and isinstance(usage, Mapping):
                anchor = usage.get("prompt_tokens")
                if isinstance(anchor, int) and not isinstance(anchor, bool) and anchor > 0:
                    return anchor + estimate_tokens(transcript[index:])
        return fixed + estimate_tokens(self.view(transcript, state))

    async def _summarise(
        self,
        previous: str,
        covered: Sequence[Message],
        latest: str,
        limits: Thresholds,
        *,
        mechanical: bool,
    ) -> str:
        if self.summarizer is None or mechanical:
            return mechanical_summary(
                previous,
                covered,
                latest_request=latest,
                quotes=self.quotes,
                budget=4 * limits.summary_hi,
            )
        answer = await self.summarizer.generate(summariser_request(previous, covered, latest))
        text = answer.text.strip()
        if f"{latest[:200]}" not in text:
            text = f"Task (verbatim): {latest}\n{text}"
        return text

    async def _summary(
        self,
        new: dict[str, Any],
        covered: Sequence[Message],
        latest: str,
        limits: Thresholds,
        *,
        resting: bool,
        writer: Writer | None,
    ) -> tuple[str, str]:
        """The summary and who wrote it: the summariser, or mechanically when it rests or fails.

        A failure of the summariser is counted in ``new`` (``failures``, ``cooldown``)
        and announced by a CompactionStalled Omen; a success resets both.
        """
        previous = str(new.get("summary") or "")
        fallback = (previous, covered, latest, limits)
        if self.summarizer is None or resting:
            return await self._summarise(*fallback, mechanical=True), "mechanical"
        try:
            text = await self._summarise(*fallback, mechanical=False)
        except OracleError as exc:
            failures = int(new.get("failures") or 0) + 1
            cooldown = _COOLDOWNS[min(failures, len(_COOLDOWNS)) - 1]
            new.update(failures=failures, cooldown=cooldown)
            if writer is not None:
                fault = classify_oracle_fault(exc)
                said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                writer.emit(
                    CompactionStalled(
                        reason=f"the summariser {self.summarizer_name} failed "
                        f"({fault.reason.replace('_', ' ')}: "
                        f"{clip(said, 200, getattr(writer, 'secrets', None))}); this round "
                        f"used the mechanical summary, and the summariser is tried again "
                        f"after {cooldown} consultation(s)"
                    )
                )
            return await self._summarise(*fallback, mechanical=True), "mechanical"
        new.update(failures=0, cooldown=0)
        return text, self.summarizer_name

    async def compact(
        self,
        transcript: Sequence[Message],
        state: Mapping[str, Any],
        *,
        fixed: int = 0,
        forced: bool = False,
        writer: Writer | None = None,
    ) -> dict[str, Any]:
        """The next ``compaction`` state: compacted when the prompt passed the trigger.

        Counts one consultation against the summariser's back-off (a forced call
        counts none). A summariser that fails, or is backing off, never leaves the
        prompt uncompacted: that round's summary is written mechanically, and a
        failure emits a CompactionStalled Omen naming it.

        Args:
            transcript: The stored messages.
            state: The ``compaction`` Conduit's value.
            fixed: Estimated tokens of what every request carries besides the
                messages (system prompt, spell schemas).
            forced: Compact whatever the size and a stall (the server reported an
                overflow).
            writer: Where TranscriptCompacted / CompactionStalled Omens go.

        Returns:
            The new state (a fresh dict; equal to ``state`` when nothing changed).
        """
        new = dict(state)
        window = int(new.get("window") or self.window or DEFAULT_WINDOW)
        limits = thresholds(
            window,
            at=self.at,
            keep_tail=self.keep_tail,
            max_output=answer_budget(self.max_output, window),
        )
        cooldown = int(new.get("cooldown") or 0)
        if cooldown > 0 and not forced:
            new["cooldown"] = cooldown - 1
        if not forced and new.get("stalled"):
            return new
        before = self._tokens(transcript, new, fixed)
        if not forced and before < limits.trigger:
            return new
        start = int(new.get("covers_through") or _head_end(transcript))
        cut = tail_start(transcript, start, limits.tail)
        if cut <= start:
            return new
        latest = next(
            (str(m.get("content") or "") for m in reversed(transcript) if m.get("role") == "user"),
            "",
        )
        summary, author = await self._summary(
            new, transcript[start:cut], latest, limits, resting=cooldown > 0, writer=writer
        )
        old_view = estimate_tokens(self.view(transcript, state))
        new.update(summary=summary, covers_through=cut)
        new["count"] = int(new.get("count") or 0) + 1
        saved = old_view - estimate_tokens(self.view(transcript, new))
        weak = int(new.get("weak") or 0) + 1 if saved < _WEAK_SAVING * max(old_view, 1) else 0
        new["weak"] = weak
        if writer is not None:
            writer.emit(
                TranscriptCompacted(
                    covered=cut - _head_end(transcript),
                    saved_tokens=max(saved, 0),
                    summarizer=author,
                    forced=forced,
                )
            )
        if weak >= 2:
            new["stalled"] = True
            if writer is not None:
                writer.emit(CompactionStalled(reason="two compactions in a row saved under 10 %"))
        return new

    async def consult(
        self,
        transcript: Sequence[Message],
        state: Mapping[str, Any],
        ask: Callable[[list[Message]], Awaitable[OracleResponse]],
        *,
        fixed: int = 0,
        writer: Writer | None = None,
    ) -> tuple[OracleResponse, dict[str, Any]]:
        """Compact if due, ask the Oracle with the view; on an overflow, compact and retry once.

        A window the server states in its overflow error is kept in the state. When
        the forced compaction cannot shorten the view, the same request is not sent
        again.

        Args:
            transcript: The stored messages.
            state: The ``compaction`` Conduit's value.
            ask: Sends a view (``list[Message]``) to the Oracle.
            fixed: Estimated tokens of the system prompt and spell schemas.
            writer: Where the Omens go.

        Returns:
            The answer and the new ``compaction`` state.

        Raises:
            ContextOverflowError: The server still reported an overflow: nothing (or
                nothing more) could be compacted, or the compacted view did not fit.
                Names the window with its source (reported, declared, or assumed), the
                estimated prompt size, and the fix.
            OracleError: Any other failure of the Oracle, as raised.
        """
        new = await self.compact(transcript, state, fixed=fixed, writer=writer)
        sent = self.view(transcript, new)
        try:
            return await ask(sent), new
        except Exception as exc:
            fault = classify_oracle_fault(exc)
            if not fault.compact:
                raise
            if fault.window:
                new["window"] = int(fault.window)
            first = exc
        new = await self.compact(transcript, new, fixed=fixed, forced=True, writer=writer)
        again = self.view(transcript, new)
        if again == sent:
            outcome: Overflow = "nothing_more" if new.get("summary") else "nothing"
            raise self._overflow(first, outcome, new, estimate_tokens(sent), fixed) from first
        try:
            return await ask(again), new
        except Exception as exc:
            fault = classify_oracle_fault(exc)
            if not fault.compact:
                raise
            if fault.window:
                new["window"] = int(fault.window)
            raise self._overflow(exc, "after", new, estimate_tokens(again), fixed) from first

    def _overflow(
        self, exc: BaseException, outcome: Overflow, state: Mapping[str, Any], size: int, fixed: int
    ) -> ContextOverflowError:
        reported = state.get("window")
        return overflow_error(
            exc,
            outcome,
            reported=int(reported) if reported else None,
            declared=self.window,
            assumed=DEFAULT_WINDOW,
            fixed=fixed,
            estimate=fixed + size,
        )
