"""scatter(fn, *, over, into, concurrency=8, on_item_error="raise"): the item form."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sanctum import (
    END,
    AetherSchema,
    Conduit,
    Ritual,
    SigilExecutionError,
    SigilPolicy,
    interrupt,
    scatter,
)
from sanctum.codex import MemoryCodex


def _rite(sigil: Any, **compile_options: Any) -> Any:
    ritual = Ritual().add_sigil("fan", sigil).set_entry_point("fan").add_edge("fan", END)
    return ritual.compile(**compile_options)


def test_a_sync_function_maps_each_item() -> None:
    def double(x: int) -> int:
        return x * 2

    rite = _rite(scatter(double, over="numbers", into="doubled"))
    assert rite.invoke({"numbers": [1, 2, 3]}) == {"numbers": [1, 2, 3], "doubled": [2, 4, 6]}


async def test_an_async_function_keeps_item_order_within_its_concurrency() -> None:
    active = peak = 0

    async def slow_square(x: int) -> int:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.002 * (6 - x))  # later items finish first
        active -= 1
        return x * x

    rite = _rite(scatter(slow_square, over="xs", into="squares", concurrency=2))
    result = await rite.ainvoke({"xs": [1, 2, 3, 4, 5]})
    assert result["squares"] == [1, 4, 9, 16, 25]
    assert peak == 2


async def test_the_default_concurrency_is_eight() -> None:
    active = peak = 0

    async def count(x: int) -> int:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.005)
        active -= 1
        return x

    await _rite(scatter(count, over="xs", into="ys")).ainvoke({"xs": list(range(20))})
    assert peak == 8


def test_a_function_may_read_the_aether_too() -> None:
    def label(item: str, aether: dict[str, Any]) -> str:
        return f"{aether['prefix']}-{item}"

    async def alabel(item: str, aether: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        return f"{item}@{aether['prefix']}"

    ritual = Ritual()
    ritual.add_sigil("sync", scatter(label, over="names", into="labels"))
    ritual.add_sigil("async", scatter(alabel, over="names", into="tags", concurrency=3))
    ritual.set_entry_point("sync").add_edge("sync", "async").add_edge("async", END)
    final = ritual.compile().invoke({"names": ["a", "b"], "prefix": "p"})
    assert final["labels"] == ["p-a", "p-b"]
    assert final["tags"] == ["a@p", "b@p"]


def test_an_empty_list_gives_an_empty_list() -> None:
    rite = _rite(scatter(lambda x: x, over="xs", into="ys"))
    assert rite.invoke({"xs": []})["ys"] == []


def test_collect_puts_the_error_in_the_failing_items_place() -> None:
    def risky(x: int) -> int:
        if x == 2:
            raise ValueError("two is cursed")
        return x * 10

    rite = _rite(scatter(risky, over="xs", into="out", on_item_error="collect"))
    out = rite.invoke({"xs": [1, 2, 3]})["out"]
    assert out[0] == 10
    assert out[2] == 30
    assert out[1] == {"__scatter_error__": repr(ValueError("two is cursed"))}


async def test_collect_lets_every_async_item_finish() -> None:
    finished: list[int] = []

    async def risky(x: int) -> int:
        await asyncio.sleep(0.001 * x)
        if x % 2:
            raise RuntimeError(f"odd {x}")
        finished.append(x)
        return x

    rite = _rite(scatter(risky, over="xs", into="out", on_item_error="collect", concurrency=3))
    result = await rite.ainvoke({"xs": [0, 1, 2, 3, 4]})
    assert result["out"][::2] == [0, 2, 4]
    assert [o["__scatter_error__"] for o in result["out"][1::2]] == [
        repr(RuntimeError("odd 1")),
        repr(RuntimeError("odd 3")),
    ]
    assert sorted(finished) == [0, 2, 4]


async def test_raise_fails_the_sigil_with_the_item_error_as_cause() -> None:
    async def risky(x: int) -> int:
        if x == 2:
            raise ValueError("two is cursed")
        await asyncio.sleep(0.05)
        return x

    rite = _rite(scatter(risky, over="xs", into="out"))
    with pytest.raises(SigilExecutionError) as info:
        await rite.ainvoke({"xs": [1, 2, 3]})
    assert info.value.sigil == "fan"
    assert isinstance(info.value.__cause__, ValueError)


def test_the_sigils_policy_covers_the_whole_scatter() -> None:
    calls: list[int] = []

    def flaky(x: int) -> int:
        calls.append(x)
        if len(calls) == 1:
            raise ConnectionError("blip")
        return x

    ritual = Ritual()
    ritual.add_sigil(
        "fan", scatter(flaky, over="xs", into="ys"), SigilPolicy(retries=1, backoff=lambda n: 0)
    )
    ritual.set_entry_point("fan").add_edge("fan", END)
    assert ritual.compile().invoke({"xs": [7, 8]})["ys"] == [7, 8]
    assert calls == [7, 7, 8]


@pytest.mark.parametrize("bad", [0, -1])
def test_concurrency_below_one_is_refused_when_built(bad: int) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        scatter(lambda x: x, over="xs", into="ys", concurrency=bad)


def test_an_unknown_on_item_error_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="on_item_error"):
        scatter(lambda x: x, over="xs", into="ys", on_item_error="ignore")


def test_the_results_merge_through_the_conduit_reducer() -> None:
    schema = AetherSchema({"xs": list, "ys": Conduit(reducer=lambda old, new: old + new)})
    ritual = Ritual(schema)
    ritual.add_sigil("fan", scatter(lambda x: -x, over="xs", into="ys"))
    ritual.set_entry_point("fan").add_edge("fan", END)
    assert ritual.compile().invoke({"xs": [1, 2], "ys": [0]})["ys"] == [0, -1, -2]


async def test_an_interrupt_inside_an_item_pauses_the_invocation() -> None:
    def ask(x: int, aether: dict[str, Any]) -> int:
        if "ok" not in aether:
            interrupt(f"approve item {x}?")
        return x

    rite = _rite(scatter(ask, over="xs", into="ys", on_item_error="collect"), codex=MemoryCodex())
    with pytest.raises(Exception, match="approve item 1"):
        await rite.ainvoke({"xs": [1, 2]}, invocation_id="p")
    final = await rite.ainvoke(invocation_id="p", updates={"ok": True})
    assert final["ys"] == [1, 2]


def test_sanctums_own_form_still_works_beside_it() -> None:
    def per_item(aether: dict[str, Any]) -> dict[str, Any]:
        return {"v": aether["n"] + aether["offset"]}

    rite = _rite(scatter(per_item, "xs", into="ys", item_key="n", pick="v"))
    assert rite.invoke({"xs": [1, 2], "offset": 10})["ys"] == [11, 12]


def test_mixing_the_two_forms_is_refused() -> None:
    with pytest.raises(TypeError, match="one form"):
        scatter(lambda x: x, over="xs", into="ys", concurrency=2, pick="v")  # type: ignore[call-overload]
