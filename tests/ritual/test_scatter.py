"""scatter(): one Sigil mapped over a list with bounded concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sanctum import END, Ritual, SigilExecutionError, scatter


def _rite(sigil: Any) -> Any:
    return Ritual().add_sigil("s", sigil).set_entry_point("s").add_edge("s", END).compile()


async def test_results_in_item_order_with_bounded_concurrency() -> None:
    active = 0
    peak = 0

    async def square(aether: dict[str, Any]) -> dict[str, Any]:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01 * (5 - aether["item"]))
        active -= 1
        return {"sq": aether["item"] ** 2, "base": aether["base"]}

    rite = _rite(scatter(square, "xs", into="out", max_concurrency=2))
    result = await rite.ainvoke({"xs": [0, 1, 2, 3, 4], "base": "b"})
    assert [r["sq"] for r in result["out"]] == [0, 1, 4, 9, 16]
    assert all(r["base"] == "b" for r in result["out"])
    assert peak == 2


async def test_pick_item_key_callable_over_and_sync_fn() -> None:
    def double(aether: dict[str, Any]) -> dict[str, Any]:
        return {"v": aether["n"] * 2}

    sigil = scatter(double, lambda a: range(a["k"]), into="doubled", item_key="n", pick="v")
    assert await _rite(sigil).ainvoke({"k": 4}) == {"k": 4, "doubled": [0, 2, 4, 6]}


async def test_writer_is_passed_to_fn() -> None:
    def speak(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer(aether["item"])
        return {}

    rite = _rite(scatter(speak, "xs", into="out"))
    tokens = [o.payload async for o in rite.astream({"xs": ["a", "b"]}, mode="tokens")]
    assert tokens == ["a", "b"]


async def test_empty_list_and_failures() -> None:
    async def fail_on_two(aether: dict[str, Any]) -> dict[str, Any]:
        if aether["item"] == 2:
            raise ValueError("two")
        await asyncio.sleep(0.01)
        return {}

    assert await _rite(scatter(fail_on_two, "xs", into="o")).ainvoke({"xs": []}) == {
        "xs": [],
        "o": [],
    }
    with pytest.raises(SigilExecutionError) as info:
        await _rite(scatter(fail_on_two, "xs", into="o")).ainvoke({"xs": [1, 2, 3]})
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(SigilExecutionError, match="no such key"):
        await _rite(scatter(fail_on_two, "missing", into="o")).ainvoke({})
    with pytest.raises(TypeError, match="not a mapping"):
        await _rite(scatter(lambda a: 3, "xs", into="o")).ainvoke({"xs": [1]})


def test_argument_checks() -> None:
    with pytest.raises(TypeError):
        scatter(42, "xs", into="o")  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        scatter(lambda a: {}, "xs", into="")
    with pytest.raises(ValueError, match="max_concurrency"):
        scatter(lambda a: {}, "xs", into="o", max_concurrency=0)
