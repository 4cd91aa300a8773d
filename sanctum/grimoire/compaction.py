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
seconds: a failing summariser skips 1, then 3, then 8 consultations; two compactions
in a row saving under 10 % stop compaction for the run (``CompactionStalled``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanctum.errors import OracleError
from sanctum.omens.events import CompactionStalled, TranscriptCompacted, Writer
from sanctum.oracle.base import Message, Oracle, OracleResponse
from sanctum.oracle.classify import ContextOverflowError, classify_oracle_fault

__all__ = [
    "DEFAULT_WINDOW",
    "Compaction",
    "Thresholds",
    "estimate_tokens",
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
_IDENTIFIERS = re.compile(
    r"(?:[\w.-]*/[\w./-]+)|\b\d+(?:\.\d+)?\s?(?:ms|s|KB|MB|GB|GiB|MiB|tokens|%)"
    r"|\b[A-Z]{2,}-\d+\b|\b[0-9a-f]{7,40}\b|\b\w*Error\b"
)


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
    trigger = int(min(share * window, window - max_output - 256))
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


def _spell_line(call: Mapping[str, Any], results: Mapping[Any, str]) -> str:
    arguments = json.dumps(call.get("arguments") or {}, ensure_ascii=False, default=str)
    outcome = results.get(call.get("call_id"), "")[:80]
    return f"- {call.get('spell')}({arguments[:120]}) → {outcome}"


def mechanical_summary(
    previous: str,
    messages: Sequence[Message],
    *,
    latest_request: str,
    quotes: int = 1200,
    budget: int | None = None,
) -> str:
    """A deterministic summary of ``messages``, merged into ``previous``.

    No model is consulted. Sections: the latest user request quoted verbatim, the
    other user messages (newest first, within ``quotes`` characters), ``Done:`` with
    one line per spell cast (its arguments and the first 80 characters of its result;
    the previous summary's lines first, numbering continued), and ``Key facts:``
    (identifiers found: paths, numbers with units, ids, error names). Past ``budget``
    characters the oldest cast lines give way to a count of those omitted, so the
    summary stays bounded however long the run.

    Args:
        previous: The summary so far (``""`` at the first compaction).
        messages: The stored messages the summary now also covers.
        latest_request: The latest user request, quoted verbatim.
        quotes: Characters of user messages quoted in all.
        budget: Most characters of the summary (``None``: unbounded); the task quote
            is always kept whole.

    Returns:
        The summary text, without its framing.
    """
    old = previous.splitlines()
    said = [line for line in old if line.startswith("User said: ")]
    said += [
        f"User said: {m.get('content') or ''}"
        for m in messages
        if m.get("role") == "user" and str(m.get("content") or "") != latest_request
    ]
    lines = [f"Task (verbatim): {latest_request}"]
    room = quotes
    for line in reversed(said):
        if room > 0:
            lines.append(line[: room + len("User said: ")])
            room -= len(line)
    results = {
        m.get("call_id"): str(m.get("content") or "") for m in messages if m.get("role") == "spell"
    }
    done = [line for line in old if line.startswith("- ")]
    done += [
        _spell_line(call, results)
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("spell_calls") or []
    ]
    omitted = sum(int(n) for n in re.findall(r"^\((\d+) earlier casts omitted\)$", previous, re.M))
    known = [line[len("Key facts: ") :] for line in old if line.startswith("Key facts: ")]
    text = "\n".join([*(str(m.get("content") or "") for m in messages), *done])
    found = [*(known[0].split(", ") if known and known[0] else [])]
    found += [match.group(0) for match in _IDENTIFIERS.finditer(text)]
    facts = list(dict.fromkeys(found))[-20:]
    while True:
        body = [*lines]
        if done or omitted:
            body.append("Done:")
            if omitted:
                body.append(f"({omitted} earlier casts omitted)")
            body.extend(done)
        if facts:
            body.append("Key facts: " + ", ".join(facts))
        summary = "\n".join(body)
        if budget is None or len(summary) <= budget or not (done or facts):
            return summary
        if done:
            done.pop(0)
            omitted += 1
        else:
            facts.pop(0)


_SUMMARISER_ROLE = (
    "You keep a short running summary of a conversation between a user and an assistant "
    "that uses tools. Update the previous summary with the new turns: keep what still "
    "holds, add what was done. Write these headings: Task (quote the user's latest "
    "request verbatim), Done, State, Open questions, Key facts. Write nothing else."
)


def _render_turns(messages: Sequence[Message]) -> str:
    lines = []
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "spell":
            lines.append(f"[result of {message.get('name')}] {content}")
            continue
        calls = message.get("spell_calls") or []
        named = "; ".join(
            f"{c.get('spell')}({json.dumps(c.get('arguments') or {}, default=str)})" for c in calls
        )
        lines.append(f"[{role}] {content}" + (f" [casts {named}]" if named else ""))
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Compaction:
    """How an Entity's transcript is compacted for small windows (``summon(compact=)``).

    Args:
        window: The Oracle's context window in tokens; ``None``: learnt from the
            server's overflow error, else :data:`DEFAULT_WINDOW`.
        at: Trigger as a fraction of the window (0.75 up to 64K, 0.5 above by default).
        keep_tail: Share of the window kept verbatim at the end.
        summarizer: The Oracle that writes the summary (usually a smaller one); ``None``
            writes it mechanically (deterministic, no model call).
        quotes: Characters of user messages quoted verbatim in a mechanical summary.
        max_output: Tokens kept free for the answer.
    """

    window: int | None = None
    at: float | None = None
    keep_tail: float = 0.2
    summarizer: Oracle | None = None
    quotes: int = 1200
    max_output: int = 512

    def __post_init__(self) -> None:
        if self.window is not None and self.window < 512:
            raise ValueError(f"compact window must be >= 512 tokens, not {self.window}")
        if self.at is not None and not 0.1 <= self.at <= 0.95:
            raise ValueError(f"compact at must be a fraction in [0.1, 0.95], not {self.at}")
        if not 0.05 <= self.keep_tail <= 0.6:
            raise ValueError(f"compact keep_tail must be in [0.05, 0.6], not {self.keep_tail}")

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
        self, previous: str, covered: Sequence[Message], latest: str, limits: Thresholds
    ) -> str:
        if self.summarizer is None:
            return mechanical_summary(
                previous,
                covered,
                latest_request=latest,
                quotes=self.quotes,
                budget=4 * limits.summary_hi,
            )
        prompt = (
            f"Previous summary:\n{previous or '(none)'}\n\nNew turns:\n{_render_turns(covered)}"
            f"\n\nThe user's latest request, to quote verbatim under Task:\n{latest}"
        )
        answer = await self.summarizer.generate(
            [{"role": "system", "content": _SUMMARISER_ROLE}, {"role": "user", "content": prompt}]
        )
        text = answer.text.strip()
        if f"{latest[:200]}" not in text:
            text = f"Task (verbatim): {latest}\n{text}"
        return text

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

        Counts one consultation against the back-off counters. Summariser failures
        are absorbed here (the view stays as it was, the back-off grows).

        Args:
            transcript: The stored messages.
            state: The ``compaction`` Conduit's value.
            fixed: Estimated tokens of what every request carries besides the
                messages (system prompt, spell schemas).
            forced: Compact whatever the size and the back-off (the server reported an
                overflow).
            writer: Where TranscriptCompacted / CompactionStalled Omens go.

        Returns:
            The new state (a fresh dict; equal to ``state`` when nothing changed).
        """
        new = dict(state)
        window = int(new.get("window") or self.window or DEFAULT_WINDOW)
        limits = thresholds(
            window, at=self.at, keep_tail=self.keep_tail, max_output=self.max_output
        )
        cooldown = int(new.get("cooldown") or 0)
        if not forced and (new.get("stalled") or cooldown > 0):
            if cooldown > 0:
                new["cooldown"] = cooldown - 1
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
        try:
            summary = await self._summarise(
                str(new.get("summary") or ""), transcript[start:cut], latest, limits
            )
        except OracleError:
            failures = int(new.get("failures") or 0) + 1
            new["failures"] = failures
            new["cooldown"] = _COOLDOWNS[min(failures, len(_COOLDOWNS)) - 1]
            return new
        old_view = estimate_tokens(self.view(transcript, state))
        new.update(summary=summary, covers_through=cut, failures=0, cooldown=0)
        new["count"] = int(new.get("count") or 0) + 1
        saved = old_view - estimate_tokens(self.view(transcript, new))
        weak = int(new.get("weak") or 0) + 1 if saved < _WEAK_SAVING * max(old_view, 1) else 0
        new["weak"] = weak
        if writer is not None:
            writer.emit(
                TranscriptCompacted(
                    covered=cut - _head_end(transcript),
                    saved_tokens=max(saved, 0),
                    summarizer=self.summarizer_name,
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

        Args:
            transcript: The stored messages.
            state: The ``compaction`` Conduit's value.
            ask: Sends a view (``list[Message]``) to the Oracle.
            fixed: Estimated tokens of the system prompt and spell schemas.
            writer: Where the Omens go.

        Returns:
            The answer and the new ``compaction`` state.

        Raises:
            ContextOverflowError: The server still reported an overflow after a forced
                compaction; names the window, the estimate and the fix.
            OracleError: Any other failure of the Oracle, as raised.
        """
        new = await self.compact(transcript, state, fixed=fixed, writer=writer)
        try:
            return await ask(self.view(transcript, new)), new
        except Exception as exc:
            fault = classify_oracle_fault(exc)
            if not fault.compact:
                raise
            learnt = fault.window or new.get("window") or self.window
            if learnt:
                new["window"] = int(learnt)
            first = exc
        new = await self.compact(transcript, new, fixed=fixed, forced=True, writer=writer)
        try:
            return await ask(self.view(transcript, new)), new
        except Exception as exc:
            if not classify_oracle_fault(exc).compact:
                raise
            window = new.get("window") or self.window or DEFAULT_WINDOW
            estimate = fixed + estimate_tokens(self.view(transcript, new))
            raise ContextOverflowError(
                f"the prompt still overflows the oracle's context window after compaction "
                f"(window {window} tokens, prompt ≈ {estimate} tokens). Likely fix: raise the "
                "window (num_ctx / n_ctx), lower compact keep_tail, or shorten the spell "
                "results.",
                endpoint=getattr(exc, "endpoint", None),
                status=getattr(exc, "status", None),
                body=getattr(exc, "body", ""),
                window=int(window),
                estimate=estimate,
            ) from first
