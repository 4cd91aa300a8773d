"""Seals as the original engine's programs read them: frontier lists, END, interrupts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sanctum import END, Interrupt, Ritual, Seal, SealError, interrupt
from sanctum.codex import Codex, MemoryCodex, SqliteCodex


def _transmutation() -> Ritual:
    def gather(aether: dict[str, Any]) -> dict[str, Any]:
        return {"lead": aether.get("lead", 0) + 1}

    def transmute(aether: dict[str, Any]) -> dict[str, Any]:
        return {"gold": aether["lead"] * 10}

    ritual = Ritual()
    ritual.add_sigil("gather", gather).add_sigil("transmute", transmute)
    ritual.set_entry_point("gather")
    ritual.add_edge("gather", "transmute").add_edge("transmute", END)
    return ritual


@pytest.fixture(params=["memory", "sqlite"])
def codex(request: pytest.FixtureRequest, tmp_path: Path) -> Codex:
    return MemoryCodex() if request.param == "memory" else SqliteCodex(tmp_path / "seals.db")


async def test_frontier_compares_equal_to_a_list(codex: Codex) -> None:
    await _transmutation().compile(codex=codex).ainvoke({}, invocation_id="t")
    first, last = await codex.list("t")
    assert first.frontier == ["transmute"]
    assert ["transmute"] == first.frontier  # noqa: SIM300 (the reflected comparison)
    assert first.frontier == ("transmute",)
    assert first.frontier != ["gather"]
    assert list(first.frontier) == ["transmute"]
    assert last.frontier == [END]


async def test_the_last_seal_of_a_finished_run_points_at_end(codex: Codex) -> None:
    rite = _transmutation().compile(codex=codex)
    final = await rite.ainvoke({"lead": 2}, invocation_id="done")
    latest = await codex.get("done")
    assert latest is not None
    assert latest.frontier == [END]
    assert latest.aether == final == {"lead": 3, "gold": 30}
    # resuming a finished run changes nothing
    assert await rite.ainvoke(invocation_id="done") == final


async def test_a_seal_built_by_hand_keeps_a_list_frontier_comparable() -> None:
    seal = Seal(aether={"x": 1}, frontier=["a", "b"], superstep=1)  # type: ignore[arg-type]
    assert seal.frontier == ["a", "b"]
    codex = MemoryCodex()
    await codex.put("hand", seal)
    assert (await codex.list("hand"))[0].frontier == ["a", "b"]


async def test_an_interrupts_seal_says_so_in_its_metadata(codex: Codex) -> None:
    def approve(aether: dict[str, Any]) -> dict[str, Any]:
        if not aether.get("approved"):
            interrupt("Seal the pact?")
        return {"sealed": True}

    ritual = Ritual().add_sigil("approve", approve).set_entry_point("approve")
    ritual.add_edge("approve", END)
    rite = ritual.compile(codex=codex)
    with pytest.raises(Interrupt) as paused:
        await rite.ainvoke({"approved": False}, invocation_id="pact")
    assert paused.value.reason == "Seal the pact?"
    assert paused.value.sigil == "approve"

    seal = await codex.get("pact")
    assert seal is not None
    assert seal.metadata["interrupted"] is True
    assert seal.metadata["reason"] == "Seal the pact?"
    assert seal.metadata["sigil"] == "approve"
    assert seal.frontier == ["approve"]

    final = await rite.ainvoke(invocation_id="pact", updates={"approved": True})
    assert final == {"approved": True, "sealed": True}
    history = await codex.list("pact")
    assert "interrupted" not in history[-1].metadata
    assert history[-1].frontier == [END]


async def test_updates_on_a_fresh_run_raise_seal_error() -> None:
    rite = _transmutation().compile(codex=MemoryCodex())
    with pytest.raises(SealError):
        await rite.ainvoke({"lead": 1}, invocation_id="f", updates={"lead": 5})
    with pytest.raises(SealError):
        async for _ in rite.astream({"lead": 1}, updates={"lead": 5}):
            pass


def test_updates_on_a_fresh_synchronous_run_raise_seal_error() -> None:
    with pytest.raises(SealError):
        _transmutation().compile().invoke({"lead": 1}, updates={"lead": 5})


async def test_input_with_a_seal_id_raises_seal_error() -> None:
    codex = MemoryCodex()
    rite = _transmutation().compile(codex=codex)
    await rite.ainvoke({}, invocation_id="tt")
    first = (await codex.list("tt"))[0]
    with pytest.raises(SealError):
        await rite.ainvoke({"lead": 9}, invocation_id="tt", seal_id=first.seal_id)
    # time travel itself still works
    assert await rite.ainvoke(invocation_id="tt", seal_id=first.seal_id) == {"lead": 1, "gold": 10}


async def test_resuming_without_seals_names_no_seals() -> None:
    rite = _transmutation().compile(codex=MemoryCodex())
    with pytest.raises(SealError, match="No Seals"):
        await rite.ainvoke(invocation_id="never-ran")
