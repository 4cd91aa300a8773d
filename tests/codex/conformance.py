"""The behaviour every Codex — every Seal store — must show (a reusable conformance suite).

Subclass :class:`CodexConformance` in a test module and provide two fixtures:

``codex``
    an async generator fixture yielding a fresh, empty store (clean up after ``yield``);
``reopen``
    a callable ``(codex) -> Codex | None`` returning a second object over the same
    storage (``None`` for stores that are not shared, like MemoryCodex).

Every test below then runs against that store. A third-party Codex passes this suite
when it keeps the contract in :mod:`sanctum.codex.base`: append-only histories, ``get``
is the most recently written Seal, ``list`` is oldest first, per-Invocation isolation,
an atomic ``put_next``, exact round-trips, the strict JSON rule and safe copies.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable
from typing import Any

import pytest

from sanctum.codex import Codex, Seal, SealError, new_seal_id
from sanctum.codex.claims import ledger_id, new_claim
from tests.codex.long_history import LongHistoryConformance

__all__ = ["CodexConformance", "make_seal"]

Reopen = Callable[[Codex], Codex | None]


def make_seal(
    superstep: int = 1,
    aether: dict[str, Any] | None = None,
    *,
    frontier: tuple[str, ...] = ("think",),
    metadata: dict[str, Any] | None = None,
    parent: str | None = None,
    writers: dict[str, list[str]] | None = None,
    timestamp: float | None = None,
) -> Seal:
    """A Seal with sensible defaults for tests."""
    meta: dict[str, Any] = dict(metadata or {})
    meta.setdefault("parent", parent)
    if writers is not None:
        meta["writers"] = writers
    return Seal(
        seal_id=new_seal_id(),
        aether=aether if aether is not None else {"count": superstep},
        frontier=frontier,
        superstep=superstep,
        timestamp=timestamp if timestamp is not None else 1_700_000_000.0 + superstep,
        metadata=meta,
    )


RICH_AETHER: dict[str, Any] = {
    "messages": [
        {"role": "user", "content": 'héllo ✓ \u0000 😀 \ud800 lone "quoted" \\ back'},
        {"role": "assistant", "content": "", "calls": [{"name": "add", "args": {"a": 1}}]},
    ],
    "big": 2**80,
    "negative": -7,
    "ratio": 0.1,
    "tiny": 5e-324,
    "flag": True,
    "nothing": None,
    "empty_list": [],
    "empty_dict": {},
    "nested": {"a": {"b": {"c": [1, [2, [3, {"d": "e"}]]]}}},
    "ordered": {"z": 1, "a": 2, "m": 3},
    "": "empty key",
    "key with spaces & ünïcode": "ok",
}


class CodexConformance(LongHistoryConformance):
    """Behavioural tests any Codex must pass (see the module docstring), long
    histories included (:class:`~tests.codex.long_history.LongHistoryConformance`)."""

    # ------------------------------------------------------------ basics

    async def test_empty_history(self, codex: Codex) -> None:
        assert await codex.get("nobody") is None
        assert await codex.list("nobody") == []
        assert await codex.get_seal("nobody", new_seal_id()) is None

    async def test_round_trip_of_every_field(self, codex: Codex) -> None:
        seal = Seal(
            seal_id=new_seal_id(),
            aether=RICH_AETHER,
            frontier=("b", "a", "c"),
            superstep=7,
            timestamp=1_712_345_678.123456,
            metadata={
                "parent": None,
                "joins": {"gate": ["a", "b"]},
                "interrupt": {"reason": "approve?", "sigil": "ask"},
                "writers": {"messages": ["talk"]},
                "updates": {"approved": True},
                "ritual": {"path": "x.yaml", "sha256": "ab" * 32},
            },
        )
        await codex.put("inv", seal)
        for got in (
            await codex.get("inv"),
            (await codex.list("inv"))[0],
            await codex.get_seal("inv", seal.seal_id),
        ):
            assert got is not None
            assert got == seal
            assert got.seal_id == seal.seal_id
            assert dict(got.aether) == RICH_AETHER
            assert list(got.aether["ordered"]) == ["z", "a", "m"]
            assert list(got.aether) == list(RICH_AETHER)
            assert got.frontier == ("b", "a", "c")
            assert isinstance(got.frontier, tuple)
            assert got.superstep == 7
            assert got.timestamp == 1_712_345_678.123456
            assert got.interrupt == {"reason": "approve?", "sigil": "ask"}
            assert got.parent is None

    async def test_tuples_come_back_as_lists(self, codex: Codex) -> None:
        await codex.put("inv", make_seal(1, {"pair": (1, 2), "deep": {"t": ((1,), ())}}))
        got = await codex.get("inv")
        assert got is not None
        assert got.aether == {"pair": [1, 2], "deep": {"t": [[1], []]}}

    async def test_list_is_oldest_first_and_get_is_latest_written(self, codex: Codex) -> None:
        first, second, third = make_seal(5), make_seal(9), make_seal(2)
        for seal in (first, second, third):
            await codex.put("inv", seal)
        history = await codex.list("inv")
        assert [s.seal_id for s in history] == [first.seal_id, second.seal_id, third.seal_id]
        latest = await codex.get("inv")
        assert latest is not None
        assert latest.seal_id == third.seal_id  # not the highest superstep
        assert latest.superstep == 2

    async def test_histories_are_isolated(self, codex: Codex) -> None:
        a, b = make_seal(1, {"who": "a"}), make_seal(1, {"who": "b"})
        await codex.put("inv-a", a)
        await codex.put("inv-b", b)
        got_a, got_b = await codex.get("inv-a"), await codex.get("inv-b")
        assert got_a is not None
        assert got_a.aether == {"who": "a"}
        assert got_b is not None
        assert got_b.aether == {"who": "b"}
        assert [s.seal_id for s in await codex.list("inv-a")] == [a.seal_id]
        assert await codex.get_seal("inv-b", a.seal_id) is None

    async def test_same_seal_id_in_two_invocations(self, codex: Codex) -> None:
        seal = make_seal(1)
        await codex.put("one", seal)
        await codex.put("two", seal)
        assert len(await codex.list("one")) == 1
        assert len(await codex.list("two")) == 1

    async def test_duplicate_seal_id_is_refused_and_nothing_changes(self, codex: Codex) -> None:
        seal = make_seal(1)
        await codex.put("inv", seal)
        with pytest.raises(SealError) as caught:
            await codex.put("inv", Seal({"other": 1}, (), 2, seal_id=seal.seal_id))
        assert seal.seal_id in str(caught.value)
        history = await codex.list("inv")
        assert len(history) == 1
        assert history[0].aether == seal.aether

    async def test_get_seal_finds_historic_seals(self, codex: Codex) -> None:
        seals = [make_seal(i, {"n": i}) for i in range(1, 6)]
        for seal in seals:
            await codex.put("inv", seal)
        got = await codex.get_seal("inv", seals[1].seal_id)
        assert got is not None
        assert got.aether == {"n": 2}
        assert await codex.get_seal("inv", "no-such-seal") is None

    # ------------------------------------------------------------ copies

    async def test_mutating_after_put_does_not_alter_history(self, codex: Codex) -> None:
        messages = [{"content": "a"}]
        metadata: dict[str, Any] = {"parent": None, "note": ["x"]}
        await codex.put("inv", make_seal(1, {"messages": messages}, metadata=metadata))
        messages.append({"content": "b"})
        messages[0]["content"] = "changed"
        metadata["note"].append("y")
        got = await codex.get("inv")
        assert got is not None
        assert got.aether == {"messages": [{"content": "a"}]}
        assert got.metadata["note"] == ["x"]

    async def test_mutating_a_returned_seal_does_not_alter_history(self, codex: Codex) -> None:
        await codex.put("inv", make_seal(1, {"messages": [{"content": "a"}]}))
        got = await codex.get("inv")
        assert got is not None
        got.aether["messages"].append("intruder")  # type: ignore[index]
        again = await codex.get("inv")
        assert again is not None
        assert again.aether == {"messages": [{"content": "a"}]}

    # ------------------------------------------------------------ growing lists

    @pytest.mark.parametrize("pad", [0, 400])
    async def test_growing_and_shrinking_lists_round_trip(self, codex: Codex, pad: int) -> None:
        p = "p" * pad  # small values may be stored inline, large ones as chained rows
        values: list[Any] = [
            [],
            [{"m": 0, "p": p}],
            [{"m": 0, "p": p}, {"m": 1}],
            [{"m": 0, "p": p}, {"m": 1}, [2, "x"]],
            [{"m": 0, "p": p}],
            [{"m": 0, "p": p}, 10],
            [{"m": 0, "p": p}, 100],
            [[{"m": 0, "p": p}, 100]],
            "not a list" + p,
            [1],
            [1, 2, 3, 4, p],
            [1, 2, 3, 4, p, p],
            [1, 2, 3, 4, p, p],
        ]
        prev: str | None = None
        seals = []
        for i, value in enumerate(values, start=1):
            seal = make_seal(i, {"messages": value, "i": i}, parent=prev)
            await codex.put_next("inv", seal, expected_latest=prev)
            prev = seal.seal_id
            seals.append(seal)
        history = await codex.list("inv")
        assert [s.aether["messages"] for s in history] == values
        for seal, value in zip(seals, values, strict=True):
            got = await codex.get_seal("inv", seal.seal_id)
            assert got is not None
            assert got.aether["messages"] == value

    async def test_time_travel_branches_stay_independent(self, codex: Codex) -> None:
        base = [{"m": i} for i in range(3)]
        first = make_seal(1, {"messages": base})
        await codex.put("inv", first)
        left = make_seal(2, {"messages": [*base, {"m": "left"}]}, parent=first.seal_id)
        await codex.put("inv", left)
        right = make_seal(2, {"messages": [*base, {"m": "right"}]}, parent=first.seal_id)
        await codex.put("inv", right)
        deeper = make_seal(
            3, {"messages": [*base, {"m": "left"}, {"m": "l2"}]}, parent=left.seal_id
        )
        await codex.put("inv", deeper)
        history = await codex.list("inv")
        assert [s.seal_id for s in history] == [
            first.seal_id,
            left.seal_id,
            right.seal_id,
            deeper.seal_id,
        ]
        assert history[2].aether["messages"][-1] == {"m": "right"}
        assert history[3].aether["messages"][-2:] == [{"m": "left"}, {"m": "l2"}]
        assert history[3].parent == left.seal_id
        assert history[2].parent == first.seal_id

    # ------------------------------------------------------------ put_next

    async def test_put_next_appends_when_expectation_holds(self, codex: Codex) -> None:
        first = make_seal(1)
        await codex.put_next("inv", first, expected_latest=None)
        second = make_seal(2, parent=first.seal_id)
        await codex.put_next("inv", second, expected_latest=first.seal_id)
        assert [s.seal_id for s in await codex.list("inv")] == [first.seal_id, second.seal_id]

    async def test_put_next_refuses_a_stale_expectation(self, codex: Codex) -> None:
        first, second = make_seal(1), make_seal(2)
        await codex.put_next("inv", first, expected_latest=None)
        await codex.put_next("inv", second, expected_latest=first.seal_id)
        loser = make_seal(2, {"lost": True})
        with pytest.raises(SealError) as caught:
            await codex.put_next("inv", loser, expected_latest=first.seal_id)
        assert caught.value.invocation_id == "inv"
        assert second.seal_id in str(caught.value)
        with pytest.raises(SealError):
            await codex.put_next("inv", make_seal(3), expected_latest=None)
        assert [s.seal_id for s in await codex.list("inv")] == [first.seal_id, second.seal_id]

    async def test_put_next_on_empty_history_needs_none(self, codex: Codex) -> None:
        with pytest.raises(SealError):
            await codex.put_next("inv", make_seal(1), expected_latest=new_seal_id())
        assert await codex.list("inv") == []

    async def test_concurrent_put_next_lets_exactly_one_win(self, codex: Codex) -> None:
        first = make_seal(1)
        await codex.put("inv", first)
        rivals = [make_seal(2, {"rival": i}) for i in range(8)]
        results = await asyncio.gather(
            *(codex.put_next("inv", s, expected_latest=first.seal_id) for s in rivals),
            return_exceptions=True,
        )
        wins = [r for r in results if r is None]
        losses = [r for r in results if isinstance(r, SealError)]
        assert len(wins) == 1
        assert len(losses) == 7
        history = await codex.list("inv")
        assert len(history) == 2
        assert history[0].seal_id == first.seal_id

    async def test_concurrent_puts_on_many_invocations(self, codex: Codex) -> None:
        async def run(name: str) -> None:
            prev: str | None = None
            for step in range(1, 6):
                seal = make_seal(step, {"who": name, "step": step}, parent=prev)
                await codex.put_next(name, seal, expected_latest=prev)
                prev = seal.seal_id
                await asyncio.sleep(0)

        await asyncio.gather(*(run(f"inv-{i}") for i in range(4)))
        for i in range(4):
            history = await codex.list(f"inv-{i}")
            assert [s.aether["step"] for s in history] == [1, 2, 3, 4, 5]
            assert {s.aether["who"] for s in history} == {f"inv-{i}"}

    # ------------------------------------------------------------ the JSON rule

    strict_json = True
    """Whether the Codex refuses state JSON cannot hold (MemoryCodex keeps it instead)."""

    def needs_strict_json(self) -> None:
        if not self.strict_json:
            pytest.skip("this Codex keeps state JSON cannot hold (see its own tests)")

    async def test_unserialisable_state_names_sigil_path_and_type(self, codex: Codex) -> None:
        self.needs_strict_json()
        await codex.put("inv", make_seal(1, {"messages": [{"payload": 1}] * 3}))
        bad = make_seal(
            2,
            {"messages": [*([{"payload": 1}] * 3), {"payload": datetime.date(2024, 1, 1)}]},
            writers={"messages": ["fetch"]},
        )
        with pytest.raises(SealError) as caught:
            await codex.put("inv", bad)
        message = str(caught.value)
        assert "fetch" in message
        assert "messages[3].payload" in message
        assert "date" in message
        assert caught.value.invocation_id == "inv"
        assert len(await codex.list("inv")) == 1

    @pytest.mark.parametrize(
        ("aether", "path", "type_name"),
        [
            ({"x": {1, 2}}, "x", "set"),
            ({"x": float("nan")}, "x", "nan"),
            ({"x": [float("inf")]}, "x[0]", "inf"),
            ({"x": {"k": {3: "v"}}}, "x.k[3]", "int key"),
            ({"x": {"k": {None: "v"}}}, "x.k[None]", "NoneType key"),
            ({"x": b"bytes"}, "x", "bytes"),
            ({"x": [object()]}, "x[0]", "object"),
        ],
    )
    async def test_the_strict_json_rule(
        self, codex: Codex, aether: dict[str, Any], path: str, type_name: str
    ) -> None:
        self.needs_strict_json()
        with pytest.raises(SealError) as caught:
            await codex.put("inv", make_seal(1, aether, writers={"x": ["maker"]}))
        message = str(caught.value)
        assert path in message
        assert type_name in message
        assert "maker" in message
        assert await codex.list("inv") == []

    async def test_circular_state_is_refused(self, codex: Codex) -> None:
        self.needs_strict_json()
        loop: list[Any] = [1]
        loop.append(loop)
        with pytest.raises(SealError) as caught:
            await codex.put("inv", make_seal(1, {"loop": loop}))
        assert "loop[1]" in str(caught.value)
        assert await codex.get("inv") is None

    async def test_state_from_input_is_named_as_such(self, codex: Codex) -> None:
        self.needs_strict_json()
        with pytest.raises(SealError) as caught:
            await codex.put("inv", make_seal(1, {"when": datetime.time(1, 2)}, writers={}))
        assert "input or updates" in str(caught.value)

    async def test_unserialisable_metadata_and_frontier(self, codex: Codex) -> None:
        if self.strict_json:
            with pytest.raises(SealError) as caught:
                await codex.put("inv", make_seal(1, metadata={"when": datetime.date(2024, 1, 1)}))
            assert "metadata.when" in str(caught.value)
        with pytest.raises(SealError):
            await codex.put("inv", make_seal(1, frontier=("ok", 3)))  # type: ignore[arg-type]
        assert await codex.list("inv") == []

    async def test_unusable_ids_are_refused(self, codex: Codex) -> None:
        for bad in ("", "nul\x00byte", "x" * 10_000):
            with pytest.raises(SealError):
                await codex.put(bad, make_seal(1))

    async def test_a_failed_put_leaves_the_next_one_working(self, codex: Codex) -> None:
        self.needs_strict_json()
        good = make_seal(1, {"messages": [1, 2]})
        await codex.put("inv", good)
        with pytest.raises(SealError):
            await codex.put("inv", make_seal(2, {"messages": [1, 2, {3}]}, parent=good.seal_id))
        after = make_seal(2, {"messages": [1, 2, 3]}, parent=good.seal_id)
        await codex.put_next("inv", after, expected_latest=good.seal_id)
        got = await codex.get("inv")
        assert got is not None
        assert got.aether == {"messages": [1, 2, 3]}

    # ------------------------------------------------------------ the index

    async def test_invocations_newest_first(self, codex: Codex) -> None:
        try:
            assert await codex.invocations() == []
        except NotImplementedError:
            pytest.skip("this Codex cannot enumerate its invocations")
        await codex.put("old", make_seal(1))
        await codex.put("paused", make_seal(1))
        await codex.put(
            "paused",
            make_seal(2, metadata={"interrupt": {"reason": "ok?", "sigil": "ask"}}),
        )
        await codex.put("done", make_seal(3, frontier=()))
        summaries = await codex.invocations()
        assert [s.invocation_id for s in summaries] == ["done", "paused", "old"]
        by_name = {s.invocation_id: s for s in summaries}
        assert by_name["paused"].seals == 2
        assert by_name["paused"].superstep == 2
        assert by_name["paused"].status == "paused"
        assert by_name["done"].status == "done"
        assert by_name["old"].status == "incomplete"
        assert by_name["old"].frontier == ("think",)
        assert by_name["done"].updated == 1_700_000_003.0
        assert [s.invocation_id for s in await codex.invocations(limit=2)] == ["done", "paused"]
        await codex.put("old", make_seal(2))
        assert (await codex.invocations(limit=1))[0].invocation_id == "old"

    # ------------------------------------------------------------ deleting

    async def test_delete_removes_one_invocation_and_keeps_shared_values(
        self, codex: Codex
    ) -> None:
        shared = {"messages": ["the same long text, stored once"] * 3}
        gone = make_seal(1, shared)
        await codex.put("gone", gone)
        await codex.put("gone", make_seal(2, shared, parent=gone.seal_id))
        kept = make_seal(1, shared)
        await codex.put("kept", kept)
        assert await codex.claim("gone", new_claim("run")) is None
        assert await codex.get(ledger_id("gone")) is not None
        assert await codex.delete("gone") is True
        assert await codex.get("gone") is None
        assert await codex.list("gone") == []
        assert await codex.get_seal("gone", gone.seal_id) is None
        assert await codex.latest_seal_id("gone") is None
        assert await codex.get(ledger_id("gone")) is None  # the claim went with it
        assert await codex.get("kept") == kept  # its values were shared, and stay
        assert [s.invocation_id for s in await codex.invocations()] == ["kept"]

    async def test_delete_of_an_unknown_invocation_is_no_error(self, codex: Codex) -> None:
        await codex.put("kept", make_seal(1))
        assert await codex.delete("nobody") is False
        assert len(await codex.list("kept")) == 1

    async def test_a_deleted_id_starts_a_fresh_history(self, codex: Codex) -> None:
        old = make_seal(1, {"n": 1})
        await codex.put_next("inv", old, expected_latest=None)
        await codex.delete("inv")
        new = make_seal(1, {"n": 2})
        await codex.put_next("inv", new, expected_latest=None)  # nothing is expected
        assert await codex.list("inv") == [new]
        assert [s.seals for s in await codex.invocations()] == [1]

    # ------------------------------------------------------------ sharing

    async def test_a_second_object_sees_the_same_history(
        self, codex: Codex, reopen: Reopen
    ) -> None:
        other = reopen(codex)
        if other is None:
            pytest.skip("this Codex is not shared between objects")
        try:
            first = make_seal(1, {"messages": ["a"]})
            await codex.put_next("inv", first, expected_latest=None)
            got = await other.get("inv")
            assert got == first
            second = make_seal(2, {"messages": ["a", "b"]}, parent=first.seal_id)
            await other.put_next("inv", second, expected_latest=first.seal_id)
            with pytest.raises(SealError):
                await codex.put_next("inv", make_seal(2), expected_latest=first.seal_id)
            third = make_seal(3, {"messages": ["a", "b", "c"]}, parent=second.seal_id)
            await codex.put_next("inv", third, expected_latest=second.seal_id)
            history = await other.list("inv")
            assert [s.aether["messages"] for s in history] == [["a"], ["a", "b"], ["a", "b", "c"]]
        finally:
            await other.aclose()

    async def test_aclose_is_idempotent(self, codex: Codex) -> None:
        await codex.put("inv", make_seal(1))
        await codex.aclose()
        await codex.aclose()
