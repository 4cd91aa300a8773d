"""A real Invocation for the tracing tests: fan-out, a retry, repaired spell calls, a
Circle, an interrupt — and hostile text in deltas, Sigil names and spell arguments.

``START`` fans out to ``plan``, ``fetch`` (fails once, then retried), ``agent`` (a
Circle running a ``summon`` Entity whose scripted Oracle garbles its spell call, so the
repair layer mends it) and the hostile-named ``PROBE``. ``plan`` asks for a spell call;
``act`` emits a SpellCallRepaired through its writer plus tokens and answers the call;
``gate`` joins everything and pauses with ``interrupt()`` until ``approved`` arrives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sanctum import END, START, Interrupt, Rite, Ritual, SigilPolicy, circle, interrupt
from sanctum.codex.memory import MemoryCodex
from sanctum.grimoire import Tome, spell, summon
from sanctum.omens import SpellCallRepaired, Writer
from sanctum.oracle.base import OracleResponse, SpellCall
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.tracing import TraceRecorder

INVOCATION = "inv-browser"
SENTINEL = "PWNED"
HOSTILE: dict[str, str] = {
    "script": f"<script>document.title='{SENTINEL}';"
    f"document.documentElement.setAttribute('data-pwned','1')</script>",
    "svg": f"</svg><svg onload=\"document.title='{SENTINEL}'\"><text>x</text>",
    "style": "<style>body{display:none !important}</style>",
    "attr": f'" onmouseover="document.title=\'{SENTINEL}\'" data-x="',
    "img": f"<img src=x onerror=\"document.title='{SENTINEL}'\">",
    "comment": "<!-- --><script>document.title='PWNED'</script>",
}
PROBE = "<i>probe</i>\" onclick=\"document.title='PWNED'"
SIGILS = ("plan", "fetch", "agent", "act", "gate", PROBE)


@spell
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def _plan(aether: dict[str, Any]) -> dict[str, Any]:
    call = {"spell": "add", "arguments": {"a": 1, "b": 2, "note": HOSTILE["attr"]}, "call_id": "c1"}
    return {
        "messages": [{"role": "assistant", "content": HOSTILE["script"], "spell_calls": [call]}],
        "notes": [HOSTILE["svg"], HOSTILE["style"]],
    }


def _fetcher() -> Any:
    attempts = {"n": 0}

    async def fetch(aether: dict[str, Any]) -> dict[str, Any]:
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise ConnectionError(f"flaky source {HOSTILE['img']}")
        return {"page": HOSTILE["img"], "comment": HOSTILE["comment"]}

    return fetch


def _act(aether: dict[str, Any], writer: Writer) -> dict[str, Any]:
    writer.emit(
        SpellCallRepaired(
            spell="add",
            detail="closed a missing brace",
            call_id="c1",
            raw='{"a": 1, "b": 2',
            arguments={"a": 1, "b": 2},
        )
    )
    for token in ("<scr", "ipt>", "thinking"):
        writer(token)
    return {"messages": [{"role": "spell", "name": "add", "call_id": "c1", "content": "3"}]}


def _probe(aether: dict[str, Any]) -> dict[str, Any]:
    return {"probe": HOSTILE["script"]}


def _gate(aether: dict[str, Any]) -> dict[str, Any]:
    if not aether.get("approved"):
        interrupt(f"Approve? {HOSTILE['script']}")
    return {"done": True}


def _agent() -> Rite:
    garbled = SpellCall("add", {"__malformed_json__": '{"a": 2, "b": 3'}, "k1")
    oracle = ScriptedOracle(
        [
            OracleResponse(spell_calls=[garbled], usage={"prompt_tokens": 5}),
            OracleResponse(text="5", usage={"prompt_tokens": 7}),
        ]
    )
    return summon(oracle, Tome([add]))


def build_rite(recorder: TraceRecorder) -> Rite:
    """Compile the sample Ritual with ``recorder`` attached and a MemoryCodex."""
    ritual = Ritual()
    ritual.add_sigil("plan", _plan)
    ritual.add_sigil("fetch", _fetcher(), SigilPolicy(retries=2, backoff=lambda attempt: 0.01))
    ritual.add_sigil("agent", circle("agent", _agent()))
    ritual.add_sigil(PROBE, _probe)
    ritual.add_sigil("act", _act)
    ritual.add_sigil("gate", _gate, join="all")
    for name in ("plan", "fetch", "agent", PROBE):
        ritual.add_edge(START, name)
    ritual.add_edge("plan", "act")
    for name in ("act", "fetch", "agent", PROBE):
        ritual.add_edge(name, "gate")
    ritual.add_conditional_edge("gate", lambda aether: END, {END: END})
    return ritual.compile(codex=MemoryCodex(), wards=[recorder])


async def run_until_interrupt(trace_path: Path) -> tuple[Rite, TraceRecorder, Interrupt]:
    """Perform the Invocation until ``gate`` pauses; flush and return the pieces."""
    recorder = TraceRecorder(trace_path)
    rite = build_rite(recorder)
    try:
        await rite.ainvoke(
            {"messages": [{"role": "user", "content": "1+2?"}]}, invocation_id=INVOCATION
        )
    except Interrupt as pause:
        recorder.flush(pause)
        return rite, recorder, pause
    raise AssertionError("the gate should have paused the Invocation")
