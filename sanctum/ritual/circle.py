"""Circles: a whole Rite mounted as one Sigil of another.

Circle — a subgraph. ``circle(name, rite)`` returns an async Sigil that runs the inner
Rite on the outer Aether (filtered to the inner schema's Conduits when it has one). Every
inner Omen is echoed outward as ``CircleEchoed(circle=name, omen=inner)`` when someone
listens. The Circle's delta holds only the keys the inner run wrote — each folded
through the inner Conduit's reducer, so an ``append`` Conduit yields just the new
items — which keeps two Circles of one superstep from clashing on keys they merely
received. An inner Interrupt propagates outward: resuming the outer Invocation re-runs
the whole Circle Sigil. An inner failure reaches the outer loop as the inner
SigilExecutionError (its message names the Circle's inner run); the outer Sigil's
``retry_on`` is matched against the original failure it wraps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sanctum.omens.events import CircleEchoed, Omen, Writer
from sanctum.ritual.rite import Rite

__all__ = ["circle"]


def circle(name: str, rite: Rite) -> Callable[[dict[str, Any], Writer], Awaitable[dict[str, Any]]]:
    """Mount a compiled Rite as a single Sigil.

    Args:
        name: The Circle's name, carried by every CircleEchoed Omen.
        rite: The inner compiled Rite (its Codex and Wards, if any, stay in force).

    Returns:
        An async Sigil ``fn(aether, writer) -> delta``.

    Raises:
        TypeError: If ``rite`` is not a Rite or ``name`` is not a non-empty string.
    """
    if not isinstance(rite, Rite):
        raise TypeError(f"circle({name!r}, ...) needs a compiled Rite, got {type(rite).__name__}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"a circle needs a non-empty string name, got {name!r}")
    schema = rite.schema
    keys = frozenset(schema.conduits) if schema is not None else None

    async def circle_sigil(aether: dict[str, Any], writer: Writer) -> dict[str, Any]:
        inner: Mapping[str, Any] = (
            aether if keys is None else {k: v for k, v in aether.items() if k in keys}
        )
        written: dict[str, Any] = {}
        if getattr(writer, "active", True):

            def echo(omen: Omen) -> None:
                writer.emit(CircleEchoed(circle=name, omen=omen))

            await rite._perform(inner, sink=echo, written=written, circle=name)
        else:
            await rite._perform(inner, written=written, circle=name)
        return written

    circle_sigil.__name__ = f"circle_{name}"
    circle_sigil.__qualname__ = circle_sigil.__name__
    return circle_sigil
