"""The fixed points of every Ritual: where it begins, where it ends, how long it may spin.

``START`` and ``END`` are plain strings, so they can be used anywhere a Sigil name is
expected (``add_edge(START, "think")``, a router returning ``END``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_RECURSION_LIMIT", "END", "START"]

START: Final = "__start__"
"""The virtual source of every Invocation: edges from START mark the entry points."""

END: Final = "__end__"
"""The virtual sink: a Sigil routed to END ends its branch of the Invocation."""

DEFAULT_RECURSION_LIMIT: Final = 25
"""Supersteps an Invocation may run before RecursionLimitError (``compile()`` default)."""
