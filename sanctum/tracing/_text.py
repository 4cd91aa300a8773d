"""Escaping and formatting shared by the trace viewer's modules.

Every piece of text that comes from a trace file passes through :func:`esc` before it
reaches the HTML — element content, attribute values and SVG text alike.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

__all__ = ["compact_json", "esc", "fmt_duration", "pretty_json", "shorten"]


def esc(value: Any) -> str:
    """Escape ``value``'s text for HTML content and quoted attributes.

    Args:
        value: Anything; non-strings are converted with ``str`` first.

    Returns:
        The text with ``& < > " '`` escaped (``html.escape(..., quote=True)``) and lone
        surrogates replaced, safe inside elements, SVG text and attribute values.
    """
    text = value if isinstance(value, str) else str(value)
    text = text.encode("utf-8", "replace").decode("utf-8")
    return html.escape(text, quote=True)


def pretty_json(value: Any) -> str:
    """Indented JSON text of ``value`` (not escaped; pass it through :func:`esc`).

    Args:
        value: JSON data from a trace; anything else is stringified.

    Returns:
        The JSON text, two-space indented, non-ASCII kept readable.
    """
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return _fallback(value)


def compact_json(value: Any) -> str:
    """One-line JSON text of ``value`` (not escaped; pass it through :func:`esc`).

    Args:
        value: JSON data from a trace; anything else is stringified.

    Returns:
        The JSON text on one line, non-ASCII kept readable.
    """
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return _fallback(value)


def fmt_duration(seconds: Any) -> str:
    """Format a duration in seconds for people (``"850 µs"``, ``"12.3 ms"``, ``"4.20 s"``).

    Args:
        seconds: A number of seconds; anything else gives ``"—"``.

    Returns:
        A short human-readable duration.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return "—"
    if not math.isfinite(seconds) or seconds < 0:
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    if seconds < 120:
        return f"{seconds:.2f} s"
    return f"{seconds / 60:.1f} min"


def shorten(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters, ending with an ellipsis if cut.

    Args:
        text: The text to cut.
        limit: Maximum length in characters (at least 1).

    Returns:
        ``text`` itself or its first ``limit - 1`` characters plus ``"…"``.
    """
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def _fallback(value: Any) -> str:
    try:
        return str(value)
    except Exception:  # RecursionError and friends: never let a trace break the viewer
        return f"<{type(value).__name__} too deeply nested to show>"
