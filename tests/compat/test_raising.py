"""What programs written for the original engine raise, stream and scatter."""

from __future__ import annotations

import pytest

from sanctum import (
    RecursionLimitError,
    SigilExecutionError,
    SigilJoinError,
    SigilTimeoutError,
    Tome,
    spell,
)
from sanctum.grimoire import SpellExecutionError


@pytest.mark.parametrize(
    "kind",
    [
        SigilExecutionError,
        SigilTimeoutError,
        SigilJoinError,
        RecursionLimitError,
        SpellExecutionError,
    ],
)
def test_a_message_alone_builds_each_error(kind: type[Exception]) -> None:
    error = kind("something went wrong")
    assert str(error) == "something went wrong"
    with pytest.raises(kind, match="went wrong"):
        raise error


async def test_a_spell_raising_spell_execution_error_keeps_its_message() -> None:
    @spell
    def read_note(name: str) -> str:
        """Read a note."""
        raise SpellExecutionError(f"no note named {name!r}")

    tome = Tome([read_note])
    with pytest.raises(SpellExecutionError, match="no note named 'x'"):
        await tome.get("read_note").execute({"name": "x"})


async def test_superstep_began_lists_its_frontier_like_a_list() -> None:
    from sanctum import END, Ritual
    from sanctum.omens import SuperstepBegan

    ritual = Ritual()
    ritual.add_sigil("a", lambda aether: {})
    ritual.add_sigil("b", lambda aether: {})
    ritual.add_edge("a", "b")
    ritual.add_edge("b", END)
    ritual.set_entry_point("a")
    began = [
        omen
        async for omen in ritual.compile().astream({}, mode="omens")
        if isinstance(omen, SuperstepBegan)
    ]
    assert [omen.frontier for omen in began] == [["a"], ["b"]]
    assert began[0].frontier == ("a",)


async def test_scatter_maps_a_spell_over_items() -> None:
    from sanctum import END, Ritual, scatter

    @spell
    def shout(item: str) -> str:
        """Shout an item."""
        return item.upper()

    ritual = Ritual()
    ritual.add_sigil("fan", scatter(shout, over="xs", into="ys"))
    ritual.add_edge("fan", END)
    ritual.set_entry_point("fan")
    result = await ritual.compile().ainvoke({"xs": ["a", "b"]})
    assert result["ys"] == ["A", "B"]


async def test_a_store_of_your_own_keeps_only_the_invocations_you_run() -> None:
    from sanctum import END, Codex, Ritual, Seal

    class Shelf(Codex):
        def __init__(self) -> None:
            self.seals: dict[str, list[Seal]] = {}

        async def put(self, invocation_id: str, seal: Seal) -> None:
            self.seals.setdefault(invocation_id, []).append(seal)

        async def get(self, invocation_id: str) -> Seal | None:
            history = self.seals.get(invocation_id)
            return history[-1] if history else None

        async def list(self, invocation_id: str) -> list[Seal]:
            return list(self.seals.get(invocation_id, []))

    shelf = Shelf()
    ritual = Ritual()
    ritual.add_sigil("a", lambda aether: {"n": 1})
    ritual.add_edge("a", END)
    ritual.set_entry_point("a")
    assert await ritual.compile(codex=shelf).ainvoke({}, invocation_id="mine") == {"n": 1}
    assert list(shelf.seals) == ["mine"]
