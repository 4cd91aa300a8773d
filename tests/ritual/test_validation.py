"""compile() validation: the spec's order, and messages naming the Sigils at fault."""

from __future__ import annotations

import pytest

from sanctum import END, Ritual, RitualValidationError, SigilPolicy
from tests.ritual.helpers import noop


def test_missing_entry_point_is_checked_first() -> None:
    # Also unknown targets, unreachable and dead-end sigils: the entry point wins.
    ritual = Ritual().add_sigil("a", noop).add_edge("a", "ghost").add_sigil("b", noop)
    with pytest.raises(RitualValidationError, match="no entry point"):
        ritual.compile()


def test_unknown_edge_target_and_path_map_target() -> None:
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a").add_edge("a", "ghost")
    with pytest.raises(RitualValidationError, match="'ghost'") as info:
        ritual.compile()
    assert info.value.sigils == ("a", "ghost")

    ritual = Ritual().add_sigil("a", noop).set_entry_point("a")
    ritual.add_conditional_edge("a", lambda a: "go", {"go": "phantom", "stop": END})
    with pytest.raises(RitualValidationError, match=r"path_map of 'a'.*'phantom'") as info:
        ritual.compile()
    assert info.value.sigils == ("a", "phantom")


def test_unknown_entry_point_and_unknown_edge_source() -> None:
    with pytest.raises(RitualValidationError, match="'nowhere'"):
        Ritual().add_sigil("a", noop).set_entry_point("nowhere").add_edge("a", END).compile()
    ritual = Ritual().add_sigil("a", noop).set_entry_point("a").add_edge("a", END)
    ritual.add_edge("ghost", "a")
    with pytest.raises(RitualValidationError, match="unknown Sigil 'ghost'"):
        ritual.compile()


def test_references_are_checked_before_on_error() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="nobody"))
    ritual.set_entry_point("a").add_edge("a", "ghost")
    with pytest.raises(RitualValidationError, match="ghost"):
        ritual.compile()


def test_on_error_must_name_a_bound_sigil_other_than_owner() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="nobody"))
    ritual.set_entry_point("a").add_edge("a", END)
    with pytest.raises(RitualValidationError, match=r"on_error of sigil 'a'.*'nobody'") as info:
        ritual.compile()
    assert info.value.sigils == ("a", "nobody")

    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="a"))
    ritual.set_entry_point("a").add_edge("a", END)
    with pytest.raises(RitualValidationError, match="itself") as info:
        ritual.compile()
    assert info.value.sigils == ("a",)

    ritual = Ritual().add_sigil("a", noop).set_entry_point("a").add_edge("a", END)
    with pytest.raises(RitualValidationError, match=r"default policy.*'ghost'"):
        ritual.compile(default_policy=SigilPolicy(on_error="ghost"))


def test_on_error_is_checked_before_reachability() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="a"))
    ritual.add_sigil("island", noop).add_edge("island", END)
    ritual.set_entry_point("a").add_edge("a", END)
    with pytest.raises(RitualValidationError, match="itself"):
        ritual.compile()


def test_unreachable_sigils_are_named_in_bind_order() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("y", noop).add_sigil("x", noop)
    ritual.set_entry_point("a").add_edge("a", END).add_edge("y", END).add_edge("x", "y")
    with pytest.raises(RitualValidationError, match=r"'y', 'x'.*cannot be reached") as info:
        ritual.compile()
    assert info.value.sigils == ("y", "x")


def test_fallbacks_and_dynamic_routers_count_as_reaching() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="rescue"))
    ritual.add_sigil("rescue", noop).add_edge("rescue", END)
    ritual.set_entry_point("a").add_edge("a", END)
    ritual.compile()  # rescue is reachable through on_error

    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).add_edge("b", END)
    ritual.set_entry_point("a").add_conditional_edge("a", lambda a: END)
    ritual.compile()  # a router without path_map may reach b

    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).add_edge("b", END)
    ritual.set_entry_point("a").add_conditional_edge("a", lambda a: "x", {"x": END})
    with pytest.raises(RitualValidationError, match="'b'"):
        ritual.compile()  # with a path_map only its targets count


def test_default_policy_fallback_makes_fallback_reachable() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("rescue", noop)
    ritual.set_entry_point("a").add_edge("a", END).add_edge("rescue", END)
    ritual.compile(default_policy=SigilPolicy(on_error="rescue"))


def test_every_sigil_needs_an_outgoing_edge() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).add_sigil("c", noop)
    ritual.set_entry_point("a").add_edge("a", "b").add_edge("a", "c")
    with pytest.raises(RitualValidationError, match=r"'b', 'c'.*no outgoing edge") as info:
        ritual.compile()
    assert info.value.sigils == ("b", "c")


def test_cycles_are_valid() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop)
    ritual.set_entry_point("a").add_edge("a", "b").add_conditional_edge("b", lambda x: END)
    ritual.compile()
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop)
    ritual.set_entry_point("a").add_edge("a", "b").add_edge("b", "a")
    ritual.compile()  # an endless cycle compiles; recursion_limit bounds it


def test_join_all_needs_a_static_incoming_edge() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("j", noop, join="all")
    ritual.set_entry_point("a").add_conditional_edge("a", lambda x: END).add_edge("j", END)
    with pytest.raises(RitualValidationError, match="join='all' sigil 'j' has no static") as info:
        ritual.compile()
    assert info.value.sigils == ("j",)


def test_join_all_cannot_be_a_path_map_target() -> None:
    ritual = Ritual().add_sigil("a", noop).add_sigil("b", noop).add_sigil("j", noop, join="all")
    ritual.set_entry_point("a").add_edge("a", "j").add_edge("j", END)
    ritual.set_entry_point("b").add_conditional_edge("b", lambda x: "go", {"go": "j"})
    with pytest.raises(RitualValidationError, match="conditional edge of 'b'") as info:
        ritual.compile()
    assert info.value.sigils == ("b", "j")


def test_join_all_cannot_be_an_on_error_fallback() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(on_error="j")).add_sigil("b", noop)
    ritual.add_sigil("j", noop, join="all")
    ritual.set_entry_point("a").set_entry_point("b")
    ritual.add_edge("a", "j").add_edge("b", "j").add_edge("j", END)
    with pytest.raises(RitualValidationError, match="on_error fallback of 'a'") as info:
        ritual.compile()
    assert info.value.sigils == ("a", "j")
