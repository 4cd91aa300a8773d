"""Long histories: what every Codex must keep right when a run goes on for hundreds of
supersteps (mixed into :class:`tests.codex.conformance.CodexConformance`).

A transcript long enough to cross several packs (``PACK_LINKS`` appends each), time
travel into the middle of it, branches sharing its prefix, a transcript nested in a
map, a string grown by appending, and the value-free history listing. Correctness only:
timing lives in ``benchmarks/long_run.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sanctum import END, AetherSchema, Conduit, Ritual
from sanctum.aether.reducers import append
from sanctum.codex import Codex, Seal, new_seal_id
from sanctum.codex._layout import PACK_LINKS

__all__ = ["LongHistoryConformance", "chain", "message"]

TURNS = 3 * PACK_LINKS + 17
"""Long enough for three packs and a run of links after them."""


def message(turn: int, tag: str = "") -> dict[str, Any]:
    """A chat message of about 100 bytes, distinct per turn (and per ``tag``)."""
    return {"role": "user" if turn % 2 else "assistant", "content": f"{tag}turn {turn} " * 8}


async def chain(
    codex: Codex,
    invocation_id: str,
    states: list[dict[str, Any]],
    *,
    parent: Seal | None = None,
) -> list[Seal]:
    """Write one Seal per state with ``put_next``, each continuing the previous one."""
    written: list[Seal] = []
    prev = parent.seal_id if parent is not None else None
    latest = await codex.latest_seal_id(invocation_id)
    start = parent.superstep if parent is not None else 0
    for step, aether in enumerate(states, start=start + 1):
        seal = Seal(
            seal_id=new_seal_id(),
            aether=aether,
            frontier=("talk",),
            superstep=step,
            metadata={"parent": prev},
        )
        await codex.put_next(invocation_id, seal, expected_latest=latest)
        prev = latest = seal.seal_id
        written.append(seal)
    return written


def transcript(turns: int, tag: str = "", base: list[Any] | None = None) -> list[dict[str, Any]]:
    """States of a conversation growing by one message per turn, as the append reducer
    builds them (a new list each turn)."""
    messages: list[Any] = list(base or [])
    states = []
    for turn in range(turns):
        messages = append(messages, [message(turn, tag)])
        states.append({"messages": messages, "turn": turn})
    return states


class LongHistoryConformance:
    """Behaviour over long histories (see the module docstring)."""

    async def test_a_long_run_seals_what_an_uninterrupted_run_computes(self, codex: Codex) -> None:
        def talk(aether: dict[str, Any]) -> dict[str, Any]:
            return {"messages": [message(aether["turn"])], "turn": aether["turn"] + 1}

        def route(aether: dict[str, Any]) -> str:
            return "talk" if aether["turn"] < TURNS else END

        schema = AetherSchema(
            {
                "messages": Conduit(reducer=append, type=list, default=[]),
                "turn": Conduit(type=int, default=0),
            }
        )
        ritual = Ritual(schema)
        ritual.add_sigil("talk", talk)
        ritual.add_conditional_edge("talk", route)
        ritual.set_entry_point("talk")
        final = await ritual.compile(codex=codex, recursion_limit=TURNS + 5).ainvoke(
            {}, invocation_id="long"
        )
        plain = await ritual.compile(recursion_limit=TURNS + 5).ainvoke({})
        assert final == plain
        latest = await codex.get("long")
        assert latest is not None
        assert dict(latest.aether) == plain
        history = await codex.list("long")
        assert [len(seal.aether["messages"]) for seal in history] == list(range(1, TURNS + 1))
        assert all(
            seal.aether["messages"] == plain["messages"][: seal.superstep] for seal in history
        )

    async def test_time_travel_into_the_middle_and_two_branches(self, codex: Codex) -> None:
        trunk = await chain(codex, "tt", transcript(TURNS))
        middle = trunk[PACK_LINKS + 10]
        loaded = await codex.get_seal("tt", middle.seal_id)
        assert loaded is not None
        assert loaded.aether == middle.aether
        base = list(loaded.aether["messages"])
        one = [{**s, "turn": -1} for s in transcript(PACK_LINKS + 5, "one ", base)]
        two = [{**s, "turn": -2} for s in transcript(7, "two ", base)]
        branch_one = await chain(codex, "tt", one, parent=loaded)
        again = await codex.get_seal("tt", middle.seal_id)
        branch_two = await chain(codex, "tt", two, parent=again)
        for seal in (*trunk[::23], trunk[-1], *branch_one[::11], branch_one[-1], *branch_two):
            found = await codex.get_seal("tt", seal.seal_id)
            assert found is not None
            assert found.aether == seal.aether
        latest = await codex.get("tt")
        assert latest is not None
        assert latest.aether == two[-1]

    async def test_a_reopened_store_continues_the_chain(
        self, codex: Codex, reopen: Callable[[Codex], Codex | None]
    ) -> None:
        states = transcript(PACK_LINKS + 20)
        await chain(codex, "again", states[: PACK_LINKS - 3])
        other = reopen(codex) or codex
        try:
            latest = await other.get("again")
            assert latest is not None
            rest = transcript(23, "later ", list(latest.aether["messages"]))
            written = await chain(other, "again", rest, parent=latest)
            for seal in written:
                found = await codex.get_seal("again", seal.seal_id)
                assert found is not None
                assert found.aether == seal.aether
        finally:
            if other is not codex:
                await other.aclose()

    async def test_a_transcript_nested_in_a_map_round_trips(self, codex: Codex) -> None:
        states = []
        messages: list[Any] = []
        for turn in range(PACK_LINKS + 30):
            messages = [*messages, message(turn)]
            chat = {"title": f"talk {turn // 40}", "messages": messages, "meta": {"n": turn}}
            if turn % 50 == 49:
                chat["extra"] = ["x" * 300]  # a key that comes and goes
            states.append({"chat": chat, "turn": turn})
        written = await chain(codex, "nested", states)
        history = await codex.list("nested")
        assert [dict(seal.aether) for seal in history] == states
        assert [seal.seal_id for seal in history] == [seal.seal_id for seal in written]

    async def test_a_string_grown_by_appending_round_trips(self, codex: Codex) -> None:
        log = ""
        states = []
        for turn in range(PACK_LINKS + 30):
            log += f'line {turn}: ✓ caf\u00e9 \U0001f600 "quoted" \\ {"x" * 40}\n'
            if turn == PACK_LINKS + 3:
                log = "rewritten from scratch\n" + log[40:]  # not an append: stored whole
            states.append({"log": log})
        await chain(codex, "text", states)
        history = await codex.list("text")
        assert [seal.aether["log"] for seal in history] == [state["log"] for state in states]

    async def test_lists_that_change_other_than_by_appending(self, codex: Codex) -> None:
        messages = [message(turn) for turn in range(20)]
        states: list[dict[str, Any]] = [
            {"messages": messages},
            {"messages": [*messages, message(20)]},
            {"messages": [message(99), *messages[1:], message(20)]},  # an item replaced
            {"messages": [*messages, message(20), message(23)]},  # replaced back, and grown
            {"messages": [*messages[:5]]},  # shortened
            {"messages": (*messages[:5], message(21))},  # a tuple extending a list
            {"messages": "no longer a list" * 30},
            {"messages": [*messages, message(22)]},
        ]
        await chain(codex, "edits", states)
        history = await codex.list("edits")
        expected = [
            {"messages": list(s["messages"]) if isinstance(s["messages"], tuple) else s["messages"]}
            for s in states
        ]
        assert [dict(seal.aether) for seal in history] == expected

    async def test_history_without_values_reads_no_value(self, codex: Codex) -> None:
        written = await chain(codex, "heads", transcript(PACK_LINKS + 3))
        heads = [seal async for seal in codex.history("heads", values=False)]
        assert [seal.seal_id for seal in heads] == [seal.seal_id for seal in written]
        assert all(dict(seal.aether) == {} for seal in heads)
        assert [seal.metadata["parent"] for seal in heads] == [
            seal.metadata["parent"] for seal in written
        ]
        full = [seal async for seal in codex.history("heads")]
        assert [dict(seal.aether) for seal in full] == [dict(seal.aether) for seal in written]
        assert [seal async for seal in codex.history("nobody")] == []

    async def test_latest_seal_id(self, codex: Codex) -> None:
        assert await codex.latest_seal_id("ids") is None
        written = await chain(codex, "ids", transcript(3))
        assert await codex.latest_seal_id("ids") == written[-1].seal_id

    async def test_the_same_large_value_in_several_conduits(self, codex: Codex) -> None:
        big = [message(turn) for turn in range(40)]
        states = [
            {"a": big, "b": list(big), "c": {"inner": list(big), "n": 1}},
            {"a": [*big, message(40)], "b": list(big), "c": {"inner": list(big), "n": 2}},
            {"a": list(big), "b": list(big), "c": {"inner": [*big, message(41)], "n": 3}},
        ]
        written = await chain(codex, "shared", states)
        for seal in written:
            found = await codex.get_seal("shared", seal.seal_id)
            assert found is not None
            assert dict(found.aether) == dict(seal.aether)
        latest = await codex.get("shared")
        assert latest is not None
        assert dict(latest.aether) == states[-1]

    async def test_values_changed_in_place_and_returned_are_sealed(self, codex: Codex) -> None:
        """A large dict edited in place and returned, a sliding window kept in place:
        the same object, the same size, a different value — what the run holds."""
        task = {"status": "planned", "notes": ["x" * 100] * 60}
        window = [message(turn) for turn in range(40)]

        def work(aether: dict[str, Any]) -> dict[str, Any]:
            task, window = aether["task"], aether["window"]
            task["status"] = f"step {aether['turn']}"
            window.append(message(100 + aether["turn"]))
            window.pop(0)
            return {"task": task, "window": window, "turn": aether["turn"] + 1}

        def route(aether: dict[str, Any]) -> str:
            return "work" if aether["turn"] < 5 else END

        ritual = Ritual()
        ritual.add_sigil("work", work)
        ritual.add_conditional_edge("work", route)
        ritual.set_entry_point("work")
        final = await ritual.compile(codex=codex).ainvoke(
            {"task": task, "window": window, "turn": 0}, invocation_id="inplace"
        )
        latest = await codex.get("inplace")
        assert latest is not None
        assert latest.aether["task"]["status"] == "step 4" == final["task"]["status"]
        assert latest.aether["window"] == final["window"]
        assert latest.aether["window"][0] == message(5)

    async def test_hand_made_seals_reusing_an_edited_list(self, codex: Codex) -> None:
        notes = [message(turn) for turn in range(60)]
        first = Seal(aether={"notes": notes}, frontier=("a",), superstep=1)
        await codex.put("edit", first)
        notes[0] = message(999)  # edited in place, same length
        second = Seal(
            aether={"notes": notes},
            frontier=("a",),
            superstep=2,
            metadata={"parent": first.seal_id},
        )
        await codex.put("edit", second)
        notes.append(message(1000))  # and then grown
        third = Seal(
            aether={"notes": notes},
            frontier=("a",),
            superstep=3,
            metadata={"parent": second.seal_id},
        )
        await codex.put("edit", third)
        history = await codex.list("edit")
        assert history[1].aether["notes"][0] == message(999)
        assert history[2].aether["notes"] == notes

    async def test_equal_but_differently_typed_items_are_not_taken_as_a_prefix(
        self, codex: Codex
    ) -> None:
        base = [message(turn) for turn in range(60)]
        states = [
            {"v": [*base, 1, 0, 1]},
            {"v": [*base, 1.0, -0.0, True, 2]},
        ]
        await chain(codex, "types", states)
        history = await codex.list("types")
        assert history[1].aether["v"][-4:] == [1.0, -0.0, True, 2]
        assert [type(x) for x in history[1].aether["v"][-4:]] == [float, float, bool, int]

    async def test_a_map_whose_keys_share_one_large_value(self, codex: Codex) -> None:
        draft = [message(turn) for turn in range(80)]
        states = [{"doc": {"draft": draft, "final": list(draft), "n": 1}}]
        written = await chain(codex, "twins", states)
        fresh = await codex.get("twins")
        assert fresh is not None
        assert dict(fresh.aether) == states[0]
        found = await codex.get_seal("twins", written[0].seal_id)
        assert found is not None
        assert dict(found.aether) == states[0]
