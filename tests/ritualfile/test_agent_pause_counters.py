"""A YAML agent's turns and guard counters go on counting across an approval pause."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.errors import Interrupt
from sanctum.ritual.mandate import Mandate
from sanctum.ritualfile import compile_ritual

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "approval"
ALICE = Mandate("alice", frozenset({"support"}))
CAROL = Mandate("carol", frozenset({"support"}))


def ritual(tmp_path: Path, max_turns: int) -> Path:
    shutil.copytree(EXAMPLE, tmp_path / "approval")
    path = tmp_path / "approval" / "ticket.yaml"
    text = path.read_text(encoding="utf-8")
    assert "      max_turns: 4\n" in text
    path.write_text(text.replace("max_turns: 4", f"max_turns: {max_turns}"), encoding="utf-8")
    return path


async def pause_then_approve(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    codex = MemoryCodex()
    rite = compile_ritual(path, codex=codex)
    with pytest.raises(Interrupt):
        await rite.ainvoke({"ticket": "T-7"}, invocation_id="t7", mandate=ALICE)
    seal = await codex.get("t7")
    assert seal is not None
    paused = dict(seal.aether)
    decision = {"2:call_0": {"decision": "approve", "by": "carol"}}
    final = await rite.ainvoke(invocation_id="t7", updates={"approvals": decision}, mandate=CAROL)
    return paused, dict(final)


async def test_the_pause_keeps_the_loop_counters(tmp_path: Path) -> None:
    paused, _ = await pause_then_approve(ritual(tmp_path, 4))
    loop = paused["approvals"]["loop"]
    assert loop["turns"] == 2  # two consultations before the write paused
    assert "guard" in loop  # the example turns the guard on


async def test_the_budget_counts_the_turns_before_the_pause(tmp_path: Path) -> None:
    _, final = await pause_then_approve(ritual(tmp_path, 2))
    synthetic = [m for m in final["messages"] if m.get("synthetic") == "budget"]
    assert len(synthetic) == 1  # turn 2 of 2 was spent before the pause: final answers
    assert final["answer"]


async def test_a_budget_left_after_the_pause_is_not_forced(tmp_path: Path) -> None:
    _, final = await pause_then_approve(ritual(tmp_path, 4))
    assert not [m for m in final["messages"] if m.get("synthetic") == "budget"]
    assert final["answer"].startswith("Ticket T-7 is handled")
