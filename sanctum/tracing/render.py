"""Turn a trace file into a self-contained HTML viewer.

One output file, no server, no external requests: all CSS is inline, there is no
script, a Content-Security-Policy forbids every fetch, and the graph is a static SVG
laid out in Python (:mod:`sanctum.tracing.layout`). Every value read from the trace is
escaped, so a delta holding ``<script>`` or ``</svg>`` shows as text.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from sanctum.tracing.document import READABLE_VERSIONS, TRACE_FORMAT, expand
from sanctum.tracing.page import build_page

__all__ = ["load_trace", "render_trace"]


def load_trace(trace_path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a ``.sanctum-trace.json`` file.

    Args:
        trace_path: The trace file written by a TraceRecorder.

    Returns:
        The trace document in its readable form (:func:`sanctum.tracing.document.expand`):
        ``supersteps``, ``deltas`` and ``spell_calls`` rather than the stored rows.

    Raises:
        FileNotFoundError: If the file does not exist.
        ValueError: If it is not UTF-8 JSON, not a sanctum trace, or of another
            version (the message names the file and what to do).
    """
    path = Path(trace_path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not a sanctum trace: it is not UTF-8 text ({exc})") from exc
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a number too long
        if isinstance(exc, json.JSONDecodeError):
            detail = exc.msg
        elif isinstance(exc, RecursionError):
            detail = "nested too deep"
        else:
            detail = "a number too long to read"
        raise ValueError(
            f"{path} is not a sanctum trace: invalid JSON ({detail}); "
            "write traces with TraceRecorder or `sanctum run --trace`"
        ) from exc
    if not isinstance(document, dict) or document.get("format") != TRACE_FORMAT:
        raise ValueError(
            f'{path} is not a sanctum trace: expected a JSON object with "format": "{TRACE_FORMAT}"'
        )
    version = document.get("version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        readable = " and ".join(str(v) for v in READABLE_VERSIONS)
        raise ValueError(
            f"{path} is a sanctum trace of version {version!r}, but this sanctum reads "
            f"versions {readable}; render it with the sanctum that recorded it"
        )
    return expand(document)


def render_trace(
    trace_path: str | os.PathLike[str], html_path: str | os.PathLike[str] | None = None
) -> Path:
    """Render a trace file into a self-contained HTML viewer.

    Args:
        trace_path: The ``.sanctum-trace.json`` file to read.
        html_path: Where to write the HTML; defaults to ``trace_path`` with an
            ``.html`` suffix.

    Returns:
        The path of the written HTML file.

    Raises:
        FileNotFoundError: If ``trace_path`` does not exist.
        ValueError: If the file is not a sanctum trace of a supported version, or
            ``html_path`` is the trace file itself.
        OSError: If the HTML file cannot be written (the message names it).
    """
    source = Path(trace_path)
    target = Path(html_path) if html_path is not None else source.with_suffix(".html")
    if target.exists() and source.exists() and os.path.samefile(target, source):
        raise ValueError(
            f"{target} is the trace itself; choose another file for the HTML (-o OUT.html)"
        )
    document = load_trace(source)
    page = build_page(document, source=source.name)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".trace-", suffix=".html.tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
                handle.write(page)
            os.chmod(temp, 0o644)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OSError(
            exc.errno, f"cannot write the HTML to {target}: {exc.strerror or exc}"
        ) from exc
    return target
