"""Prompt layers: a system prompt frozen once, byte-identical prefixes, volatile text."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sanctum.aether import AetherSchema, Conduit, append, merge_dict
from sanctum.codex.memory import MemoryCodex
from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import Interrupt, SigilExecutionError
from sanctum.grimoire import PromptLayers, Tome, agent_sigil, spell, summon
from sanctum.grimoire.compaction import Compaction
from sanctum.grimoire.prompt_layers import SYSTEM_PROMPT, attach_volatile
from sanctum.omens import Omen, TranscriptCompacted
from sanctum.oracle import OracleResponse, ScriptedOracle, SpellCall
from sanctum.oracle.base import Message
from sanctum.ritual import END, Ritual

ROOT = Path(__file__).resolve().parents[2]
ASK = {"messages": [{"role": "user", "content": "What do the keys alpha and beta hold?"}]}
STABLE = "You are the archive's clerk.\nAnswer from the records only."


@spell(access="read")
def lookup(key: str) -> str:
    """Read one record of the archive."""
    return f"record {key}: " + "dusty ledger line " * 5


@spell(access="write")
def stamp(key: str) -> str:
    """Stamp a record as read."""
    return f"stamped {key}"


def script(keys: tuple[str, ...] = ("alpha", "beta", "gamma")) -> list[OracleResponse | str]:
    calls: list[OracleResponse | str] = [
        OracleResponse("", [SpellCall("lookup", {"key": key})]) for key in keys
    ]
    return [*calls, "alpha and beta hold dusty ledgers."]


class Counter:
    """A layer function that says how often it was rendered."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.count = 0

    def __call__(self, aether: Mapping[str, Any]) -> str:
        self.count += 1
        return f"{self.word} rendering {self.count}"


def raw(messages: list[Message]) -> str:
    """The bytes a request's messages amount to (key order included)."""
    return json.dumps(messages, ensure_ascii=False)


def prefix_breaks(requests: list[list[Message]]) -> int:
    """Consecutive requests where the earlier one, but its last message, is no prefix."""
    breaks = 0
    for before, after in itertools.pairwise(requests):
        if raw(after[: len(before) - 1]) != raw(before[:-1]):
            breaks += 1
    return breaks


def sent(oracle: ScriptedOracle) -> list[list[Message]]:
    return [messages for messages, _ in oracle.calls]


def layers(**kwargs: Any) -> PromptLayers:
    return PromptLayers(STABLE, **kwargs)


async def test_a_string_role_keeps_the_seed_shape_and_adds_no_conduit() -> None:
    oracle = ScriptedOracle(script())
    final = await summon(oracle, Tome([lookup]), "Be brief.").ainvoke(ASK)
    assert all(request[0] == {"role": "system", "content": "Be brief."} for request in sent(oracle))
    assert SYSTEM_PROMPT not in final
    assert oracle.calls[-1][0][1:] == final["messages"][:-1]


async def test_the_context_is_rendered_once_and_frozen_in_the_system_prompt_conduit() -> None:
    context = Counter("context")
    oracle = ScriptedOracle(script())
    final = await summon(oracle, Tome([lookup]), layers(context=context)).ainvoke(ASK)
    frozen = f"{STABLE}\n\ncontext rendering 1"
    assert context.count == 1
    assert len(oracle.calls) == 4
    assert {raw(request[:1]) for request in sent(oracle)} == {
        raw([{"role": "system", "content": frozen}])
    }
    assert final[SYSTEM_PROMPT] == frozen


async def test_every_request_is_a_byte_identical_prefix_of_the_next_but_its_last_message() -> None:
    volatile = Counter("volatile")
    oracle = ScriptedOracle(script())
    rite = summon(oracle, Tome([lookup]), layers(context=Counter("context"), volatile=volatile))
    await rite.ainvoke(ASK)
    requests = sent(oracle)
    assert len(requests) == 4
    assert prefix_breaks(requests) == 0
    assert all(len(after) > len(before) for before, after in itertools.pairwise(requests))
    assert volatile.count == 4  # rendered at each consultation


async def test_the_prefix_holds_in_prompted_mode_with_the_spell_section_in_the_system_prompt() -> (
    None
):
    cast = '<spell_call>\n{"spell": "lookup", "arguments": {"key": "KEY"}}\n</spell_call>'
    oracle = ScriptedOracle([cast.replace("KEY", "alpha"), cast.replace("KEY", "beta"), "Ledgers."])
    rite = summon(
        oracle,
        Tome([lookup, stamp]),
        layers(context=Counter("context"), volatile=Counter("volatile")),
        spell_calling="prompted",
    )
    final = await rite.ainvoke(ASK)
    requests = sent(oracle)
    assert [m["role"] for m in final["messages"]].count("spell") == 2
    assert prefix_breaks(requests) == 0
    system = {raw(request[:1]) for request in requests}
    assert len(system) == 1
    head = requests[0][0]["content"]
    assert head.startswith(f"{STABLE}\n\ncontext rendering 1")
    assert head.index("lookup") < head.index("stamp")  # the Tome's order
    assert all(m["role"] != "system" for request in requests for m in request[1:])


async def test_volatile_text_reaches_only_the_last_message_and_is_never_stored(
    tmp_path: Path,
) -> None:
    def volatile(aether: Mapping[str, Any]) -> str:
        return f"VOLATILE-MARK messages={len(aether['messages'])}"

    codex = SqliteCodex(tmp_path / "seals.db")
    oracle = ScriptedOracle(script())
    rite = summon(oracle, Tome([lookup]), layers(volatile=volatile), codex=codex)
    final = await rite.ainvoke(ASK, invocation_id="v")
    for request in sent(oracle):
        marked = [i for i, m in enumerate(request) if "VOLATILE-MARK" in str(m.get("content"))]
        assert marked == [len(request) - 1]
        assert request[-1]["content"].endswith(f"\n\nVOLATILE-MARK messages={len(request) - 1}")
    assert "VOLATILE-MARK" not in json.dumps(final)
    seals = await codex.list("v")
    assert len(seals) == 7  # four consultations, three rounds of spells
    assert all("VOLATILE-MARK" not in json.dumps(dict(seal.aether)) for seal in seals)
    await codex.aclose()


async def test_the_final_answer_is_sent_the_frozen_prompt_and_the_volatile_note() -> None:
    oracle = ScriptedOracle([*script(("alpha",))[:1], "Only alpha was read."])
    rite = summon(
        oracle,
        Tome([lookup]),
        layers(context=Counter("context"), volatile=lambda aether: "VOLATILE-MARK"),
        max_turns=1,
    )
    final = await rite.ainvoke(ASK)
    requests = sent(oracle)
    assert len(requests) == 2  # one turn, then the forced answer
    assert requests[0][0] == requests[1][0]
    assert prefix_breaks(requests) == 0
    assert requests[1][-1]["content"].endswith("\n\nVOLATILE-MARK")
    note = final["messages"][-2]
    assert note["synthetic"] == "budget"
    assert "VOLATILE-MARK" not in note["content"]


async def test_a_leading_system_message_of_the_transcript_joins_the_frozen_prompt() -> None:
    oracle = ScriptedOracle(script(("alpha",)))
    start = {"messages": [{"role": "system", "content": "Ledger room B."}, *ASK["messages"]]}
    await summon(oracle, Tome([lookup]), layers(context=lambda a: "Tier gold.")).ainvoke(start)
    for request in sent(oracle):
        assert request[0] == {
            "role": "system",
            "content": f"{STABLE}\n\nTier gold.\n\nLedger room B.",
        }
        assert [m["role"] for m in request].count("system") == 1


async def test_the_frozen_bytes_survive_time_travel_from_a_sqlite_seal(tmp_path: Path) -> None:
    path = tmp_path / "seals.db"
    first = ScriptedOracle(script())
    codex = SqliteCodex(path)
    rite = summon(first, Tome([lookup]), layers(context=Counter("first")), codex=codex)
    await rite.ainvoke(ASK, invocation_id="t")
    seals = await codex.list("t")
    await codex.aclose()
    branch = next(s for s in seals if s.frontier == ["oracle"] and len(s.aether["messages"]) == 3)

    again = ScriptedOracle(script()[1:])
    codex = SqliteCodex(path)  # a new store object over the same file
    rite = summon(again, Tome([lookup]), layers(context=Counter("second")), codex=codex)
    final = await rite.ainvoke(invocation_id="t", seal_id=branch.seal_id)
    await codex.aclose()
    assert len(again.calls) == 3
    assert {raw(request[:1]) for request in [*sent(first), *sent(again)]} == {
        raw([{"role": "system", "content": f"{STABLE}\n\nfirst rendering 1"}])
    }
    assert prefix_breaks(sent(again)) == 0
    assert final[SYSTEM_PROMPT] == f"{STABLE}\n\nfirst rendering 1"


def _worker(db: Path, log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.grimoire.layers_worker", str(db), str(log), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


def test_a_process_killed_mid_run_resumes_with_the_same_system_prompt(tmp_path: Path) -> None:
    db, log = tmp_path / "seals.db", tmp_path / "requests.jsonl"
    killed = _worker(db, log, "fresh", "--die-at", "2")
    assert killed.returncode == -9, killed.stderr
    resumed = _worker(db, log, "resume")
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout.split("FINAL ", 1)[1])
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    pids = [entry["pid"] for entry in entries]
    assert len(set(pids)) == 2
    assert pids.count(pids[0]) == 3  # killed at its third request
    requests = [entry["messages"] for entry in entries]
    frozen = f"You keep notes for the user.\n\nThis run was started by process {pids[0]}."
    assert {raw(request[:1]) for request in requests} == {
        raw([{"role": "system", "content": frozen}])
    }
    assert final[SYSTEM_PROMPT] == frozen
    assert final["messages"][-1]["content"] == "Done."
    assert prefix_breaks(requests) == 0  # the repeated request is the same bytes too


async def test_with_compaction_the_prefix_breaks_exactly_once_per_compaction() -> None:
    @spell
    def page(number: int) -> str:
        """Read one page of the manual."""
        return f"page {number}: " + "lorem ipsum dolor " * 90

    oracle = ScriptedOracle(
        [
            *[OracleResponse("", [SpellCall("page", {"number": n})]) for n in range(1, 9)],
            "Page 5.",
        ]
    )
    rite = summon(
        oracle,
        Tome([page]),
        layers(context=Counter("context"), volatile=Counter("volatile")),
        compact=Compaction(window=2048),
    )
    omens: list[Omen] = []
    async for omen in rite.astream(ASK, mode={"agent"}):
        omens.append(omen)
    compactions = [o for o in omens if isinstance(o, TranscriptCompacted)]
    assert compactions
    assert prefix_breaks(sent(oracle)) == len(compactions)
    assert len({raw(request[:1]) for request in sent(oracle)}) == 1


async def test_an_agent_sigil_renders_layers_from_the_outer_aether_and_keeps_them_paused() -> None:
    rendered: list[str] = []

    def context(aether: Mapping[str, Any]) -> str:
        rendered.append(str(aether["tier"]))
        return f"Customer tier: {aether['tier']}."

    oracle = ScriptedOracle(
        [
            OracleResponse("", [SpellCall("lookup", {"key": "alpha"})]),
            OracleResponse("", [SpellCall("stamp", {"key": "alpha"})]),
            "Alpha read and stamped.",
        ]
    )
    schema = AetherSchema(
        {
            "messages": Conduit(reducer=append, type=list),
            "approvals": Conduit(reducer=merge_dict, type=dict),
            "tier": Conduit(type=str),
            "answer": Conduit(type=str),
        }
    )
    ritual = Ritual(schema)
    ritual.add_sigil(
        "work",
        agent_sigil(
            oracle,
            Tome([lookup, stamp]),
            role=PromptLayers(STABLE, context=context, volatile=lambda a: f"Tier {a['tier']}"),
            approve=["write"],
            prompt="Read alpha and stamp it.",
            output="answer",
        ),
    )
    ritual.set_entry_point("work").add_edge("work", END)
    codex = MemoryCodex()
    rite = ritual.compile(codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({"messages": [], "tier": "silver"}, invocation_id="p")
    seal = await codex.get("p")
    assert seal is not None
    kept = seal.aether["approvals"]["loop"][SYSTEM_PROMPT]
    assert kept == f"{STABLE}\n\nCustomer tier: silver."
    decision = {"2:call_2_1": {"decision": "approve", "by": "carol"}}
    final = await rite.ainvoke(invocation_id="p", updates={"approvals": decision, "tier": "gold"})
    assert final["answer"] == "Alpha read and stamped."
    assert rendered == ["silver"]  # frozen across the pause, though the tier changed
    requests = sent(oracle)
    assert {raw(request[:1]) for request in requests} == {
        raw([{"role": "system", "content": kept}])
    }
    assert requests[0][-1]["content"].endswith("\n\nTier silver")
    assert requests[-1][-1]["content"].endswith("\n\nTier gold")  # volatile: each time


def test_attach_volatile_copies_and_leaves_an_empty_request_alone() -> None:
    request: list[Message] = [{"role": "user", "content": "hi"}]
    dressed = attach_volatile(request, "now")
    assert dressed == [{"role": "user", "content": "hi\n\nnow"}]
    assert request == [{"role": "user", "content": "hi"}]
    assert attach_volatile(request, "") is request
    assert attach_volatile([], "now") == []


def test_wrong_layer_types_are_refused_when_summoned() -> None:
    with pytest.raises(TypeError, match="stable must be a str"):
        PromptLayers(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="context must be a str, a function"):
        PromptLayers("x", context=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="role must be a str or PromptLayers"):
        summon(ScriptedOracle([]), None, ["not", "a", "role"])  # type: ignore[arg-type]


async def test_a_context_function_that_returns_no_text_fails_the_consultation() -> None:
    rite = summon(ScriptedOracle(["hi"]), None, PromptLayers("x", context=lambda a: None))  # type: ignore[arg-type,return-value]
    with pytest.raises(SigilExecutionError, match="context layer must render a str"):
        await rite.ainvoke(ASK)
