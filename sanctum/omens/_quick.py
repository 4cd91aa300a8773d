"""What is left of the quicker Omen constructors: nothing to do.

Omens used to get an ``__init__`` generated with ``exec`` here. The four Omens built
every superstep now have hand-written constructors beside the loop
(:mod:`sanctum.ritual._omens`), and a Ward that records Omens takes supersteps whole
through the Ward contract (:class:`sanctum.wards.base.ObservesOmens`), so no
generated code is left: :func:`quicken` returns the class as it is, for the callers
that still apply it.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["quicken"]

_T = TypeVar("_T")


def quicken(cls: type[_T]) -> type[_T]:
    """Return ``cls`` unchanged (the stock dataclass ``__init__`` is kept).

    Args:
        cls: An Omen dataclass.

    Returns:
        ``cls`` itself.
    """
    return cls
