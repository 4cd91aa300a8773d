"""The viewer's sections, each a function from a trace document to escaped HTML.

A trace may have been edited by hand or written by another version: every reader here
tolerates missing keys and wrong types (a wrong item is skipped, a wrong value shown as
text), and every value from the trace is escaped with :func:`sanctum.tracing._text.esc`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sanctum.tracing._text import compact_json, esc, fmt_duration, pretty_json, shorten

__all__ = [
    "SECTION_TITLES",
    "aether_section",
    "agent_section",
    "body_sections",
    "circles_section",
    "deltas_section",
    "rejections_section",
    "repairs_section",
    "retries_section",
    "seals_section",
    "sigil_stats",
    "spell_calls_section",
    "summary_section",
    "timeline_section",
    "tokens_section",
]

SECTION_TITLES: dict[str, str] = {
    "summary": "Summary",
    "graph": "Graph",
    "timeline": "Timeline",
    "deltas": "Deltas",
    "spell-calls": "Spell calls",
    "repairs": "Repairs",
    "rejections": "Rejections",
    "agent": "Agent",
    "retries": "Retries",
    "seals": "Seals",
    "tokens": "Tokens",
    "circles": "Circles",
    "aether": "Final Aether",
}
"""Section id -> heading, in page order (ids are the anchors of the navigation bar)."""

Doc = Mapping[str, Any]


def _list(doc: Doc, key: str) -> list[Mapping[str, Any]]:
    value = doc.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _section(key: str, body: str, *, count: int | None = None, nested: bool = False) -> str:
    title = SECTION_TITLES[key]
    badge = f' <span class="count">{count}</span>' if count is not None else ""
    ident = "" if nested else f' id="{key}"'
    level = "h3" if nested else "h2"
    return (
        f'<section{ident} class="section section-{key}">'
        f"<{level}>{title}{badge}</{level}>{body}</section>"
    )


def _empty(what: str) -> str:
    return f'<p class="empty">No {what} recorded.</p>'


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _json_block(value: Any, summary: str, *, open_: bool = False) -> str:
    flag = " open" if open_ else ""
    return (
        f"<details{flag}><summary>{summary}</summary>"
        f'<pre class="json">{esc(pretty_json(value))}</pre></details>'
    )


def _code(value: Any, limit: int = 400) -> str:
    text = value if isinstance(value, str) else compact_json(value)
    return f"<code>{esc(shorten(text, limit))}</code>"


def _sigil(value: Any) -> str:
    return f'<span class="sigil-name">{esc(value if value is not None else "—")}</span>'


def sigil_stats(doc: Doc) -> dict[str, dict[str, Any]]:
    """Per-Sigil totals over the timeline: runs, summed duration (s), last status.

    Args:
        doc: A trace document.

    Returns:
        ``{sigil: {"runs": int, "duration": float, "status": str}}``.
    """
    stats: dict[str, dict[str, Any]] = {}
    for step in _list(doc, "supersteps"):
        for entry in _list(step, "sigils"):
            name = str(entry.get("sigil"))
            stat = stats.setdefault(name, {"runs": 0, "duration": 0.0, "status": ""})
            stat["runs"] += 1
            stat["duration"] += _num(entry.get("duration")) or 0.0
            stat["status"] = str(entry.get("status", ""))
    return stats


def _superstep_count(steps: list[Any]) -> str:
    """How many supersteps ran, and how many ran again (a resumption re-runs one)."""
    numbers = {step.get("superstep") for step in steps if isinstance(step, Mapping)}
    again = len(steps) - len(numbers)
    return f"{len(numbers)} ({again} run again after a pause)" if again > 0 else str(len(steps))


def summary_section(doc: Doc) -> str:
    """Status, invocation, timing and counts; the interrupt or failure if any."""
    status = str(doc.get("status", "unknown"))
    status_class = status if status in _STATUSES else "unknown"
    rows = [
        ("Status", f'<span class="status status-{status_class}">{esc(status)}</span>'),
        ("Invocation", f"<code>{esc(doc.get('invocation_id') or '—')}</code>"),
        ("Duration", esc(fmt_duration(doc.get("duration")))),
        ("Supersteps", _superstep_count(_list(doc, "supersteps"))),
    ]
    if doc.get("resumed_from"):
        rows.append(("Resumed from Seal", f"<code>{esc(doc.get('resumed_from'))}</code>"))
    interrupt = doc.get("interrupt")
    if isinstance(interrupt, Mapping):
        rows.append(
            (
                "Interrupt",
                f"{_sigil(interrupt.get('sigil'))} {_code(interrupt.get('reason') or '')}"
                f" Seal <code>{esc(interrupt.get('seal_id') or '—')}</code>",
            )
        )
    failure = doc.get("failure")
    if isinstance(failure, Mapping):
        rows.append(
            (
                "Failure",
                f"{_sigil(failure.get('sigil'))} <code>{esc(failure.get('type') or '')}</code> "
                f"{_code(failure.get('message') or '')}",
            )
        )
    counts = doc.get("omen_counts")
    if isinstance(counts, Mapping) and counts:
        text = ", ".join(f"{esc(k)} {esc(v)}" for k, v in counts.items())
        rows.append(("Omens", text))
    body = "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"
    return _section("summary", body)


_STATUSES = frozenset({"completed", "interrupted", "failed", "incomplete"})
_SIGIL_STATUSES = frozenset(
    {"completed", "failed", "interrupted", "rejected", "aborted", "running"}
)


def timeline_section(doc: Doc, *, nested: bool = False) -> str:
    """One row per superstep, one bar per Sigil positioned by its start and duration."""
    steps = _list(doc, "supersteps")
    if not steps:
        return _section("timeline", _empty("supersteps"), nested=nested)
    rows = [_timeline_step(step) for step in steps]
    return _section("timeline", "".join(rows), count=len(steps), nested=nested)


def _timeline_step(step: Mapping[str, Any]) -> str:
    sigils = _list(step, "sigils")
    start = _num(step.get("started_at"))
    end = _num(step.get("ended_at"))
    starts = [s for s in (_num(e.get("started_at")) for e in sigils) if s is not None]
    ends = [s for s in (_num(e.get("ended_at")) for e in sigils) if s is not None]
    start = min([*starts, start] if start is not None else starts, default=0.0)
    end = max([*ends, end] if end is not None else ends, default=start)
    span = end - start
    frontier = step.get("frontier")
    frontier_text = ", ".join(str(f) for f in frontier) if isinstance(frontier, list) else ""
    lanes = []
    for entry in sigils:
        status = str(entry.get("status", ""))
        status_class = status if status in _SIGIL_STATUSES else "running"
        began = _num(entry.get("started_at"))
        duration = _num(entry.get("duration"))
        if span > 0 and began is not None:
            left = min(max((began - start) / span * 100, 0.0), 100.0)
            width = min(max((duration or 0.0) / span * 100, 0.6), 100.0 - left)
        else:
            left, width = 0.0, 100.0
        attempts = entry.get("attempts")
        extra = f" · {esc(attempts)} attempts" if isinstance(attempts, int) and attempts > 1 else ""
        lanes.append(
            f'<div class="lane" data-sigil="{esc(entry.get("sigil"))}">'
            f'<span class="lane-name">{esc(shorten(str(entry.get("sigil")), 40))}</span>'
            f'<span class="track"><span class="bar {status_class}" '
            f'style="left:{left:.2f}%;width:{max(width, 0.6):.2f}%"></span></span>'
            f'<span class="dur">{esc(fmt_duration(duration))} · {esc(status)}{extra}</span></div>'
        )
    return (
        f'<div class="step" data-superstep="{esc(step.get("superstep"))}">'
        f'<div class="step-head"><strong>Superstep {esc(step.get("superstep"))}</strong>'
        f" · {esc(fmt_duration(_num(step.get('duration'))))}"
        f' · <span class="frontier">frontier: {esc(frontier_text or "—")}</span></div>'
        f"{''.join(lanes)}</div>"
    )


def deltas_section(doc: Doc, *, nested: bool = False) -> str:
    """Every delta, collapsible, as indented JSON."""
    deltas = _list(doc, "deltas")
    if not deltas:
        return _section("deltas", _empty("deltas"), nested=nested)
    blocks = []
    for item in deltas:
        delta = item.get("delta")
        keys = ", ".join(str(k) for k in delta) if isinstance(delta, Mapping) else ""
        summary = (
            f"superstep {esc(item.get('superstep'))} · {_sigil(item.get('sigil'))}"
            f' · <span class="keys">{esc(shorten(keys, 120))}</span>'
        )
        blocks.append(_json_block(delta, summary))
    return _section("deltas", "".join(blocks), count=len(deltas), nested=nested)


def spell_calls_section(doc: Doc, *, nested: bool = False) -> str:
    """Spell calls with their arguments and results."""
    calls = _list(doc, "spell_calls")
    if not calls:
        return _section("spell-calls", _empty("spell calls"), nested=nested)
    rows = [
        [
            esc(c.get("superstep")),
            _sigil(c.get("sigil")),
            f"<strong>{esc(c.get('spell'))}</strong>",
            f"<code>{esc(c.get('call_id') or '—')}</code>",
            _arguments(c),
            f'<span class="call-{esc(c.get("status"))}">{esc(c.get("status"))}</span>',
            _code(c.get("result")),
        ]
        for c in calls
    ]
    headers = ["Superstep", "Sigil", "Spell", "Call id", "Arguments", "Status", "Result"]
    return _section("spell-calls", _table(headers, rows), count=len(calls), nested=nested)


def _arguments(call: Mapping[str, Any]) -> str:
    if "repaired" not in call:
        return _code(call.get("arguments"))
    return (
        f"{_code(call.get('cast_arguments'))}"
        f'<div class="repaired">repaired: {esc(call.get("repaired"))}'
        f"<br>as sent: {_code(call.get('arguments'))}</div>"
    )


def repairs_section(doc: Doc, *, nested: bool = False) -> str:
    """Spell calls mended locally (SpellCallRepaired)."""
    repairs = _list(doc, "repairs")
    if not repairs:
        return _section("repairs", _empty("repairs"), nested=nested)
    rows = [
        [
            esc(r.get("superstep")),
            _sigil(r.get("sigil")),
            f"<strong>{esc(r.get('spell'))}</strong>",
            esc(r.get("detail")),
            _code(r.get("raw")),
            _code(r.get("arguments")),
        ]
        for r in repairs
    ]
    headers = ["Superstep", "Sigil", "Spell", "Mend", "Raw text", "Arguments"]
    return _section("repairs", _table(headers, rows), count=len(repairs), nested=nested)


def rejections_section(doc: Doc, *, nested: bool = False) -> str:
    """Spell calls sent back for correction and deltas vetoed by a Ward."""
    rejections = _list(doc, "rejections")
    if not rejections:
        return _section("rejections", _empty("rejections"), nested=nested)
    rows = []
    for r in rejections:
        if r.get("kind") == "delta":
            what = f"delta vetoed by <strong>{esc(r.get('ward'))}</strong>"
        else:
            what = f"spell call <strong>{esc(r.get('spell'))}</strong> {_code(r.get('raw'))}"
        rows.append([esc(r.get("superstep")), _sigil(r.get("sigil")), what, _code(r.get("reason"))])
    table = _table(["Superstep", "Sigil", "What", "Reason"], rows)
    return _section("rejections", table, count=len(rejections), nested=nested)


_AGENT_OMENS = frozenset(
    {
        "OracleFellBack",
        "TranscriptCompacted",
        "CompactionStalled",
        "LoopGuardTripped",
        "TurnBudgetReached",
        "ApprovalRequested",
    }
)


def _agent_event(omen: Mapping[str, Any]) -> str:
    """What an agent-loop Omen says, in words (every value escaped)."""
    kind = omen.get("type")
    if kind == "OracleFellBack":
        source = f"<strong>{esc(omen.get('from_oracle'))}</strong>"
        answered = f"<strong>{esc(omen.get('to_oracle'))}</strong> answered"
        if omen.get("reason") == "benched":  # passed over, never asked
            return f"{source} skipped (benched); {answered}"
        status = omen.get("status")
        http = f", HTTP {esc(status)}" if status is not None else ""
        return f"{source} failed ({esc(omen.get('reason'))}{http}); {answered}"
    if kind == "TranscriptCompacted":
        forced = " (forced by an overflow)" if omen.get("forced") is True else ""
        return (
            f"summary by <strong>{esc(omen.get('summarizer'))}</strong> covers "
            f"{esc(omen.get('covered'))} messages, saves ≈ {esc(omen.get('saved_tokens'))} "
            f"tokens{forced}"
        )
    shown = {
        k: v
        for k, v in omen.items()
        if k not in ("type", "invocation_id", "superstep", "sigil", "timestamp")
    }
    return _code(shown)


def _consultations(doc: Doc) -> list[list[str]]:
    """One row per assistant message with usage in the deltas: who answered, tokens."""
    rows: list[list[str]] = []
    for item in _list(doc, "deltas"):
        delta = item.get("delta")
        for value in delta.values() if isinstance(delta, Mapping) else ():
            for message in value if isinstance(value, list) else ():
                usage = message.get("usage") if isinstance(message, Mapping) else None
                if not isinstance(usage, Mapping) or message.get("role") != "assistant":
                    continue
                fallback = usage.get("fallback")
                by = fallback.get("oracle") if isinstance(fallback, Mapping) else None
                rows.append(
                    [
                        esc(item.get("superstep")),
                        _sigil(item.get("sigil")),
                        esc(by or message.get("oracle") or "—"),
                        esc(usage.get("prompt_tokens", "—")),
                        esc(usage.get("cached_tokens", "—")),
                        esc(usage.get("completion_tokens", "—")),
                    ]
                )
    return rows


def agent_section(doc: Doc, *, nested: bool = False) -> str:
    """An agent loop's own decisions, and the token counts of each consultation.

    The decisions are the agent-mode Omens (fallbacks, compactions, guard, budget,
    approvals) kept in ``other_omens``; the counts are read from the assistant messages
    of the deltas: who answered, prompt tokens, prompt-cache hits, completion tokens.
    """
    events = [o for o in _list(doc, "other_omens") if o.get("type") in _AGENT_OMENS]
    consulted = _consultations(doc)
    if not events and not consulted:
        return _section("agent", _empty("agent events or consultations"), nested=nested)
    body = ""
    if events:
        rows = [
            [esc(o.get("superstep")), _sigil(o.get("sigil")), esc(o.get("type")), _agent_event(o)]
            for o in events
        ]
        body += _table(["Superstep", "Sigil", "Event", "What happened"], rows)
    if consulted:
        headers = ["Superstep", "Sigil", "Answered by", "Prompt tokens", "Cached", "Completion"]
        body += _table(headers, consulted)
    return _section("agent", body, count=len(events) + len(consulted), nested=nested)


def retries_section(doc: Doc, *, nested: bool = False) -> str:
    """Retries granted by Sigil policies (SigilRetried)."""
    retries = _list(doc, "retries")
    if not retries:
        return _section("retries", _empty("retries"), nested=nested)
    rows = [
        [
            esc(r.get("superstep")),
            _sigil(r.get("sigil")),
            esc(r.get("attempt")),
            esc(fmt_duration(_num(r.get("delay")))),
            _code(r.get("cause")),
        ]
        for r in retries
    ]
    table = _table(["Superstep", "Sigil", "Retry", "Backoff", "Cause"], rows)
    return _section("retries", table, count=len(retries), nested=nested)


def seals_section(doc: Doc, *, nested: bool = False) -> str:
    """Seals (checkpoints) written, with the pause marker."""
    seals = _list(doc, "seals")
    if not seals:
        return _section("seals", _empty("Seals"), nested=nested)
    rows = [
        [
            esc(s.get("superstep")),
            f"<code>{esc(s.get('seal_id'))}</code>",
            "interrupt" if s.get("interrupted") is True else "",
        ]
        for s in seals
    ]
    table = _table(["Superstep", "Seal id", "Note"], rows)
    return _section("seals", table, count=len(seals), nested=nested)


def tokens_section(doc: Doc, *, nested: bool = False) -> str:
    """Writer payloads (TokenEmitted), joined per Sigil and superstep."""
    tokens = _list(doc, "tokens")
    if not tokens:
        return _section("tokens", _empty("tokens"), nested=nested)
    grouped: dict[tuple[str, str], list[str]] = {}
    for t in tokens:
        payload = t.get("payload")
        text = payload if isinstance(payload, str) else pretty_json(payload)
        grouped.setdefault((str(t.get("superstep")), str(t.get("sigil"))), []).append(text)
    blocks = [
        f"<details><summary>superstep {esc(step)} · {_sigil(sigil)} · {len(parts)} tokens"
        f'</summary><pre class="tokens">{esc("".join(parts))}</pre></details>'
        for (step, sigil), parts in grouped.items()
    ]
    return _section("tokens", "".join(blocks), count=len(tokens), nested=nested)


def aether_section(doc: Doc) -> str:
    """The final Aether (state) when the Rite manifested."""
    aether = doc.get("final_aether")
    if aether is None:
        return _section("aether", '<p class="empty">The Rite did not manifest.</p>')
    return _section("aether", _json_block(aether, "final state", open_=True))


def circles_section(doc: Doc, *, depth: int = 0) -> str:
    """Nested traces of Circles (subgraphs), each with its own sections."""
    circles = _list(doc, "circles")
    nested = depth > 0
    if not circles:
        return _section("circles", _empty("Circles"), nested=nested)
    if depth >= 8:
        return _section("circles", '<p class="empty">Nested too deep to show.</p>', nested=True)
    blocks = []
    for circle in circles:
        trace = circle.get("trace")
        inner = trace if isinstance(trace, Mapping) else {}
        summary = (
            f"Circle <strong>{esc(circle.get('circle'))}</strong> in {_sigil(circle.get('sigil'))}"
            f" · superstep {esc(circle.get('superstep'))} · {esc(inner.get('status', '—'))}"
        )
        blocks.append(
            f'<details class="circle"><summary>{summary}</summary>'
            f"{body_sections(inner, depth=depth + 1)}</details>"
        )
    return _section("circles", "".join(blocks), count=len(circles), nested=nested)


def body_sections(doc: Doc, *, depth: int = 0) -> str:
    """Every section below the graph (used for the page and for nested Circles).

    Args:
        doc: A trace document (or a Circle's nested trace).
        depth: Nesting depth; nested sections carry no ``id``.

    Returns:
        The sections' HTML, in page order.
    """
    nested = depth > 0
    builders: list[Callable[..., str]] = [
        timeline_section,
        deltas_section,
        spell_calls_section,
        repairs_section,
        rejections_section,
        agent_section,
        retries_section,
        seals_section,
        tokens_section,
    ]
    html = "".join(build(doc, nested=nested) for build in builders)
    return html + circles_section(doc, depth=depth)
