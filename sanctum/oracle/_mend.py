"""Private tiers of :func:`sanctum.oracle.robust.extract_json`.

Where JSON may hide in model output (the candidates, in the specification's order) and
the mends that make it parse: the specification's simple mends, a string-aware
linear rewrite for the habits of small models, and the json_repair library on small,
shallow inputs. Every function is linear in its input and never raises.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "FENCE_JSON",
    "TOOL_CALL_CLOSE",
    "TOOL_CALL_OPEN",
    "candidates",
    "closes_single_quote",
    "json_repair_tier",
    "loads",
    "looks_cut_off",
    "normalise",
    "simple_mends",
    "top_level_objects",
]

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
FENCE_JSON = re.compile(r"```[ \t]*json[ \t]*", re.IGNORECASE)
_JSON_REPAIR_MAX_CHARS = 8 * 1024
_JSON_REPAIR_MAX_DEPTH = 8


def loads(text: str, *, strict: bool = True) -> Any:
    """Parse ``text`` as JSON, returning ``None`` on any failure (never raises)."""
    try:
        return json.loads(text, strict=strict)
    except (ValueError, RecursionError):
        return None


def _fenced_json(text: str) -> str | None:
    """The body of the first ```json fence (to the end when it is never closed)."""
    match = FENCE_JSON.search(text)
    if match is None:
        return None
    start = match.end()
    end = text.find("```", start)
    return text[start:] if end < 0 else text[start:end]


def _tagged(text: str, open_tag: str, close_tag: str) -> str | None:
    """The body of the first ``open_tag ... close_tag`` pair (to the end if unclosed)."""
    start = text.find(open_tag)
    if start < 0:
        return None
    start += len(open_tag)
    end = text.find(close_tag, start)
    return text[start:] if end < 0 else text[start:end]


def _brace_region(text: str) -> str | None:
    """From the first ``{`` to the last ``}`` (or to the end when none closes)."""
    start = text.find("{")
    if start < 0:
        return None
    end = text.rfind("}")
    return text[start:] if end < start else text[start : end + 1]


def simple_mends(candidate: str) -> list[tuple[str, str]]:
    """The specification's simple mends: closing braces, then single quotes."""
    mends: list[tuple[str, str]] = []
    missing = candidate.count("{") - candidate.count("}")
    closed = candidate + "}" * missing if missing > 0 else candidate
    if missing > 0:
        plural = "s" if missing > 1 else ""
        mends.append((closed, f"appended {missing} missing closing brace{plural}"))
    if '"' not in candidate and "'" in candidate and "\\'" not in candidate:
        mends.append((candidate.replace("'", '"'), "swapped single quotes for double quotes"))
        if missing > 0:
            mends.append(
                (
                    closed.replace("'", '"'),
                    "swapped single quotes for double quotes and appended closing braces",
                )
            )
    return mends


class _Truncated(Exception):
    """The text ends inside a string or before a value: it was cut off."""


def normalise(candidate: str) -> tuple[str, int] | None:
    """Rewrite JSON-ish text into JSON in one linear pass (string-aware).

    Starts at the first ``{`` and stops where that object closes. Converts
    single-quoted strings, Python literals (True/False/None), bare keys and trailing
    commas; drops ``//`` comments; closes every bracket left open. Returns the
    rewritten text and the maximum nesting depth seen, or ``None`` when there is no
    ``{`` or the text was cut off inside a string or right after a key: a value that
    may be incomplete is never guessed (a truncated path or command must not run).
    """
    try:
        return _normalise(candidate)
    except _Truncated:
        return None


def _normalise(candidate: str) -> tuple[str, int] | None:
    start = candidate.find("{")
    if start < 0:
        return None
    out: list[str] = []
    stack: list[str] = []
    open_count = {"}": 0, "]": 0}
    depth = 0
    n = len(candidate)
    i = start
    while i < n:
        ch = candidate[i]
        if ch == '"' or ch == "'":
            i = _copy_string(candidate, i, out)
            continue
        if ch in "{[":
            closer = "}" if ch == "{" else "]"
            stack.append(closer)
            open_count[closer] += 1
            depth = max(depth, len(stack))
            out.append(ch)
        elif ch in "}]":
            if open_count[ch]:
                while stack[-1] != ch:  # close what the model forgot, innermost first
                    inner = stack.pop()
                    open_count[inner] -= 1
                    out.append(inner)
                stack.pop()
                open_count[ch] -= 1
                out.append(ch)
            if not stack:
                return "".join(out), depth
        elif ch == ",":
            j = i + 1
            while j < n and candidate[j] in " \t\r\n":
                j += 1
            if j >= n or candidate[j] not in "}]":
                out.append(ch)
        elif ch == "/" and i + 1 < n and candidate[i + 1] == "/":
            end = candidate.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (candidate[j].isalnum() or candidate[j] == "_"):
                j += 1
            word = candidate[i:j]
            k = j
            while k < n and candidate[k] in " \t\r\n":
                k += 1
            if k < n and candidate[k] == ":":
                out.append(json.dumps(word))
            else:
                out.append({"True": "true", "False": "false", "None": "null"}.get(word, word))
            i = j
            continue
        else:
            out.append(ch)
        i += 1
    text = "".join(out).rstrip(", \t\r\n")
    if text.endswith(":"):
        raise _Truncated
    return text + "".join(reversed(stack)), depth


def _copy_string(text: str, i: int, out: list[str]) -> int:
    """Copy the string literal starting at ``text[i]`` as a JSON string; return its end."""
    quote = text[i]
    n = len(text)
    j = i + 1
    if quote == '"':
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == '"':
                out.append(text[i : j + 1])
                return j + 1
            j += 1
        raise _Truncated
    parts: list[str] = ['"']
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n:
            nxt = text[j + 1]
            parts.append("'" if nxt == "'" else c + nxt)
            j += 2
            continue
        if c == "'" and closes_single_quote(text, j):
            break
        parts.append('\\"' if c == '"' else c)
        j += 1
    if j >= n:  # never closed: the text was cut off inside this string
        raise _Truncated
    parts.append('"')
    out.append("".join(parts))
    return j + 1


def closes_single_quote(text: str, i: int) -> bool:
    """Whether the ``'`` at ``text[i]`` ends a single-quoted string.

    It does when what follows (after spaces) can follow a JSON value or key — ``,``
    ``}`` ``]`` ``:`` or the end — so that the apostrophe in ``'don't'`` stays text.
    """
    j = i + 1
    n = len(text)
    while j < n and text[j] in " \t\r\n":
        j += 1
    return j >= n or text[j] in ",}]:"


def _nesting_depth(text: str) -> int:
    """Maximum bracket nesting of ``text``, ignoring strings (a cheap upper bound)."""
    depth = best = 0
    for ch in text:
        if ch in "{[":
            depth += 1
            best = max(best, depth)
        elif ch in "}]" and depth:
            depth -= 1
    return best


def json_repair_tier(candidate: str) -> Any:
    """Last tier: the json_repair library, on small, shallow candidates only."""
    if len(candidate) > _JSON_REPAIR_MAX_CHARS or "{" not in candidate:
        return None
    if _nesting_depth(candidate) > _JSON_REPAIR_MAX_DEPTH:
        return None
    try:
        import json_repair  # lazy: a third-party package, never loaded by `import sanctum`
    except ImportError:  # pragma: no cover - json-repair is a core dependency
        return None
    text = candidate[candidate.find("{") :]
    words = _quoted_words(text)
    if words is None:
        return None
    try:
        value = json_repair.loads(text)
    except Exception:  # the library must never break the repair layer
        return None
    try:
        written = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None
    kept = set(_WORD.findall(written))
    if not words <= kept:
        return None  # it dropped quoted text ("a" "b" -> "a"): a guess, not a mend
    return value


_WORD = re.compile(r"\w+")


def _string_end(text: str, i: int) -> int:
    """Where the string opened by the quote at ``text[i]`` closes (``len(text)``: never).

    Backslash escapes are skipped; a ``'`` closes a single-quoted string only where
    :func:`closes_single_quote` says so.
    """
    quote = text[i]
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == quote and (quote == '"' or closes_single_quote(text, j)):
            return j
        j += 1
    return n


def looks_cut_off(text: str) -> bool:
    """Whether JSON-ish ``text`` stops inside a string or right after a key (one pass)."""
    start = text.find("{")
    return start >= 0 and _quoted_words(text[start:]) is None


def _quoted_words(text: str) -> set[str] | None:
    """The words inside the quoted strings of ``text``, or None when it looks cut off.

    Cut off means: it ends inside a string, or a key has no value (``"a": }`` or a
    trailing ``"a":``). json_repair would fill those in (an empty string, a closed
    string); the repair layer asks the model again instead. One linear pass.
    """
    words: set[str] = set()
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch == '"' or ch == "'":
            j = _string_end(text, i)
            if j >= n:
                return None
            words.update(_WORD.findall(text[i + 1 : j]))
            i = j + 1
            continue
        if ch == ":":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j >= n or text[j] in ",}]":
                return None
        i += 1
    return words


def candidates(text: str) -> list[tuple[str, str]]:
    """The places JSON may hide in ``text``, in the specification's order."""
    found: list[tuple[str, str]] = []
    fenced = _fenced_json(text)
    if fenced is not None:
        found.append((fenced.strip(), "a fenced json block"))
    tagged = _tagged(text, TOOL_CALL_OPEN, TOOL_CALL_CLOSE)
    if tagged is not None:
        found.append((tagged.strip(), "a <tool_call> tag"))
    region = _brace_region(text)
    if region is not None:
        found.append((region, "the outermost brace region"))
    found.append((text.strip(), "the raw text"))
    unique: list[tuple[str, str]] = []
    seen: set[str] = set()
    for candidate, where in found:
        if candidate and candidate not in seen:
            seen.add(candidate)
            unique.append((candidate, where))
    return unique


def top_level_objects(text: str, limit: int) -> list[tuple[int, int]]:
    """Spans of balanced top-level ``{...}`` regions, in one string-aware pass.

    Inside a region, double- and single-quoted strings are skipped (a ``'`` closes a
    string only where :func:`closes_single_quote` says so), so a brace inside a value
    never splits or joins calls. At most ``limit`` spans.
    """
    spans: list[tuple[int, int]] = []
    depth = 0
    start = -1
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if depth and (ch == '"' or ch == "'"):
            i = _string_end(text, i) + 1
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
                if len(spans) >= limit:
                    break
        i += 1
    return spans
