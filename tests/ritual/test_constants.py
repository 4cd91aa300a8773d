"""START, END and the default recursion limit."""

from sanctum import END, START
from sanctum.ritual import DEFAULT_RECURSION_LIMIT, Ritual


def test_values() -> None:
    assert START == "__start__"
    assert END == "__end__"
    assert DEFAULT_RECURSION_LIMIT == 25


def test_compile_default_recursion_limit() -> None:
    ritual = Ritual().add_sigil("a", lambda x: {}).set_entry_point("a").add_edge("a", END)
    assert ritual.compile().recursion_limit == DEFAULT_RECURSION_LIMIT
