"""A Seal's frontier: the Sigils the next superstep runs, as a tuple that meets lists.

The original engine kept a Seal's frontier as a list, and programs compare it with
one (``seal.frontier == ["transmute"]``). sanctum keeps it immutable, as a
:class:`Frontier` — a tuple of Sigil names that also compares equal to a list holding
the same names in the same order. The last Seal of a finished Invocation has the
frontier ``(END,)``: the run's branches all reached END, and resuming from it does
nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

__all__ = ["END_NAME", "Frontier"]

END_NAME: Final = "__end__"
"""The name of the virtual sink, ``sanctum.END`` (repeated here: the Codex layer sits
below the Ritual layer that defines it; a test keeps the two equal)."""


class Frontier(tuple[str, ...]):
    """The Sigils active in the next superstep, in bind order.

    An immutable tuple of Sigil names — hashable, JSON-serialisable as a list — that
    compares equal to a tuple or a list of the same names in the same order
    (``Frontier(["a"]) == ["a"] == Frontier(["a"])``).

    Args:
        names: The Sigil names (any iterable of str).
    """

    __slots__ = ()

    def __new__(cls, names: Iterable[str] = ()) -> Frontier:
        return super().__new__(cls, names)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return tuple.__eq__(self, tuple(other))
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal: Any = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    @property
    def finished(self) -> bool:
        """True when no Sigil is left to run: empty, or only END."""
        return all(name == END_NAME for name in self)
