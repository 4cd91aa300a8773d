"""summon(spell_calling="constrained"): the loop over an Oracle held to a JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jsonschema
import pytest

from sanctum.errors import SpellCallParseError
from sanctum.grimoire import Tome, spell, summon
from sanctum.omens.events import Omen, SpellCallRejected
from sanctum.oracle.base import Message, Oracle, OracleResponse
from sanctum.oracle.constrained import ConstrainedSpellCalling
from sanctum.oracle.scripted import ScriptedOracle

ASK = {"messages": [{"role": "user", "content": "How many words in 'the cat sat'?"}]}


@spell
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


class SchemaOracle(Oracle):
    """An Oracle with constrained decoding that answers from a script, checking each
    answer against the schema it was given (as a grammar would hold it)."""

    constrains_output = True

    def __init__(self, script: Sequence[str]) -> None:
        self.arcana = "schema-test"
        self.script = list(script)
        self.schemas: list[Mapping[str, Any]] = []

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        raise AssertionError("constrained mode must not call generate with spells")

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        import json

        self.schemas.append(schema)
        text = self.script.pop(0)
        jsonschema.validate(json.loads(text), schema)
        return OracleResponse(text, usage={"completion_tokens": 7})

    def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> Any:
        raise NotImplementedError


async def run(rite: Any) -> tuple[dict[str, Any], list[Omen]]:
    omens: list[Omen] = []
    final: dict[str, Any] = {}
    async for omen in rite.astream(ASK, mode="omens"):
        omens.append(omen)
        if type(omen).__name__ == "RiteManifested":
            final = dict(omen.aether)
    return final, omens


async def test_a_constrained_entity_casts_and_answers() -> None:
    oracle = SchemaOracle(
        [
            '{"spell": "word_count", "arguments": {"text": "the cat sat"}}',
            '{"answer": "There are 3 words."}',
        ]
    )
    rite = summon(oracle, Tome([word_count]), spell_calling="constrained", spell_choice="required")
    final, omens = await run(rite)
    messages = final["messages"]
    assert messages[1]["spell_calls"][0]["spell"] == "word_count"
    assert messages[1]["usage"] == {"completion_tokens": 7}
    assert messages[2] == {
        "role": "spell",
        "name": "word_count",
        "call_id": messages[1]["spell_calls"][0]["call_id"],
        "content": "3",
    }
    assert messages[3]["content"] == "There are 3 words."
    assert "oneOf" not in oracle.schemas[0]  # required: only the call on the first turn
    assert len(oracle.schemas[1]["oneOf"]) == 2
    assert not [o for o in omens if isinstance(o, SpellCallRejected)]


async def test_falling_back_to_prompted_sounds_an_omen() -> None:
    scripted = ScriptedOracle(
        ['<spell_call>{"spell": "word_count", "arguments": {"text": "a b c"}}', "Three."]
    )
    rite = summon(scripted, Tome([word_count]), spell_calling="constrained")
    final, omens = await run(rite)
    assert final["messages"][-1]["content"] == "Three."
    notes = [o for o in omens if isinstance(o, SpellCallRejected)]
    assert len(notes) == 1
    assert "falling back to prompted" in notes[0].reason


async def test_a_prompted_entity_is_not_told_to_try_prompted() -> None:
    oracle = ScriptedOracle(['<spell_call>{"spell": "nope", "arguments": {}}'] * 3)
    rite = summon(oracle, Tome([word_count]), spell_calling="prompted", max_repair_rounds=1)
    with pytest.raises(SpellCallParseError) as caught:
        await rite.ainvoke(ASK)
    message = str(caught.value)
    assert "spell_calling='prompted'" not in message
    assert "spell_calling: constrained (now prompted)" in message


def test_summon_wraps_and_checks_the_spell_choice() -> None:
    rite = summon(ScriptedOracle([]), Tome([word_count]), spell_calling="constrained")
    assert rite is not None
    with pytest.raises(ValueError, match="spell_choice"):
        summon(ScriptedOracle([]), spell_calling="constrained", spell_choice="x")
    wrapped = ConstrainedSpellCalling(ScriptedOracle([]))
    assert summon(wrapped, spell_calling="constrained") is not None
