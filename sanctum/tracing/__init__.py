"""Tracing — reading the ritual's signs after the fact, local-first.

:class:`TraceRecorder` is a Ward that records one Invocation into a
``.sanctum-trace.json`` file; :func:`render_trace` turns such a file into one
self-contained HTML viewer (no server, no network).
"""

from sanctum.tracing.recorder import TraceRecorder
from sanctum.tracing.render import render_trace

__all__ = ["TraceRecorder", "render_trace"]
