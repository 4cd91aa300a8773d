"""The public oracle/agent/spell sigil factories (sanctum.grimoire.sigils)."""

from __future__ import annotations

from sanctum.grimoire import Tome, spell
from sanctum.grimoire.sigils import agent_sigil, oracle_sigil, spell_sigil
from sanctum.oracle.base import OracleResponse, SpellCall
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.ritual import END, Ritual


async def test_oracle_sigil_streams_tokens_and_attaches_usage() -> None:
    oracle = ScriptedOracle([OracleResponse(text="two words", usage={"completion_tokens": 2})])
    fn = oracle_sigil(
        oracle, lambda ae: f"say {ae['x']}", "out", system="be brief", messages="messages"
    )
    tokens: list[str] = []

    class Pen:
        def __call__(self, payload: object) -> None:
            tokens.append(str(payload))

        def emit(self, omen: object) -> None:  # pragma: no cover - unused here
            pass

    delta = await fn({"x": "hi"}, Pen())
    assert tokens == ["two ", "words"]
    assert delta == {
        "out": "two words",
        "messages": [
            {"role": "assistant", "content": "two words", "usage": {"completion_tokens": 2}}
        ],
    }
    assert oracle.calls[0][0] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "say hi"},
    ]


async def test_spell_sigil() -> None:
    @spell
    def twice(n: int) -> int:
        """Double it."""
        return n * 2

    fn = spell_sigil(twice, lambda ae: {"n": ae["n"]}, "out")
    assert await fn({"n": 4}) == {"out": 8}
    assert await spell_sigil(twice, {"n": 1})({}) == {}


async def test_agent_sigil_appends_only_new_messages() -> None:
    @spell
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    oracle = ScriptedOracle(
        [
            OracleResponse(spell_calls=[SpellCall("shout", {"text": "hi"}, "c1")]),
            "done: HI",
        ]
    )
    fn = agent_sigil(oracle, Tome([shout]), prompt=lambda ae: "shout hi", output="answer")
    from sanctum.aether import AetherSchema, Conduit, append

    rite = (
        Ritual(AetherSchema({"messages": Conduit(append), "answer": str}))
        .add_sigil("agent", fn)
        .set_entry_point("agent")
        .add_edge("agent", END)
        .compile()
    )
    old = [{"role": "user", "content": "earlier"}]
    result = await rite.ainvoke({"messages": old})
    assert result["answer"] == "done: HI"
    roles = [m["role"] for m in result["messages"]]
    assert roles == ["user", "user", "assistant", "spell", "assistant"]
    assert result["messages"][1]["content"] == "shout hi"
