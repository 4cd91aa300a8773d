"""The people view, fed real Omens, rendered on a deterministic console."""

from __future__ import annotations

import re

from sanctum.api import RunResult
from sanctum.cli._common import printable
from sanctum.cli._view import RunView, _LiveLine, aether_tree, short
from sanctum.omens.events import (
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
    SuperstepCompleted,
    TokenEmitted,
)
from tests.cli.render import console, text_of

INV = "0123abcd"


def _two_supersteps() -> list[object]:
    return [
        RiteBegan(invocation_id=INV, timestamp=100.0),
        SuperstepBegan(invocation_id=INV, superstep=1, frontier=("draft",), timestamp=100.0),
        SigilBegan(invocation_id=INV, superstep=1, sigil="draft", timestamp=100.0),
        TokenEmitted(payload="Dear ", sigil="draft", invocation_id=INV, superstep=1),
        TokenEmitted(payload="Ada", sigil="draft", invocation_id=INV, superstep=1),
        SigilRetried(
            invocation_id=INV,
            superstep=1,
            sigil="draft",
            attempt=1,
            cause="TimeoutError()",
            delay=0.1,
        ),
        SpellCallRepaired(spell="lookup", detail="closed a brace", sigil="draft"),
        SpellCallRejected(spell="nope", reason="no spell named nope", sigil="draft"),
        SigilCompleted(
            invocation_id=INV,
            superstep=1,
            sigil="draft",
            delta={"reply": "Dear Ada"},
            timestamp=100.25,
        ),
        SuperstepCompleted(
            invocation_id=INV, superstep=1, aether={"reply": "Dear Ada"}, timestamp=100.5
        ),
        SuperstepBegan(invocation_id=INV, superstep=2, frontier=("approve",), timestamp=100.5),
        SigilBegan(invocation_id=INV, superstep=2, sigil="approve", timestamp=100.5),
        SealWritten(
            invocation_id=INV, superstep=1, seal_id="seal9", interrupted=True, timestamp=100.6
        ),
    ]


def test_paused_run_golden() -> None:
    target = console()
    view = RunView(modes=["updates"], console=target)
    for omen in _two_supersteps():
        view.omen(omen)  # type: ignore[arg-type]
    view.finish(
        RunResult(
            status="paused",
            invocation_id=INV,
            aether={"reply": "Dear Ada", "tags": ["a", "b"], "meta": {"n": 1}},
            reason="Send it?",
            sigil="approve",
            seal_id="seal9",
        )
    )
    assert text_of(target) == (
        "  draft │ Dear Ada\n"
        "  ↻ draft: retry 1 in 0.10s after TimeoutError()\n"
        "  ✚ repaired spell call lookup: closed a brace\n"
        "  ✗ rejected spell call nope: no spell named nope\n"
        '  draft → {"reply": "Dear Ada"}\n'
        "✓ superstep 1  draft  500.0ms\n"
        "⏸ superstep 2  approve  paused\n"
        "Aether\n"
        '├── reply = "Dear Ada"\n'
        '├── tags = ["a", "b"]\n'
        "└── meta\n"
        "    └── n = 1\n"
        "⏸ paused at approve  invocation 0123abcd\n"
        "reason: Send it?\n"
        "resume with: sanctum resume --invocation 0123abcd\n"
        "  (add --update KEY=VALUE to answer; see `sanctum resume --help`)\n"
    )


def test_values_mode_draws_the_aether_after_each_superstep() -> None:
    target = console()
    view = RunView(modes=["values"], console=target)
    view.omen(SuperstepBegan(invocation_id=INV, superstep=1, frontier=("a",), timestamp=1.0))
    view.omen(SuperstepCompleted(invocation_id=INV, superstep=1, aether={"x": 1}, timestamp=2.0))
    assert text_of(target) == ("✓ superstep 1  a  1.00s\nAether after superstep 1\n└── x = 1\n")


def test_failed_run_marks_the_open_superstep() -> None:
    target = console()
    view = RunView(console=target)
    view.omen(SuperstepBegan(invocation_id=INV, superstep=1, frontier=("a", "b"), timestamp=1.0))
    view.finish(RunResult(status="failed", invocation_id=INV, aether={}, error="boom"))
    assert text_of(target) == (
        "✗ superstep 1  a, b  failed\nAether\n└── (empty)\n✗ failed  invocation 0123abcd\n"
    )


def test_circle_tokens_are_shown_with_the_circle_name() -> None:
    target = console()
    view = RunView(console=target)
    view.omen(SuperstepBegan(invocation_id=INV, superstep=1, frontier=("c",), timestamp=1.0))
    inner = TokenEmitted(payload="hi", sigil="inner", invocation_id="x", superstep=1)
    view.omen(CircleEchoed(circle="sub", omen=inner, sigil="c"))
    view.omen(SuperstepCompleted(invocation_id=INV, superstep=1, aether={}, timestamp=1.5))
    assert text_of(target) == "  sub/inner │ hi\n✓ superstep 1  c  500.0ms\n"


def test_omens_mode_lists_every_lifecycle_omen() -> None:
    target = console()
    view = RunView(modes=["omens"], console=target)
    view.omen(RiteBegan(invocation_id=INV, timestamp=1.0))
    view.omen(SuperstepBegan(invocation_id=INV, superstep=1, frontier=("a",), timestamp=1.0))
    out = text_of(target)
    assert "· RiteBegan superstep=0 resumed_from=null" in out
    assert '· SuperstepBegan superstep=1 frontier=["a"]' in out


def test_short_cuts_long_values() -> None:
    assert short("x" * 500, 10) == '"xxxxxxxx…'
    assert short({"a": 1}) == '{"a": 1}'


def test_long_lists_become_branches() -> None:
    target = console()
    target.print(aether_tree({"messages": [{"role": "user", "content": "hi"}]}))
    assert text_of(target) == (
        "Aether\n"
        "└── messages [1]\n"
        "    └── [0]\n"
        '        ├── role = "user"\n'
        '        └── content = "hi"\n'
    )


_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""Control characters, less the newline that ends each printed line."""

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x9b1m\x7f"
"""An OSC window title, a screen clear, a C1 CSI and DEL."""
E = "\\u001b]0;PWNED\\u0007\\u001b[2J\\u009b1m\\u007f"
"""How :data:`HOSTILE` is printed."""


def test_control_characters_and_markup_in_run_data_print_escaped() -> None:
    target = console(width=400)
    view = RunView(modes=["updates", "values", "omens"], console=target)
    sigil = f"s{HOSTILE}[bold]"
    for omen in (
        RiteBegan(invocation_id=INV, resumed_from=f"seal{HOSTILE}", timestamp=1.0),
        SuperstepBegan(invocation_id=INV, superstep=1, frontier=(sigil, "[/]"), timestamp=1.0),
        SigilBegan(invocation_id=INV, superstep=1, sigil=sigil, timestamp=1.0),
        TokenEmitted(payload=f"tok{HOSTILE}\nen", sigil=sigil, invocation_id=INV, superstep=1),
        SigilRetried(sigil=sigil, attempt=1, cause=f"[/]{HOSTILE}", delay=0.0),
        SpellCallRepaired(spell=f"sp{HOSTILE}", detail=HOSTILE, sigil=sigil),
        SpellCallRejected(spell=f"sp{HOSTILE}", reason=HOSTILE, sigil=sigil),
        DeltaRejected(sigil=sigil, ward=f"[red]W{HOSTILE}", reason=HOSTILE),
        SigilCompleted(invocation_id=INV, superstep=1, sigil=sigil, delta={HOSTILE: HOSTILE}),
        SuperstepCompleted(
            invocation_id=INV, superstep=1, aether={f"[bold]{HOSTILE}": 1}, timestamp=1.5
        ),
    ):
        view.omen(omen)
    view.finish(
        RunResult(
            status="paused",
            invocation_id=f"inv{HOSTILE}",
            aether={"out": {f"k{HOSTILE}": f"v{HOSTILE}", "[/]": 1}},
            reason=f"why{HOSTILE}\nsecond line",
            sigil=sigil,
        )
    )
    out = text_of(target)
    assert _CONTROL.findall(out) == []
    lines = out.splitlines()
    for expected in (
        f"resuming from seal seal{E}",
        f"  s{E}[bold] │ tok{E}",
        "en",  # a streamed newline stays a line break
        f"  ↻ s{E}[bold]: retry 1 in 0.00s after [/]{E}",
        f"  ✚ repaired spell call sp{E}: {E}",
        f"  ✗ rejected spell call sp{E}: {E}",
        f"  ✗ [red]W{E} vetoed the delta of s{E}[bold]: {E}",
        f'  s{E}[bold] → {{"{E}": "{E}"}}',
        f"✓ superstep 1  s{E}[bold], [/]  500.0ms",
        f"└── [bold]{E} = 1",
        f'    ├── k{E} = "v{E}"',
        "    └── [/] = 1",
        f"⏸ paused at s{E}[bold]  invocation inv{E}",
        f"reason: why{E}",
        "second line",
        f"resume with: sanctum resume --invocation 'inv{E}'",
    ):
        assert expected in lines, expected
    assert f'· SigilBegan superstep=1 sigil="s{E}[bold]"' in lines


def test_the_live_line_shows_names_and_tokens_escaped() -> None:
    view = RunView(console=console())
    view.omen(SuperstepBegan(invocation_id=INV, superstep=1, frontier=("a",), timestamp=1.0))
    view.omen(SigilBegan(invocation_id=INV, superstep=1, sigil=f"a{HOSTILE}", timestamp=1.0))
    view.omen(TokenEmitted(payload=f"x{HOSTILE}\ny", sigil=f"a{HOSTILE}"))
    assert view.token_tail() == f"a{E} │ x{E} y"
    target = console(width=400)
    target.print(_LiveLine(view))
    assert f"superstep 1  a{E}  " in text_of(target)
    assert _CONTROL.findall(text_of(target)) == []
    view.stop()


def test_printable_escapes_c0_del_and_c1_but_keeps_lines_when_asked() -> None:
    assert printable("a\x1b[2Jb") == "a\\u001b[2Jb"
    assert printable("\x00\x7f\x80\x9f\xa0é") == "\\u0000\\u007f\\u0080\\u009f\xa0é"
    assert printable("one\ntwo\tthree\r") == "one\\ntwo\\tthree\\r"
    assert printable("one\ntwo\tthree\r", lines=True) == "one\ntwo\tthree\\r"
    assert printable("[bold]x[/]") == "[bold]x[/]"
    assert printable(7) == "7"
    assert short({"k": "v\x9b\x7f\x1b"}) == '{"k": "v\\u009b\\u007f\\u001b"}'


def test_omens_mode_lists_the_omens_of_the_omens_stream_mode_only() -> None:
    target = console()
    view = RunView(modes=["omens"], console=target)
    view.omen(SuperstepBegan(invocation_id=INV, superstep=1, frontier=("a",), timestamp=1.0))
    view.omen(TokenEmitted(payload="tok", sigil="a"))
    view.omen(SuperstepCompleted(invocation_id=INV, superstep=1, aether={}, timestamp=2.0))
    view.omen(SealWritten(invocation_id=INV, superstep=1, seal_id="s1", timestamp=2.0))
    dotted = [line for line in text_of(target).splitlines() if line.startswith("· ")]
    assert [line.split()[1] for line in dotted] == ["SuperstepBegan", "SealWritten"]
