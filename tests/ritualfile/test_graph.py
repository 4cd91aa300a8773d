from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.ritualfile import load_ritual, ritual_graph

ROOT = Path(__file__).resolve().parents[2]


def test_mermaid_of_triage() -> None:
    text = ritual_graph(load_ritual(ROOT / "rituals" / "triage.yaml"))
    assert text.startswith("flowchart TD\n")
    assert "  start --> s0\n" in text
    assert '  s1 -->|"category == #39;billing#39;"| s2\n' in text or (
        "category == 'billing'" in text
    )
    assert '  s5 -.->|"on_error"| s6\n' in text
    assert '  s0["classify<br/><i>oracle</i>"]' in text


def test_dot_and_join_shape() -> None:
    text = ritual_graph(load_ritual(ROOT / "rituals" / "research.yaml"), "dot")
    assert text.startswith('digraph "research" {')
    assert '"gather" [shape=hexagon' in text
    assert '"START" -> "scout_history";' in text
    with pytest.raises(ValueError, match="unknown graph format"):
        ritual_graph(load_ritual(ROOT / "rituals" / "research.yaml"), "svg")
