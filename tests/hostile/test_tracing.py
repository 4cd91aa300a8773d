"""Hostile input for the trace viewer and recorder: nothing from a trace becomes markup.

Every text a trace carries — deltas, Sigil and Spell names, arguments, results, model
output, reasons, ids, Circle names, even keys and statuses of a hand-edited file — is
shown as text: no element, attribute, handler or URL it holds reaches the DOM.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sanctum.errors import Interrupt
from sanctum.omens import (
    CircleEchoed,
    DeltaRejected,
    RiteBegan,
    SealWritten,
    SigilBegan,
    SigilCompleted,
    SigilRetried,
    SpellCallRejected,
    SpellCallRepaired,
    SuperstepBegan,
    TokenEmitted,
)
from sanctum.tracing import TraceRecorder, render_trace
from sanctum.tracing.sections import SECTION_TITLES
from tests.tracing.htmlcheck import Parsed, parse

PAYLOADS = [
    "<script>document.title='PWNED'</script>",
    "</svg><svg onload=alert(1)>",
    "<style>*{display:none}</style>",
    '" onmouseover="alert(1)" x="',
    "' onfocus='alert(1)' autofocus='",
    "<img src=x onerror=alert(1)>",
    "</title><script>alert(1)</script>",
    "</textarea></pre></details><iframe src=javascript:alert(1)>",
    "<!-- --!><script>alert(1)</script>",
    "]]><script>alert(1)</script>",
    '<a href="javascript:alert(1)">x</a>',
    "<link rel=stylesheet href=//evil.example/x.css>",
    "<meta http-equiv=refresh content=0;url=//evil.example>",
    "<base href=//evil.example/>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
]
ALL = "".join(PAYLOADS)


def _assert_inert(page: Parsed, invocation: str) -> None:
    assert page.count("script") == 0
    assert page.count("style") == 1
    assert page.count("svg") == 1
    for tag in ("img", "iframe", "link", "base", "a", "math", "mglyph", "textarea"):
        count = page.count(tag)
        expected = len(SECTION_TITLES) if tag == "a" else 0  # the navigation bar's links
        assert count == expected, tag
    assert page.count("meta") == 4  # charset, CSP, viewport, referrer
    assert page.event_handlers == []
    assert all(url.startswith("#") for url in page.urls)
    titles = [t for t in page.text if t.startswith("sanctum trace · ")]
    assert titles[0] == f"sanctum trace · {invocation}"


def _shown(page: Parsed, payload: str) -> bool:
    text = page.all_text
    return payload in text or json.dumps(payload)[1:-1] in text


async def test_every_recorded_field_is_escaped(tmp_path: Path) -> None:
    name = PAYLOADS[1]
    recorder = TraceRecorder(tmp_path / "t.json")
    recorder.on_compile(
        {
            "sigils": [name, "b"],
            "edges": {"__start__": [name], name: ["b"], "b": ["__end__"]},
            "conditional_edges": {name: ["*"]},
        }
    )
    inv = PAYLOADS[0]
    for omen in [
        RiteBegan(invocation_id=inv),
        SuperstepBegan(invocation_id=inv, superstep=1, frontier=(name, *PAYLOADS)),
        SigilBegan(invocation_id=inv, superstep=1, sigil=name),
        SigilRetried(invocation_id=inv, superstep=1, sigil=name, attempt=1, cause=ALL),
        TokenEmitted(payload=ALL, invocation_id=inv, superstep=1, sigil=name),
        SpellCallRepaired(
            spell=ALL,
            detail=ALL,
            call_id=ALL,
            raw=ALL,
            arguments={ALL: ALL},
            superstep=1,
            sigil=name,
        ),
        SpellCallRejected(spell=ALL, reason=ALL, raw=ALL, superstep=1, sigil=name),
        SigilCompleted(
            invocation_id=inv,
            superstep=1,
            sigil=name,
            delta={
                ALL: ALL,
                "messages": [
                    {
                        "role": "assistant",
                        "content": ALL,
                        "spell_calls": [
                            {"spell": ALL, "arguments": {ALL: PAYLOADS}, "call_id": ALL}
                        ],
                    },
                    {"role": "spell", "name": ALL, "call_id": ALL, "content": ALL},
                ],
            },
        ),
        DeltaRejected(invocation_id=inv, superstep=1, sigil="b", ward=ALL, reason=ALL),
        CircleEchoed(
            circle=ALL,
            sigil=name,
            superstep=1,
            omen=SigilCompleted(invocation_id=ALL, superstep=1, sigil=ALL, delta={ALL: ALL}),
        ),
        SealWritten(invocation_id=inv, superstep=1, seal_id=ALL, interrupted=True),
    ]:
        await recorder.on_omen(omen)
    trace = recorder.flush(Interrupt(ALL, sigil=name, seal_id=ALL))
    html = render_trace(trace).read_text(encoding="utf-8")
    page = parse(html)
    _assert_inert(page, inv)
    for payload in PAYLOADS:
        assert _shown(page, payload), payload
    assert "http" not in html.replace("http-equiv=refresh", "")


def _hand_edited() -> dict[str, Any]:
    evil = ALL
    return {
        "format": "sanctum-trace",
        "version": 1,
        "invocation_id": "hand-edited",
        "status": evil,
        "duration": evil,
        "resumed_from": evil,
        "graph": {
            "sigils": [evil],
            "edges": {evil: [evil, "__end__"]},
            "conditional_edges": {evil: ["*", evil]},
            "joins": [evil],
            "entry": [evil],
        },
        "supersteps": [
            {
                "superstep": evil,
                "frontier": [evil],
                "started_at": evil,
                "duration": evil,
                "sigils": [{"sigil": evil, "status": evil, "attempts": evil, "duration": evil}],
            }
        ],
        "deltas": [{"superstep": evil, "sigil": evil, "delta": {evil: [evil]}}],
        "spell_calls": [
            {
                "spell": evil,
                "call_id": evil,
                "arguments": evil,
                "status": evil,
                "result": evil,
                "repaired": evil,
                "cast_arguments": evil,
            }
        ],
        "retries": [
            {"superstep": evil, "sigil": evil, "attempt": evil, "delay": evil, "cause": evil}
        ],
        "repairs": [{"spell": evil, "detail": evil, "raw": evil, "arguments": evil}],
        "rejections": [
            {"kind": "delta", "ward": evil, "reason": evil},
            {"kind": evil, "spell": evil, "raw": evil},
        ],
        "seals": [{"superstep": evil, "seal_id": evil, "interrupted": evil}],
        "tokens": [{"superstep": evil, "sigil": evil, "payload": {evil: evil}}],
        "interrupt": {"sigil": evil, "reason": evil, "seal_id": evil},
        "failure": {"type": evil, "message": evil, "sigil": evil},
        "final_aether": {evil: evil},
        "omen_counts": {evil: evil},
        "circles": [
            {
                "circle": evil,
                "sigil": evil,
                "superstep": evil,
                "trace": {"status": evil, "deltas": [{"sigil": evil, "delta": evil}]},
            }
        ],
    }


def test_a_hand_edited_trace_cannot_inject_anything(tmp_path: Path) -> None:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(_hand_edited()), encoding="utf-8")
    page = parse(render_trace(path).read_text(encoding="utf-8"))
    _assert_inert(page, "hand-edited")
    for payload in PAYLOADS:
        assert _shown(page, payload), payload


def test_odd_characters_and_deep_values_still_render(tmp_path: Path) -> None:
    deep: Any = "bottom"
    for _ in range(400):
        deep = [deep]
    path = tmp_path / "odd.json"
    document = {
        "format": "sanctum-trace",
        "version": 1,
        "invocation_id": "odd\x00\ud800",
        "deltas": [
            {"sigil": "\u202e\x1b[31m", "delta": {"deep": deep, "nul": "a\x00b", "lone": "\udfff"}}
        ],
        "supersteps": [
            {
                "superstep": 1,
                "started_at": float("nan"),
                "duration": float("inf"),
                "sigils": [{"sigil": "x", "started_at": -1e308, "duration": 1e308}],
            }
        ],
    }
    path.write_text(json.dumps(document), encoding="utf-8")  # NaN/Infinity tokens included
    out = render_trace(path)
    html = out.read_bytes().decode("utf-8")  # valid UTF-8 despite the lone surrogates
    assert "bottom" in html
    assert parse(html).count("script") == 0


@pytest.mark.parametrize("depth", [50_000, 1_000_000])
def test_pathologically_nested_trace_files_are_refused_cleanly(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "nested.json"
    path.write_text(
        '{"format": "sanctum-trace", "version": 1, "x": ' + "[" * depth, encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"nested\.json"):
        render_trace(path)


async def test_a_redacting_recorder_keeps_secrets_out_of_trace_and_viewer(
    tmp_path: Path,
) -> None:
    from sanctum.wards import RedactWard

    secret = "sk-" + "S3cr3t" * 5
    ward = RedactWard([r"sk-[A-Za-z0-9]{20,}"])
    recorder = TraceRecorder(tmp_path / "t.json", redact=ward.redact)
    await recorder.on_omen(RiteBegan(invocation_id="i"))
    await recorder.on_omen(TokenEmitted(payload=f"token {secret}", sigil="s", superstep=1))
    await recorder.on_omen(
        SpellCallRepaired(
            spell="login", detail="mended", raw=f'{{"key": "{secret}"', sigil="s", superstep=1
        )
    )
    trace = recorder.flush(Interrupt(f"paste {secret}?", sigil="s"))
    html = render_trace(trace)
    for path in (trace, html):
        text = path.read_text(encoding="utf-8")
        assert secret not in text
        assert "[REDACTED]" in text
