"""The trace document: what a ``.sanctum-trace.json`` file holds, and how it is built.

Format (``"format": "sanctum-trace"``, ``"version": 2``) — one JSON object::

    {
      "format": "sanctum-trace", "version": 2,
      "invocation_id": str | null, "resumed_from": seal_id | null,
      "status": "completed" | "interrupted" | "failed" | "incomplete",
      "started_at": epoch s | null, "ended_at": epoch s | null, "duration": s | null,
      "graph": {"sigils": [...], "edges": {src: [dst]}, "conditional_edges": {...},
                "joins": [...], "entry": [...]} | null,
      "timeline":    {"rows": n, "names": [...], "superstep": hex, "sigil": hex,
                      "began": hex, "ended": hex, "delta": [...], "status": {...},
                      "attempts": {...}},
      "retries":     [{"superstep", "sigil", "attempt", "cause", "delay", "timestamp"}],
      "repairs":     [{"superstep", "sigil", "spell", "call_id", "detail", "raw",
                       "arguments", "timestamp"}],
      "rejections":  [{"kind": "spell", "superstep", "sigil", "spell", "call_id",
                       "reason", "raw", "timestamp"}
                      | {"kind": "delta", "superstep", "sigil", "ward", "reason",
                         "timestamp"}],
      "seals":       [{"superstep", "seal_id", "interrupted", "timestamp"}],
      "tokens":      [{"superstep", "sigil", "payload", "timestamp"}],
      "interrupt": {"sigil", "reason", "seal_id", "superstep"} | null,
      "failure":   {"type", "message", "sigil"} | null,
      "final_aether": {...} | null,
      "omen_counts": {omen class name: n},
      "other_omens": [{"type", ...fields}],
      "circles": [{"circle", "sigil", "superstep", "trace": {...same keys, no
                   format/version, graph null...}}]
    }

The ``timeline`` holds one row per Sigil execution, in the order they began, stored
column by column (:mod:`sanctum.tracing.timeline` describes the columns): the superstep,
the Sigil, when it began and ended (integer epoch nanoseconds), the delta
it returned (null unless it completed), its status and attempts. The rows are the whole
timeline: a superstep is the run of consecutive rows with the same number (a repeated
Sigil name starts a new one, as when a resumption re-runs it); it began when its first
Sigil did and ended when its last Sigil ended. This columnar form is what keeps
recording cheap (no object per event, no number printed one by one); :func:`expand`
turns it into the readable form every reader uses.

Sigil ``status`` is ``completed``, ``rejected`` (a Ward vetoed the delta), ``failed``,
``interrupted`` (the Sigil that paused — or every unfinished Sigil of the paused
superstep while the culprit is unknown), ``aborted`` (cancelled with its superstep, or
left behind by a resumption) or ``running`` (still running when the trace was written).
``interrupt`` describes the last pause even when a resumption (with the same recorder)
later completed the Invocation; ``status`` says how the Invocation ended.

The expanded form (:func:`expand`, returned by ``TraceRecorder.build()`` and
``load_trace``) replaces ``timeline`` with::

      "supersteps": [{"superstep": n, "frontier": [names], "started_at", "ended_at",
                      "duration", "sigils": [{"sigil", "started_at", "ended_at",
                      "duration", "status", "attempts", "delta_keys"}]}],
      "deltas":      [{"superstep", "sigil", "timestamp", "delta"}],
      "spell_calls": [{"superstep", "sigil", "spell", "call_id", "arguments", "status",
                       "result", "result_sigil", "result_superstep",
                       "repaired"?, "cast_arguments"?}],

Durations are seconds, timestamps epoch seconds. Spell calls come from the deltas:
assistant messages' ``spell_calls`` entries, matched with ``role: "spell"`` (or
``"tool"``) result messages by ``call_id`` — or by Spell name, in order, when the id
is missing. Version 1 files (which stored the expanded form) are still read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sanctum.errors import Interrupt
from sanctum.tracing.journal import Chronicle
from sanctum.tracing.timeline import TimelineRow, decode_frontiers, decode_rows, encode_rows
from sanctum.wards._jsonable import jsonable

__all__ = [
    "READABLE_VERSIONS",
    "TRACE_FORMAT",
    "TRACE_VERSION",
    "assemble",
    "continue_trace",
    "expand",
    "extract_spell_calls",
    "upgrade",
]

TRACE_FORMAT = "sanctum-trace"
"""The value of a trace document's ``format`` key."""

TRACE_VERSION = 2
"""The trace document version this sanctum writes."""

READABLE_VERSIONS = (1, 2)
"""The trace document versions this sanctum reads."""

Entry = dict[str, Any]

_NS = 1e9


def assemble(
    chronicle: Chronicle,
    *,
    graph: Mapping[str, Any] | None,
    error: BaseException | None = None,
) -> dict[str, Any]:
    """Build the trace document of one chronicle (and its Circles, recursively).

    The document shares the chronicle's list of deltas (no copy: it is meant to be
    written out, or expanded, at once).

    Args:
        chronicle: What the recorder captured.
        graph: The Rite's manifest (already JSON data), or None when unknown.
        error: The exception that ended the Invocation, if the caller knows it (an
            ``Interrupt`` makes the status ``interrupted``, anything else ``failed``).

    Returns:
        The trace document (JSON data, version 2), keys as in this module's docstring.
    """
    body = _body(chronicle, error)
    return {"format": TRACE_FORMAT, "version": TRACE_VERSION, "graph": graph, **body}


def _body(chronicle: Chronicle, error: BaseException | None) -> dict[str, Any]:
    interrupt = _interrupt(chronicle, error)
    failure = None if error is None or isinstance(error, Interrupt) else _failure(error)
    if failure is not None:
        status = "failed"
        chronicle.settle_failure(failure.get("sigil"))
    elif chronicle.manifested:
        status = "completed"
    elif interrupt is not None:
        status = "interrupted"
    else:
        status = "incomplete"
    ended_at = chronicle.ended_at if chronicle.manifested else chronicle.latest_at()
    started_at = chronicle.started_at
    return {
        "invocation_id": chronicle.invocation_id,
        "resumed_from": chronicle.resumed_from,
        "status": status,
        "started_at": started_at,
        "ended_at": ended_at,
        "duration": None if started_at is None or ended_at is None else ended_at - started_at,
        "timeline": chronicle.timeline.encode(),
        "retries": list(chronicle.retries),
        "repairs": list(chronicle.repairs),
        "rejections": list(chronicle.rejections),
        "seals": list(chronicle.seals),
        "tokens": list(chronicle.tokens),
        "interrupt": interrupt,
        "failure": failure,
        "final_aether": chronicle.final_aether,
        "omen_counts": chronicle.counts(),
        "other_omens": list(chronicle.others),
        "circles": [
            {
                "circle": child.circle,
                "sigil": child.outer_sigil,
                "superstep": child.outer_superstep,
                "trace": {"graph": None, **_body(child, None)},
            }
            for child in chronicle.children.values()
        ],
    }


def _interrupt(chronicle: Chronicle, error: BaseException | None) -> Entry | None:
    if isinstance(error, Interrupt):
        chronicle.note_pause(
            getattr(error, "sigil", None),
            getattr(error, "reason", str(error)),
            getattr(error, "seal_id", None),
        )
    return dict(chronicle.pause) if chronicle.pause is not None else None


def _failure(error: BaseException) -> Entry:
    from sanctum.codex.claims import user_traceback

    sigil = getattr(error, "sigil", None)
    trace = user_traceback(error)
    return {
        "type": type(error).__name__,
        "message": jsonable(str(error)),
        "sigil": jsonable(sigil) if sigil is not None else None,
        "traceback": jsonable(trace) if trace is not None else None,
    }


# ---------------------------------------------------------------------- expanding
def expand(document: Mapping[str, Any]) -> dict[str, Any]:
    """The readable form of a trace document: supersteps, deltas and spell calls.

    Accepts a version 2 document (its ``timeline`` rows are turned into ``supersteps``
    and ``deltas``; ``spell_calls`` are paired from the deltas) or an already expanded
    one (returned as a shallow copy). Malformed rows — a hand-edited or truncated file —
    are skipped, never trusted.

    Args:
        document: A trace document (or a Circle's ``trace`` body).

    Returns:
        A new dict; the input is not modified.
    """
    expanded = _with_circles(document, expand)
    if "timeline" not in document:
        return expanded
    timeline = document.get("timeline")
    supersteps, deltas = _unroll(decode_rows(timeline), decode_frontiers(timeline))
    expanded.pop("timeline", None)
    expanded["supersteps"] = supersteps
    expanded["deltas"] = deltas
    expanded["spell_calls"] = extract_spell_calls(
        deltas, _all_repairs(expanded), _all_repairs(expanded, "rejections")
    )
    return expanded


def _unroll(
    rows: list[TimelineRow], frontiers: dict[int, list[str]]
) -> tuple[list[Entry], list[Entry]]:
    supersteps: list[Entry] = []
    deltas: list[Entry] = []
    step: Entry | None = None
    names: set[str] = set()
    first: int = 0
    last: int | None = None  # the current superstep's span, in epoch nanoseconds
    announced = False
    for row, (number, sigil, began, ended, delta, status, attempts) in enumerate(rows):
        started_at = began / _NS
        ended_at = None if ended is None else ended / _NS
        if step is None or step["superstep"] != number or sigil in names or row in frontiers:
            announced = row in frontiers
            step = {
                "superstep": number,
                "frontier": list(frontiers[row]) if announced else [],
                "started_at": started_at,
                "ended_at": None,
                "duration": None,
                "sigils": [],
            }
            supersteps.append(step)
            names = set()
            first, last = began, None
        names.add(sigil)
        if not announced:
            step["frontier"].append(sigil)
        step["sigils"].append(
            {
                "sigil": sigil,
                "started_at": started_at,
                "ended_at": ended_at,
                "duration": None if ended is None else max(ended - began, 0) / _NS,
                "status": status,
                "attempts": attempts,
                "delta_keys": sorted(str(key) for key in delta)
                if isinstance(delta, Mapping)
                else [],
            }
        )
        if ended is not None and (last is None or ended > last):
            last = ended
            step["ended_at"] = ended_at
            step["duration"] = max(ended - first, 0) / _NS
        if status == "completed":
            deltas.append(
                {
                    "superstep": number,
                    "sigil": sigil,
                    "timestamp": ended_at,
                    # a copy: the recorder may share one object between rows (the
                    # empty delta), and a reader may change what it is given
                    "delta": dict(delta) if isinstance(delta, dict) else delta,
                }
            )
    return supersteps, deltas


def _with_circles(
    document: Mapping[str, Any], convert: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """A shallow copy of ``document`` whose Circles' traces went through ``convert``."""
    copied = dict(document)
    circles = document.get("circles")
    if isinstance(circles, list):
        copied["circles"] = [
            {**item, "trace": convert(item["trace"])}
            if isinstance(item, Mapping) and isinstance(item.get("trace"), Mapping)
            else item
            for item in circles
        ]
    return copied


def upgrade(document: Mapping[str, Any]) -> dict[str, Any]:
    """A version 1 document (readable form stored) as version 2; others as they are.

    Used when a resumed run continues a trace file written by an earlier sanctum: the
    supersteps and deltas become timeline rows (times rounded to the nanosecond), the
    derived ``spell_calls`` are dropped (they are paired again when read). Circles'
    traces are upgraded too.

    Args:
        document: A trace document (or a Circle's ``trace`` body).

    Returns:
        A new dict; the input is not modified.
    """
    upgraded = _with_circles(document, upgrade)
    if "timeline" in document or document.get("version", 1) not in (1, None):
        return upgraded
    found: dict[tuple[Any, Any], list[Any]] = {}
    for entry in document.get("deltas") or []:
        if isinstance(entry, Mapping):
            key = (entry.get("superstep"), entry.get("sigil"))
            found.setdefault(key, []).append(entry.get("delta"))
    rows: list[TimelineRow] = []
    frontiers: dict[int, list[str]] = {}
    steps = document.get("supersteps")
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, Mapping) or not isinstance(step.get("superstep"), int):
            continue
        number = step["superstep"]
        entries = [e for e in step.get("sigils") or [] if isinstance(e, Mapping)]
        names = [str(e.get("sigil")) for e in entries]
        frontier = [str(n) for n in step.get("frontier") or []]
        if frontier and frontier != names:
            frontiers[len(rows)] = frontier
        for entry, name in zip(entries, names, strict=True):
            began = _epoch_ns(entry.get("started_at"))
            if began is None:
                continue
            status = str(entry.get("status") or "completed")
            deltas = found.get((number, name)) or []
            delta = deltas.pop(0) if status == "completed" and deltas else None
            attempts = entry.get("attempts")
            rows.append(
                (
                    number,
                    name,
                    began,
                    _epoch_ns(entry.get("ended_at")),
                    delta,
                    status,
                    attempts if isinstance(attempts, int) and attempts > 0 else 1,
                )
            )
    for readable in ("supersteps", "deltas", "spell_calls"):
        upgraded.pop(readable, None)
    upgraded["version"] = TRACE_VERSION
    upgraded["timeline"] = encode_rows(rows, frontiers)
    return upgraded


def _epoch_ns(seconds: Any) -> int | None:
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        try:
            return round(seconds * 1e9)
        except (OverflowError, ValueError):
            return None
    return None


def _all_repairs(document: Mapping[str, Any], key: str = "repairs") -> list[Entry]:
    """A document's ``repairs`` (or ``rejections``), then its Circles' (a Circle's calls
    reach the outer delta)."""
    repairs = document.get(key)
    found = (
        [dict(r) for r in repairs if isinstance(r, Mapping)] if isinstance(repairs, list) else []
    )
    circles = document.get("circles")
    for item in circles if isinstance(circles, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("trace"), Mapping):
            found.extend(_all_repairs(item["trace"], key))
    return found


def extract_spell_calls(
    deltas: list[Entry], repairs: list[Entry] | None = None, rejections: list[Entry] | None = None
) -> list[Entry]:
    """Pair the spell calls in the deltas' messages with their results and repairs.

    Args:
        deltas: Trace delta entries (``{"superstep", "sigil", "delta"}``), in order.
        repairs: Trace repair entries; a call whose ``call_id`` matches one gets
            ``"repaired": detail`` and ``"cast_arguments"`` (the mended arguments).
        rejections: Trace rejection entries; a call whose ``call_id`` matches a spell
            rejection was never cast: ``status`` ``rejected`` (its result is the
            correction sent back to the model).

    Returns:
        One entry per requested call (``status`` ``ok``, ``error``, ``rejected`` or
        ``pending``), plus one per result message that matched no call (``arguments``
        null).
    """
    calls = _pair_calls(deltas)
    mended = {str(r["call_id"]): r for r in repairs or [] if r.get("call_id") is not None}
    refused = {
        str(r["call_id"])
        for r in rejections or []
        if r.get("kind") == "spell" and r.get("call_id") is not None
    }
    for call in calls:
        key = str(call["call_id"]) if call["call_id"] is not None else None
        repair = mended.get(key) if key is not None else None
        if repair is not None:
            call["repaired"] = repair.get("detail")
            call["cast_arguments"] = repair.get("arguments")
        if key is not None and key in refused and call["status"] != "pending":
            call["status"] = "rejected"
    return calls


def _pair_calls(deltas: list[Entry]) -> list[Entry]:
    calls: list[Entry] = []
    by_id: dict[str, Entry] = {}
    by_name: dict[str, list[Entry]] = {}
    for item in deltas:
        for message in _messages(item.get("delta")):
            role = message.get("role")
            if role == "assistant" and isinstance(message.get("spell_calls"), list):
                for call in message["spell_calls"]:
                    if isinstance(call, Mapping):
                        record = _call_record(item, call)
                        calls.append(record)
                        if record["call_id"] is not None:
                            by_id[str(record["call_id"])] = record
                        by_name.setdefault(str(record["spell"]), []).append(record)
            elif role in ("spell", "tool"):
                matched = _match(message, by_id, by_name)
                if matched is None:
                    matched = _call_record(item, {"spell": message.get("name"), "arguments": None})
                    matched["call_id"] = message.get("call_id")
                    calls.append(matched)
                _attach_result(matched, item, message)
    return calls


def _messages(delta: Any) -> list[Mapping[str, Any]]:
    if not isinstance(delta, Mapping):
        return []
    found: list[Mapping[str, Any]] = []
    for value in delta.values():
        if isinstance(value, Mapping) and "role" in value:
            found.append(value)
        elif isinstance(value, list):
            found.extend(m for m in value if isinstance(m, Mapping) and "role" in m)
    return found


def _call_record(item: Mapping[str, Any], call: Mapping[str, Any]) -> Entry:
    spell = call.get("spell", call.get("name"))
    return {
        "superstep": item.get("superstep"),
        "sigil": item.get("sigil"),
        "spell": "" if spell is None else str(spell),
        "call_id": call.get("call_id", call.get("id")),
        "arguments": call.get("arguments"),
        "status": "pending",
        "result": None,
        "result_sigil": None,
        "result_superstep": None,
    }


def _match(
    message: Mapping[str, Any], by_id: dict[str, Entry], by_name: dict[str, list[Entry]]
) -> Entry | None:
    call_id = message.get("call_id")
    if call_id is not None:
        record = by_id.get(str(call_id))
        if record is not None and record["status"] == "pending":
            return record
    for record in by_name.get(str(message.get("name")), []):
        if record["status"] == "pending" and (call_id is None or record["call_id"] is None):
            return record
    return None


def _attach_result(record: Entry, item: Mapping[str, Any], message: Mapping[str, Any]) -> None:
    failed = bool(message.get("error") or message.get("is_error"))
    record["status"] = "error" if failed else "ok"
    record["result"] = message.get("content")
    record["result_sigil"] = item.get("sigil")
    record["result_superstep"] = item.get("superstep")


_APPENDED = (
    "retries",
    "repairs",
    "rejections",
    "seals",
    "tokens",
    "other_omens",
    "circles",
)


def continue_trace(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """Join the trace of a resumed run onto the trace of the run it resumed.

    Used when a resumption (another process, another recorder) writes to the file that
    already holds the earlier part of the same Invocation: the timelines and every
    recorded list are concatenated in order, Omen counts added up, and the ending (``status``,
    ``failure``, ``final_aether``) is the resumed run's. ``interrupt`` keeps the latest
    pause on record; ``resumed_from`` stays the first run's.

    Args:
        previous: The version 2 trace document already on disk (same ``invocation_id``).
        current: The resumed run's version 2 trace document.

    Returns:
        A new trace document; neither input is modified.
    """
    merged: dict[str, Any] = dict(current)
    earlier = decode_rows(previous.get("timeline"))
    later = decode_rows(current.get("timeline"))
    frontiers = decode_frontiers(previous.get("timeline"))
    for row, names in decode_frontiers(current.get("timeline")).items():
        frontiers[row + len(earlier)] = names
    merged["timeline"] = encode_rows([*earlier, *later], frontiers)
    for key in _APPENDED:
        before = previous.get(key)
        after = current.get(key)
        merged[key] = [
            *(before if isinstance(before, list) else []),
            *(after if isinstance(after, list) else []),
        ]
    counts: dict[str, int] = {}
    for source in (previous.get("omen_counts"), current.get("omen_counts")):
        if isinstance(source, Mapping):
            for name, n in source.items():
                if isinstance(n, int):
                    counts[str(name)] = counts.get(str(name), 0) + n
    merged["omen_counts"] = counts
    merged["resumed_from"] = previous.get("resumed_from")
    merged["graph"] = current.get("graph") or previous.get("graph")
    merged["interrupt"] = current.get("interrupt") or previous.get("interrupt")
    started = previous.get("started_at")
    if isinstance(started, (int, float)):
        merged["started_at"] = started
        ended = current.get("ended_at")
        if isinstance(ended, (int, float)):
            merged["duration"] = max(0.0, float(ended) - float(started))
    return merged
