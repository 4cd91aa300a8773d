"""The summaries compaction writes: mechanically, or the request a summariser is sent.

Private to :mod:`sanctum.grimoire.compaction` (which exports :func:`mechanical_summary`).
The mechanical summary is deterministic — no model call — and pairs each spell call with
the results that follow its own assistant message, so servers that number calls per
answer (``call_0`` every turn) are summarised right.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sanctum.oracle.base import Message

__all__ = ["mechanical_summary", "summariser_request"]

_IDENTIFIERS = re.compile(
    r"(?:[\w.-]*/[\w./-]+)|\b\d+(?:\.\d+)?\s?(?:ms|s|KB|MB|GB|GiB|MiB|tokens|%)"
    r"|\b[A-Z]{2,}-\d+\b|\b[0-9a-f]{7,40}\b|\b\w*Error\b"
)


def _casts(messages: Sequence[Message]) -> list[tuple[Mapping[str, Any], str]]:
    """Each spell call of ``messages`` with its result, in order (``""``: none found).

    A call's result is looked for only among the spell messages right after its own
    assistant message: servers may number calls per answer (``call_0`` in every
    turn), so a call id names a result within one turn only; equal ids within a turn
    pair in order.
    """
    casts: list[tuple[Mapping[str, Any], str]] = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        replies: list[Message] = []
        for later in messages[index + 1 :]:
            if later.get("role") != "spell":
                break
            replies.append(later)
        for call in message.get("spell_calls") or []:
            found = next(
                (i for i, r in enumerate(replies) if r.get("call_id") == call.get("call_id")),
                None,
            )
            result = "" if found is None else str(replies.pop(found).get("content") or "")
            casts.append((call, result))
    return casts


def _spell_line(call: Mapping[str, Any], result: str) -> str:
    arguments = json.dumps(call.get("arguments") or {}, ensure_ascii=False, default=str)
    return f"- {call.get('spell')}({arguments[:120]}) → {result[:80]}"


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
    one line per spell cast (its arguments and the first 80 characters of its result,
    the result taken from the spell messages after the call's own assistant message;
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
    done = [line for line in old if line.startswith("- ")]
    done += [_spell_line(call, result) for call, result in _casts(messages)]
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


def summariser_request(previous: str, covered: Sequence[Message], latest: str) -> list[Message]:
    """The messages a summariser Oracle is sent: the previous summary and the new turns.

    Args:
        previous: The summary so far (``""`` at the first compaction).
        covered: The stored messages the summary now also covers.
        latest: The latest user request, which the summary must quote verbatim.

    Returns:
        A system message (the summariser's instructions) and one user message.
    """
    prompt = (
        f"Previous summary:\n{previous or '(none)'}\n\nNew turns:\n{_render_turns(covered)}"
        f"\n\nThe user's latest request, to quote verbatim under Task:\n{latest}"
    )
    return [{"role": "system", "content": _SUMMARISER_ROLE}, {"role": "user", "content": prompt}]
