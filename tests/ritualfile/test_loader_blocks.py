"""Positions inside ``|`` and ``>`` block scalars, and floats that drop digits written."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.ritualfile.loader import load_yaml_text

LITERAL = """\
sigils:
  speak:
    prompt: |
      Line one.

      Line three {{ here }}.
"""

FOLDED = """\
when: >-
  said is not none
  and said ==

  (
"""


def test_a_literal_block_maps_offsets_to_their_lines() -> None:
    loaded = load_yaml_text(LITERAL)
    path = ("sigils", "speak", "prompt")
    value = loaded.data["sigils"]["speak"]["prompt"]
    assert loaded.position_at(path, 0) == (4, 7)
    assert loaded.position_at(path, value.index("{{")) == (6, 18)


def test_a_folded_block_maps_offsets_to_their_lines() -> None:
    loaded = load_yaml_text(FOLDED)
    value = loaded.data["when"]
    assert value == "said is not none and said ==\n("
    assert loaded.position_at(("when",), value.index("and")) == (3, 3)
    assert loaded.position_at(("when",), value.index("(")) == (5, 3)


def test_a_one_line_value_moves_along_its_line() -> None:
    loaded = load_yaml_text("a: hello there\n")
    assert loaded.position_at(("a",), 6) == (1, 10)


@pytest.mark.parametrize(
    ("text", "lossy"),
    [("3.10", True), ("1.50", True), ("2.0", False), ("3.1", False), ("1e10", False)],
)
def test_floats_that_drop_digits_are_remembered(text: str, lossy: bool) -> None:
    loaded = load_yaml_text(f"v: {text}\nq: '{text}'\n")
    assert (("v",) in loaded.lossy_numbers) is lossy
    assert ("q",) not in loaded.lossy_numbers


def test_only_defaults_not_declared_numbers_warn() -> None:
    loaded = load_yaml_text(
        "inputs:\n"
        "  ratio: {type: number, default: 1.50}\n"
        "aether:\n"
        "  versions: {default: [3.8, 3.10]}\n"
        "  other: {reducer: add, note: 3.10}\n"
    )
    assert [str(w) for w in loaded.warnings()] == [
        "<ritual>:4:29: warning: conduit 'versions': `3.10` in its default is read as the "
        'number 3.1; quote it ("3.10") if it is text, such as a version'
    ]


def test_a_template_mistake_in_a_block_scalar_is_placed_on_its_own_line(tmp_path: Path) -> None:
    from sanctum.ritualfile import check_ritual

    path = tmp_path / "bs.yaml"
    path.write_text(
        "sanctum: 1\nname: bs\n"
        "oracles:\n  bard: {provider: scripted, responses: [x]}\n"
        "aether: {a: {}}\nentry: ask\nsigils:\n  ask:\n    oracle: bard\n"
        "    prompt: |\n      First line is fine.\n      Second too.\n"
        "      Third has a {{ broken\n    output: a\n    next: END\n",
        encoding="utf-8",
    )
    [problem] = check_ritual(path)
    assert (problem.line, problem.column) == (13, 7)
    assert "line 3 of the template" in problem.message
