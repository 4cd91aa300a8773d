"""Error messages keep the key phrases programs for the original engine match on."""

from __future__ import annotations

from typing import Any

import pytest

from sanctum import END, Ritual, RitualValidationError, SigilPolicy


def _step(aether: dict[str, Any]) -> dict[str, Any]:
    return {}


def test_an_edge_to_an_unknown_sigil() -> None:
    ritual = Ritual().add_sigil("a", _step).set_entry_point("a").add_edge("a", "x")
    with pytest.raises(RitualValidationError, match="unknown Sigil 'x'"):
        ritual.compile()


def test_an_entry_point_that_is_not_bound() -> None:
    ritual = Ritual().add_sigil("a", _step).set_entry_point("x").add_edge("a", END)
    with pytest.raises(RitualValidationError, match="unknown Sigil 'x'"):
        ritual.compile()


def test_a_path_map_to_an_unknown_sigil() -> None:
    ritual = Ritual().add_sigil("a", _step).set_entry_point("a")
    ritual.add_conditional_edge("a", lambda s: "go", {"go": "x", "stop": END})
    with pytest.raises(RitualValidationError, match="unknown Sigil 'x'"):
        ritual.compile()


def test_an_on_error_fallback_that_is_not_bound() -> None:
    ritual = Ritual().add_sigil("a", _step, SigilPolicy(on_error="x")).set_entry_point("a")
    ritual.add_edge("a", END)
    with pytest.raises(RitualValidationError, match="unknown Sigil 'x'"):
        ritual.compile()


def test_a_sigil_without_an_outgoing_edge() -> None:
    ritual = Ritual().add_sigil("a", _step).add_sigil("b", _step).set_entry_point("a")
    ritual.add_edge("a", "b")
    with pytest.raises(RitualValidationError, match="no outgoing edge") as info:
        ritual.compile()
    assert "'b'" in str(info.value)


def test_an_unreachable_sigil() -> None:
    ritual = Ritual().add_sigil("a", _step).add_sigil("island", _step).set_entry_point("a")
    ritual.add_edge("a", END).add_edge("island", END)
    with pytest.raises(RitualValidationError, match="unreachable") as info:
        ritual.compile()
    assert "'island'" in str(info.value)


def test_a_router_naming_an_unknown_sigil() -> None:
    ritual = Ritual().add_sigil("a", _step).set_entry_point("a")
    ritual.add_conditional_edge("a", lambda s: "x")
    with pytest.raises(ValueError, match="unknown Sigil 'x'"):
        ritual.compile().invoke({})
