"""Hand-made Omen sequences for the tracing tests (no engine needed).

``sample_run()`` is one Invocation of the graph ``MANIFEST``: START fans out to
``plan`` and ``fetch``; ``fetch`` is retried once; ``plan`` asks for a spell call that
is repaired, ``act`` casts it; ``gate`` joins; the run ends with a Seal per superstep.
Timestamps are fixed so durations are exact.
"""

from __future__ import annotations

from typing import Any

from sanctum.omens import (
    CircleEchoed,
    Omen,
    RiteBegan,
    RiteManifested,
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

INV = "inv-1"
T0 = 1_700_000_000.0

MANIFEST: dict[str, Any] = {
    "sigils": ["plan", "fetch", "act", "gate"],
    "edges": {"__start__": ["plan", "fetch"], "plan": ["act"], "fetch": ["gate"], "act": ["gate"]},
    "conditional_edges": {"gate": ["plan", "__end__"]},
    "joins": ["gate"],
    "entry": ["plan", "fetch"],
}

CALL = {"spell": "add", "arguments": {"a": 1, "b": 2}, "call_id": "c1"}


def sample_run() -> list[Omen]:
    """The Omens of the sample Invocation, in emission order."""
    s1, s2, s3 = T0 + 1, T0 + 2, T0 + 3
    return [
        RiteBegan(invocation_id=INV, timestamp=T0),
        SuperstepBegan(invocation_id=INV, superstep=1, frontier=("plan", "fetch"), timestamp=s1),
        SigilBegan(invocation_id=INV, superstep=1, sigil="plan", timestamp=s1),
        SigilBegan(invocation_id=INV, superstep=1, sigil="fetch", timestamp=s1),
        TokenEmitted(payload="thin", invocation_id=INV, superstep=1, sigil="plan", timestamp=s1),
        TokenEmitted(payload="king", invocation_id=INV, superstep=1, sigil="plan", timestamp=s1),
        SigilRetried(
            invocation_id=INV,
            superstep=1,
            sigil="fetch",
            attempt=1,
            cause="TimeoutError()",
            delay=0.25,
            timestamp=s1 + 0.1,
        ),
        SigilCompleted(
            invocation_id=INV,
            superstep=1,
            sigil="plan",
            delta={"messages": [{"role": "assistant", "content": "", "spell_calls": [CALL]}]},
            duration=0.2,
            timestamp=s1 + 0.2,
        ),
        SigilCompleted(
            invocation_id=INV,
            superstep=1,
            sigil="fetch",
            delta={"page": "<p>fetched</p>"},
            duration=0.5,
            timestamp=s1 + 0.5,
        ),
        SuperstepCompleted(invocation_id=INV, superstep=1, aether={}, timestamp=s1 + 0.5),
        SealWritten(invocation_id=INV, superstep=1, seal_id="seal-1", timestamp=s1 + 0.6),
        SuperstepBegan(invocation_id=INV, superstep=2, frontier=("act",), timestamp=s2),
        SigilBegan(invocation_id=INV, superstep=2, sigil="act", timestamp=s2),
        SpellCallRepaired(
            spell="add",
            detail="closed a missing brace",
            call_id="c1",
            raw='{"a": 1, "b": 2',
            arguments={"a": 1, "b": 2},
            invocation_id=INV,
            superstep=2,
            sigil="act",
            timestamp=s2 + 0.01,
        ),
        SpellCallRejected(
            spell="divide",
            reason="unknown spell 'divide'",
            raw="divide(1, 0)",
            invocation_id=INV,
            superstep=2,
            sigil="act",
            timestamp=s2 + 0.02,
        ),
        SigilCompleted(
            invocation_id=INV,
            superstep=2,
            sigil="act",
            delta={"messages": [{"role": "spell", "name": "add", "call_id": "c1", "content": "3"}]},
            duration=0.1,
            timestamp=s2 + 0.1,
        ),
        SuperstepCompleted(invocation_id=INV, superstep=2, aether={}, timestamp=s2 + 0.1),
        SealWritten(invocation_id=INV, superstep=2, seal_id="seal-2", timestamp=s2 + 0.2),
        SuperstepBegan(invocation_id=INV, superstep=3, frontier=("gate",), timestamp=s3),
        SigilBegan(invocation_id=INV, superstep=3, sigil="gate", timestamp=s3),
        SigilCompleted(
            invocation_id=INV,
            superstep=3,
            sigil="gate",
            delta={"done": True},
            duration=0.05,
            timestamp=s3 + 0.05,
        ),
        SuperstepCompleted(invocation_id=INV, superstep=3, aether={}, timestamp=s3 + 0.05),
        SealWritten(invocation_id=INV, superstep=3, seal_id="seal-3", timestamp=s3 + 0.1),
        RiteManifested(
            invocation_id=INV,
            superstep=3,
            aether={"done": True, "page": "<p>fetched</p>"},
            timestamp=s3 + 0.2,
        ),
    ]


def echoed(circle: str, sigil: str, superstep: int, omens: list[Omen]) -> list[Omen]:
    """Wrap inner Omens as a Circle sigil echoes them."""
    return [
        CircleEchoed(circle=circle, omen=o, invocation_id=INV, superstep=superstep, sigil=sigil)
        for o in omens
    ]


def interrupted_run() -> list[Omen]:
    """A run paused by ``approve`` in superstep 2 (an interrupt Seal numbered 1)."""
    return [
        RiteBegan(invocation_id=INV, timestamp=T0),
        SuperstepBegan(invocation_id=INV, superstep=1, frontier=("draft",), timestamp=T0 + 1),
        SigilBegan(invocation_id=INV, superstep=1, sigil="draft", timestamp=T0 + 1),
        SigilCompleted(
            invocation_id=INV,
            superstep=1,
            sigil="draft",
            delta={"draft": "hi"},
            timestamp=T0 + 1.5,
        ),
        SealWritten(invocation_id=INV, superstep=1, seal_id="seal-1", timestamp=T0 + 1.6),
        SuperstepBegan(invocation_id=INV, superstep=2, frontier=("approve",), timestamp=T0 + 2),
        SigilBegan(invocation_id=INV, superstep=2, sigil="approve", timestamp=T0 + 2),
        SealWritten(
            invocation_id=INV,
            superstep=1,
            seal_id="seal-pause",
            interrupted=True,
            timestamp=T0 + 2.1,
        ),
    ]
