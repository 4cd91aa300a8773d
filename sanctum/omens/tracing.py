"""Tracing at the path the original engine gave it.

``from sanctum.omens.tracing import TraceRecorder, render_trace`` keeps working: both
names are those of :mod:`sanctum.tracing` (re-exported, not copies), where sanctum
keeps its local-first tracing — TraceRecorder, a Ward that records one Invocation to a
``.sanctum-trace.json`` file, and render_trace, which turns such a file into one
self-contained HTML viewer.
"""

from sanctum.tracing.recorder import TraceRecorder
from sanctum.tracing.render import render_trace

__all__ = ["TraceRecorder", "render_trace"]
