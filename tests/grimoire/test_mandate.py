"""Identity from the host (Mandate) and access levels with roles, through summon."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.grimoire import Tome, spell, summon
from sanctum.grimoire.spell import injected_parameters
from sanctum.oracle.base import OracleResponse, SpellCall
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.ritual import Ritual
from sanctum.ritual.mandate import PRINCIPAL_KEY, Mandate, current_mandate

ASK = {"messages": [{"role": "user", "content": "Change the invoice email of T-7."}]}
ALICE = Mandate(
    "alice", frozenset({"support"}), subject={"ticket": "T-7"}, attrs={"tenant": "acme"}
)
BOB = Mandate("bob")
SEEN: list[Any] = []


def call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> OracleResponse:
    return OracleResponse("", [SpellCall(name, arguments, call_id)])


@spell(access="read")
def read_ticket(ticket: str) -> str:
    """Read a ticket."""
    return f"{ticket}: please change the invoice email to ap@acme.test"


@spell(access="write", roles=["support"])
def update_email(ticket: str, email: str, mandate: Mandate) -> str:
    """Change a ticket's invoice email."""
    SEEN.append((ticket, email, mandate.principal))
    return "saved"


@spell(access="read")
def whoami(mandate: Mandate) -> str:
    """Say who the run acts for."""
    SEEN.append(mandate.principal)
    return mandate.principal


def desk() -> Tome:
    return Tome([read_ticket, update_email, whoami])


@pytest.fixture(autouse=True)
def _clean() -> None:
    SEEN.clear()


def test_the_mandate_parameter_is_left_out_of_the_schema() -> None:
    assert update_email.parameters["properties"].keys() == {"ticket", "email"}
    assert update_email.parameters["required"] == ["ticket", "email"]
    assert whoami.parameters == {"type": "object", "properties": {}, "required": []}
    assert injected_parameters(update_email.fn) == ("mandate",)
    assert (update_email.access, update_email.roles) == ("write", frozenset({"support"}))


def test_unlabeled_spells_count_as_write_and_bad_labels_are_refused() -> None:
    @spell
    def shout(text: str) -> str:
        return text.upper()

    assert shout.access is None
    assert shout.level == "write"
    with pytest.raises(ValueError, match="access must be one of read, propose, write"):
        spell(lambda: 1, name="x", access="delete")
    with pytest.raises(ValueError, match="list of role names"):
        spell(lambda: 1, name="x", roles="support")


def test_visible_to_filters_by_role_in_order() -> None:
    tome = desk()
    assert tome.visible_to(ALICE).names == ["read_ticket", "update_email", "whoami"]
    assert tome.visible_to(BOB).names == ["read_ticket", "whoami"]
    assert tome.visible_to(None).names == ["read_ticket", "whoami"]
    assert tome.only(["whoami", "read_ticket"]).names == ["read_ticket", "whoami"]
    with pytest.raises(ValueError, match="no spell named 'nope'"):
        tome.only(["nope"])


async def test_summon_offers_only_visible_spells() -> None:
    for mandate, expected in ((ALICE, 3), (BOB, 2)):
        oracle = ScriptedOracle(["Done."])
        await summon(oracle, desk()).ainvoke(ASK, mandate=mandate)
        assert len(oracle.calls[0][1] or []) == expected


async def test_a_hidden_spell_gets_the_unknown_spell_correction_and_does_not_run() -> None:
    oracle = ScriptedOracle(
        [call("update_email", {"ticket": "T-7", "email": "x@y"}), call("nosuch", {}), "Ok."]
    )
    final = await summon(oracle, desk()).ainvoke(ASK, mandate=BOB)
    hidden, unknown = final["messages"][2]["content"], final["messages"][4]["content"]
    assert SEEN == []
    assert "no spell named" in hidden
    assert "update_email" not in hidden.split("available")[1]
    assert hidden.split("available")[1] == unknown.split("available")[1]


async def test_the_spell_receives_the_host_s_mandate() -> None:
    oracle = ScriptedOracle(
        [call("update_email", {"ticket": "T-7", "email": "ap@acme.test"}), "Ok."]
    )
    await summon(oracle, desk()).ainvoke(ASK, mandate=ALICE)
    assert SEEN == [("T-7", "ap@acme.test", "alice")]


@pytest.mark.parametrize("name", ["update_email", "whoami"])
async def test_a_model_supplied_mandate_is_refused_with_a_correction(name: str) -> None:
    arguments: dict[str, Any] = {"mandate": {"principal": "ceo"}}
    if name == "update_email":
        arguments.update(ticket="T-7", email="x@y")
    oracle = ScriptedOracle([call(name, arguments), "Ok."])
    final = await summon(oracle, desk()).ainvoke(ASK, mandate=ALICE)
    assert SEEN == []
    assert "mandate" in final["messages"][2]["content"]


async def test_a_spell_needing_a_mandate_without_one_fails_conversationally() -> None:
    oracle = ScriptedOracle([call("whoami", {}), "Ok."])
    final = await summon(oracle, desk()).ainvoke(ASK)
    assert "pass mandate=Mandate(...) to ainvoke/resume" in final["messages"][2]["content"]


async def test_two_concurrent_invocations_each_see_their_own_mandate() -> None:
    seen: dict[str, list[str | None]] = {}

    async def slow(aether: dict[str, Any]) -> dict[str, Any]:
        name = aether["who"]
        seen.setdefault(name, []).append(getattr(current_mandate(), "principal", None))
        await asyncio.sleep(0.01)
        seen[name].append(getattr(current_mandate(), "principal", None))
        return {}

    def sync(aether: dict[str, Any]) -> dict[str, Any]:  # runs in a worker thread
        seen[aether["who"]].append(getattr(current_mandate(), "principal", None))
        return {}

    ritual = Ritual()
    ritual.add_sigil("a", slow).add_sigil("b", sync).add_edge("a", "b").add_edge("b", "__end__")
    ritual.set_entry_point("a")
    rite = ritual.compile()
    await asyncio.gather(
        rite.ainvoke({"who": "alice"}, mandate=ALICE), rite.ainvoke({"who": "bob"}, mandate=BOB)
    )
    assert seen == {"alice": ["alice"] * 3, "bob": ["bob"] * 3}
    assert current_mandate() is None


async def test_only_the_principal_reaches_the_seals() -> None:
    codex = MemoryCodex()
    oracle = ScriptedOracle(
        [call("update_email", {"ticket": "T-7", "email": "ap@acme.test"}), "Ok."]
    )
    await summon(oracle, desk(), codex=codex).ainvoke(ASK, invocation_id="inv", mandate=ALICE)
    seals = await codex.list("inv")
    assert seals
    assert all(s.metadata.get(PRINCIPAL_KEY) == "alice" for s in seals)
    text = json.dumps([[s.aether, s.metadata] for s in seals], default=str)
    assert "support" not in text
    assert "acme" not in text.replace("ap@acme.test", "")
    assert "T-7" in text  # the ticket is in the transcript; the subject mapping is not
    assert '"subject"' not in text
    assert '"roles"' not in text


def test_a_mandate_from_json_and_its_checks() -> None:
    m = Mandate.from_json({"principal": "carol", "roles": ["support"], "subject": {"t": 1}})
    assert m == Mandate("carol", frozenset({"support"}), subject={"t": 1})
    assert "subject" not in repr(m)
    with pytest.raises(ValueError, match="unknown mandate field 'role'"):
        Mandate.from_json({"principal": "carol", "role": "x"})
    with pytest.raises(ValueError, match="non-empty principal"):
        Mandate("")
