"""Frontier: a tuple of Sigil names that also compares equal to a list."""

from __future__ import annotations

import json
import pickle

from sanctum import END
from sanctum.codex import InvocationSummary, Seal
from sanctum.codex.frontier import END_NAME, Frontier


def test_end_name_is_the_engines_end() -> None:
    assert END_NAME == END


def test_equality_with_lists_and_tuples_both_ways() -> None:
    frontier = Frontier(["a", "b"])
    assert frontier == ["a", "b"]
    assert frontier == ("a", "b")
    assert ["a", "b"] == frontier  # noqa: SIM300 (the reflected comparison)
    assert frontier != ["b", "a"]
    assert frontier != ["a"]
    assert frontier != "ab"
    assert hash(frontier) == hash(("a", "b"))
    assert repr(frontier) == "('a', 'b')"


def test_it_survives_pickle_and_json() -> None:
    frontier = Frontier(["a"])
    again = pickle.loads(pickle.dumps(frontier))
    assert type(again) is Frontier
    assert again == ["a"]
    assert json.loads(json.dumps(frontier)) == ["a"]


def test_finished() -> None:
    assert Frontier().finished
    assert Frontier([END]).finished
    assert not Frontier(["a", END]).finished


def test_a_seal_keeps_any_sequence_as_a_frontier() -> None:
    seal = Seal(aether={}, frontier=["x"], superstep=1)  # type: ignore[arg-type]
    assert type(seal.frontier) is Frontier
    assert seal == Seal(
        aether={}, frontier=("x",), superstep=1, timestamp=seal.timestamp, seal_id=seal.seal_id
    )


def test_a_summary_ending_at_end_is_done() -> None:
    def summary(frontier: tuple[str, ...]) -> InvocationSummary:
        return InvocationSummary("i", 1, 1, frontier, 0.0, {})

    assert summary((END,)).status == "done"
    assert summary(()).status == "done"
    assert summary(("a",)).status == "incomplete"
