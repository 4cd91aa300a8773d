"""The people view, fed real Omens, rendered on a deterministic console."""

from __future__ import annotations

from sanctum.api import RunResult
from sanctum.cli._view import RunView, aether_tree, short
from sanctum.omens.events import (
    CircleEchoed,
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
