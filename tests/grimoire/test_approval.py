"""Approvals before writes: the gate in summon's loop, and through an agent Circle."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum.aether import AetherSchema, Conduit, append, merge_dict
from sanctum.codex.memory import MemoryCodex
from sanctum.errors import Interrupt
from sanctum.grimoire import Tome, agent_sigil, spell, summon
from sanctum.oracle.base import OracleResponse, SpellCall
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.ritual import END, Ritual
from sanctum.ritual.mandate import Mandate

ASK = {"messages": [{"role": "user", "content": "Ticket T-7 asks to change its email."}]}
ALICE, CAROL = Mandate("alice", frozenset({"support"})), Mandate("carol", frozenset({"support"}))
DONE: list[tuple[str, str]] = []
READ: list[str] = []


@spell(access="read")
def read_ticket(ticket: str) -> str:
    """Read a ticket."""
    READ.append(ticket)
    return "change the invoice email to ap@acme.test"


@spell(access="write", roles=["support"])
def update_email(ticket: str, email: str, mandate: Mandate) -> str:
    """Save a ticket's invoice email."""
    DONE.append((email, mandate.principal))
    return "saved"


def responses() -> list[Any]:
    return [
        OracleResponse("", [SpellCall("read_ticket", {"ticket": "T-7"})]),
        OracleResponse("", [SpellCall("update_email", {"ticket": "T-7", "email": "ap@acme.test"})]),
        "Done.",
    ]


@pytest.fixture(autouse=True)
def _clean() -> None:
    DONE.clear()
    READ.clear()


async def paused(codex: MemoryCodex, script: list[Any] | None = None) -> tuple[Any, Interrupt]:
    oracle = ScriptedOracle(script or responses())
    rite = summon(oracle, Tome([read_ticket, update_email]), approve=["write"], codex=codex)
    with pytest.raises(Interrupt) as caught:
        await rite.ainvoke(ASK, invocation_id="t7", mandate=ALICE)
    return rite, caught.value


async def test_a_write_pauses_before_it_is_cast_and_the_seal_lists_it() -> None:
    codex = MemoryCodex()
    _, pause = await paused(codex)
    assert DONE == []
    assert READ == ["T-7"]
    assert pause.reason == 'Approve update_email(ticket="T-7", email="ap@acme.test") [2:call_2_1]?'
    seal = await codex.get("t7")
    assert seal is not None
    assert seal.interrupt is not None
    assert seal.aether["approvals"]["2:call_2_1"]["decision"] == "pending"
    assert seal.metadata["mandate_principal"] == "alice"


async def test_approve_casts_it_once_under_the_approver_s_mandate() -> None:
    codex = MemoryCodex()
    rite, _ = await paused(codex)
    decision = {"2:call_2_1": {"decision": "approve", "by": "carol"}}
    final = await rite.ainvoke(invocation_id="t7", updates={"approvals": decision}, mandate=CAROL)
    assert DONE == [("ap@acme.test", "carol")]
    assert final["messages"][-1]["content"] == "Done."
    assert final["approvals"]["2:call_2_1"]["decision"] == "approve"
    seal = await codex.get("t7")
    assert seal is not None
    assert seal.metadata["mandate_principal"] == "carol"


async def test_reject_reaches_the_model_as_a_spell_message() -> None:
    codex = MemoryCodex()
    rite, _ = await paused(codex)
    decision = {"2:call_2_1": {"decision": "reject", "reason": "wrong address", "by": "carol"}}
    final = await rite.ainvoke(invocation_id="t7", updates={"approvals": decision}, mandate=CAROL)
    assert DONE == []
    rejected = final["messages"][4]
    assert rejected["role"] == "spell"
    assert "rejected by carol: wrong address" in rejected["content"]
    assert final["messages"][-1]["content"] == "Done."


async def test_an_identical_reissue_after_a_rejection_is_rejected_without_asking() -> None:
    codex = MemoryCodex()
    again = OracleResponse(
        "", [SpellCall("update_email", {"email": "ap@acme.test", "ticket": "T-7"})]
    )
    script = [*responses()[:2], again, "Understood."]
    rite, _ = await paused(codex, script)
    decision = {"2:call_2_1": {"decision": "reject", "reason": "no", "by": "carol"}}
    final = await rite.ainvoke(invocation_id="t7", updates={"approvals": decision}, mandate=CAROL)
    assert DONE == []
    assert final["approvals"]["3:call_3_1"]["auto"] is True
    assert final["messages"][-1]["content"] == "Understood."


async def test_no_call_of_a_round_runs_before_the_decision() -> None:
    both = OracleResponse(
        "",
        [
            SpellCall("read_ticket", {"ticket": "T-7"}),
            SpellCall("update_email", {"ticket": "T-7", "email": "x@y"}),
        ],
    )
    codex = MemoryCodex()
    await paused(codex, [both, "Done."])
    assert READ == []
    assert DONE == []


async def test_an_agent_circle_resumes_where_it_paused() -> None:
    codex = MemoryCodex()
    oracle = ScriptedOracle(responses())
    schema = AetherSchema(
        {
            "messages": Conduit(reducer=append, type=list),
            "approvals": Conduit(reducer=merge_dict, type=dict),
            "answer": Conduit(type=str),
        }
    )
    ritual = Ritual(schema)
    ritual.add_sigil(
        "work",
        agent_sigil(
            oracle,
            Tome([read_ticket, update_email]),
            approve=["write"],
            prompt="Handle T-7.",
            output="answer",
        ),
    )
    ritual.set_entry_point("work").add_edge("work", END)
    rite = ritual.compile(codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({"messages": []}, invocation_id="c", mandate=ALICE)
    seal = await codex.get("c")
    assert seal is not None
    assert len(seal.aether["messages"]) == 4
    decision = {"2:call_2_1": {"decision": "approve", "by": "carol"}}
    final = await rite.ainvoke(invocation_id="c", updates={"approvals": decision}, mandate=CAROL)
    assert DONE == [("ap@acme.test", "carol")]
    assert READ == ["T-7"]
    assert final["answer"] == "Done."
    assert [m["role"] for m in final["messages"]] == [
        "user",
        "assistant",
        "spell",
        "assistant",
        "spell",
        "assistant",
    ]
    assert len(oracle.calls) == 3  # nothing was asked twice


async def test_an_approval_may_edit_the_arguments() -> None:
    codex = MemoryCodex()
    rite, _ = await paused(codex)
    edited = {"ticket": "T-7", "email": "billing@acme.test"}
    decision = {"2:call_2_1": {"decision": "approve", "by": "carol", "arguments": edited}}
    await rite.ainvoke(invocation_id="t7", updates={"approvals": decision}, mandate=CAROL)
    assert DONE == [("billing@acme.test", "carol")]
