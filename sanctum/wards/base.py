"""The protective circles drawn around the ritual.

Ward — middleware. A Ward observes and intercepts the engine's work through optional
hooks, all no-ops by default:

* ``on_compile(manifest)``: once, when the Ward is bound to a compiled graph.
* ``before_sigil(name, aether)``: before a Sigil executes (``aether`` is a copy).
* ``after_sigil(name, aether, delta) -> delta``: with the Sigil's delta before it merges
  into the Aether — return it (possibly transformed), or raise WardRejection to veto.
  Transformed deltas are what Seals, Omens and downstream Wards see.
* ``on_omen(omen)``: for every Omen the engine emits, before it reaches the stream.

Wards are registered with ``compile(wards=[...])`` and applied as a pipeline in
registration order: the delta returned by one Ward is the input of the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sanctum.errors import WardRejection
from sanctum.omens.events import Omen

__all__ = ["Ward", "WardRejection"]


class Ward:
    """One circle of protection: observe, transform, or veto.

    Ward — a middleware. Subclass and override any hook; the defaults observe nothing
    and pass deltas through unchanged. Hooks run inside the superstep, so keep them
    fast — offload heavy work.
    """

    def on_compile(self, manifest: Mapping[str, Any]) -> None:
        """Called once when the Ward is bound to a compiled graph.

        ``manifest`` describes the graph: ``{"sigils": [names], "edges": {source:
        [targets]}, "conditional_edges": {source: [targets] or ["*"] when dynamic}}``
        (it may carry more keys, e.g. ``"joins"``). Treat it as read-only.
        """

    async def before_sigil(self, name: str, aether: Mapping[str, Any]) -> None:
        """Called before Sigil ``name`` executes (``aether`` is a copy)."""

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Inspect or transform Sigil ``name``'s delta; return the delta.

        The returned mapping replaces the Sigil's delta for everything downstream (next
        Wards, reducers, Seals, SigilCompleted Omens).

        Raises:
            WardRejection: To veto the delta.
        """
        return delta

    async def on_omen(self, omen: Omen) -> None:
        """Called for every Omen before it reaches the stream."""
