"""The BSP scheduler: how a Rite performs an Invocation, superstep by superstep.

Execution follows the bulk-synchronous-parallel superstep model: all frontier Sigils
run concurrently (:mod:`sanctum.ritual.runner`), their deltas merge deterministically in
Sigil insertion order and the edges decide the next frontier (:mod:`sanctum.ritual.algo`),
and the loop (:mod:`sanctum.ritual.loop`) repeats until the frontier empties or holds
only END — bounded by ``recursion_limit``, leaving a Seal after every superstep when a
Codex is attached. This module is the stable import path the specification names; it
re-exports the loop's entry point.
"""

from __future__ import annotations

from sanctum.ritual.loop import Setup, perform_invocation

__all__ = ["Setup", "perform_invocation"]
