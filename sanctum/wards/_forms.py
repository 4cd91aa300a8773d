"""How a secret may be written down: escaped, encoded, or cut short.

The literal values of a Secrets policy (the masking policy of
:mod:`sanctum.wards.secrets`) reach text in more forms than their raw characters. An
API key with a ``"``, a ``\\``, a newline or an ``é`` in it is written differently by
``json.dumps`` (``\\"``, ``\\\\``, ``\\n``, ``\\u00e9``), by ``repr`` (``\\\\``,
``\\n``, ``\\'``, ``\\xe9``), by an HTML or XML writer (``&quot;``, ``&#10;``), by
percent-encoding (``%22``, ``%C3%A9``) — and a JSON document quoted inside another, or
inside a ``repr``, doubles its backslashes again. A message cut at a length limit keeps
only the front (or the back) of a secret.

Two tools, both built once per policy:

* :func:`escaped_pattern` — the regular expression of one value in any of those forms,
  nested to any depth: every character a writer may escape matches its raw form and each
  escape of it, after any run of backslashes. Characters no writer escapes (ASCII
  letters, digits, ``_ . ~ -``) match only themselves, so a plain API key gives the same
  pattern as :func:`re.escape`, and costs nothing more to look for.
* :class:`Fragments` — what a cut left: a piece of at least :data:`FRAGMENT_CHARS` (4)
  characters of a written form of a value of :data:`FRAGMENT_SECRET_CHARS` (8) or more
  characters, standing right before a cut marker (:data:`CUT_MARKERS`) or at the end of
  the text (the front of the value), or right after a cut marker or at the start of the
  text (its back). A piece of 4 or 5 characters counts only when it is not a plain word
  or number (letters only, or digits only): ``SEKR…`` and ``2024`` stay, ``sk-l…`` is
  masked; from 6 characters every piece counts. Runs of backslashes are compared as
  one, so a cut piece of a JSON-in-JSON body is found too.

Standard library only.
"""

from __future__ import annotations

import html
import json
import re
import string
from collections.abc import Callable, Iterable, Iterator

__all__ = [
    "CUT_MARKERS",
    "FRAGMENT_CHARS",
    "FRAGMENT_SECRET_CHARS",
    "Fragments",
    "decoded",
    "escaped_pattern",
    "mask_spans",
]

FRAGMENT_CHARS = 4
"""The shortest piece of a cut secret that is masked (a piece of 4 or 5 characters
only when it mixes letters, digits or punctuation)."""

FRAGMENT_SECRET_CHARS = 8
"""Values shorter than this many characters are never masked by their pieces."""

CUT_MARKERS = ("…", "...", "\\u2026")
"""What marks a cut: an ellipsis, three dots, or the ellipsis JSON-escaped."""

_WORD_PIECE_CHARS = 6
"""From this length a piece counts even when it is a plain word or number."""

_PLAIN = frozenset(string.ascii_letters + string.digits + "_.~-")
"""Characters no writer escapes: JSON, repr, HTML/XML and percent-encoding leave them."""

_NAMED = {'"': "quot", "'": "apos", "&": "amp", "<": "lt", ">": "gt"}
_LETTERS = {"\n": "n", "\t": "t", "\r": "r", "\b": "b", "\f": "f"}
_BACKSLASHES = re.compile(r"\\{2,}")
_CUT = re.compile(r"(?:…|\.{3,}|\\u2026)+")


def _char_pattern(char: str) -> str:
    """The regex of one character in any written form (see the module docstring)."""
    if char in _PLAIN:
        return re.escape(char)
    code = ord(char)
    data = char.encode("utf-8", "surrogatepass")
    exact = [re.escape(char), rf"&(?:amp;)*#0*{code};"]
    if char in _NAMED:
        exact.append(rf"&(?:amp;)*{_NAMED[char]};")
    if char in _LETTERS:
        exact.append("\\\\" + _LETTERS[char])
    if char == " ":
        exact.append(r"\+")
    hexed = [rf"&(?:amp;)*#x0*{code:x};", "".join(rf"%(?:25)*{b:02x}" for b in data)]
    if code <= 0xFF:
        hexed.append(rf"\\x{code:02x}")
    if code <= 0xFFFF:
        hexed.append(rf"\\u{code:04x}")
    else:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        hexed.extend((rf"\\u{high:04x}\\+u{low:04x}", rf"\\U{code:08x}"))
    if code > 0x7F:
        hexed.append("".join(rf"\\+x{b:02x}" for b in data))
    return rf"(?:\\*(?:{'|'.join(exact)}|(?i:{'|'.join(hexed)})))"


def escaped_pattern(secret: str) -> str:
    """The regex that finds ``secret`` written raw, escaped or encoded, nested to any depth.

    Args:
        secret: The literal value.

    Returns:
        A regex source (no anchors, no flags outside scoped groups); for a value made
        only of ASCII letters, digits and ``_ . ~ -`` it equals ``re.escape(secret)``.
    """
    return "".join(_char_pattern(char) for char in secret)


def decoded(secret: str) -> str | None:
    """``secret`` percent-decoded when it holds ``%XX`` escapes (``p%40ss`` → ``p@ss``).

    Returns:
        The decoded text, or None when decoding changes nothing.
    """
    if "%" not in secret:
        return None
    from urllib.parse import unquote

    text = unquote(secret, errors="surrogateescape")
    return text if text != secret else None


def _quoted(plus: bool) -> Callable[[str], str]:
    from urllib.parse import quote, quote_plus

    encode = quote_plus if plus else quote

    def write(text: str) -> str:
        return encode(text, safe="", errors="surrogatepass")

    return write


def _writers() -> tuple[Callable[[str], str], ...]:
    return (
        lambda s: s,
        lambda s: json.dumps(s)[1:-1],
        lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
        lambda s: repr(s)[1:-1],
        lambda s: repr(s + "'\"")[1:-4],  # the form inside a repr that escapes ' quotes
        lambda s: ascii(s)[1:-1],
        lambda s: repr(s.encode("utf-8", "surrogatepass"))[2:-1],
        html.escape,
        lambda s: html.escape(json.dumps(s, ensure_ascii=False)[1:-1]),
        _quoted(plus=False),
        _quoted(plus=True),
    )


def _forms(secret: str) -> Iterator[str]:
    """Each written form of ``secret``, runs of backslashes made one (duplicates too)."""
    for write in _writers():
        yield _BACKSLASHES.sub(r"\\", write(secret))


def _counts(piece: str) -> bool:
    """Whether a piece left by a cut is masked (not a short plain word or number)."""
    if len(piece) >= _WORD_PIECE_CHARS:
        return True
    return len(piece) >= FRAGMENT_CHARS and not (piece.isalpha() or piece.isdigit())


class Fragments:
    """Finds what a cut left of long secret values (see the module docstring).

    Args:
        secrets: The literal values; those under :data:`FRAGMENT_SECRET_CHARS`
            characters are left out.
    """

    __slots__ = ("_ends", "_reach", "_starts")

    def __init__(self, secrets: Iterable[str]) -> None:
        ends: dict[str, list[tuple[str, int]]] = {}
        starts: dict[str, list[tuple[str, int]]] = {}
        forms: set[str] = set()
        for secret in secrets:
            if len(secret) >= FRAGMENT_SECRET_CHARS:
                forms.update(_forms(secret))
        size = FRAGMENT_CHARS
        for form in forms:
            for end in range(size, len(form) + 1):
                ends.setdefault(form[end - size : end], []).append((form, end))
            for start in range(len(form) - size + 1):
                starts.setdefault(form[start : start + size], []).append((form, start))
        self._ends = ends
        self._starts = starts
        self._reach = 8 * max((len(form) for form in forms), default=0) + 16

    def __bool__(self) -> bool:
        return bool(self._ends)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where pieces of secrets stand in ``text``, as ``(start, end)`` pairs.

        Looks at the end and the start of ``text`` and at each run of cut markers.
        """
        found: list[tuple[int, int]] = []
        if len(text) < FRAGMENT_CHARS or not self._ends:
            return found
        last, first = text[-FRAGMENT_CHARS:], text[:FRAGMENT_CHARS]
        if last in self._ends or "\\" in last:  # (the quick no, inline: most texts)
            self._front(text, len(text), found)
        if first in self._starts or "\\" in first:
            self._back(text, 0, found)
        if "…" in text or ("\\" in text and "\\u2026" in text) or "..." in text:
            for cut in _CUT.finditer(text):
                self._front(text, cut.start(), found)
                self._back(text, cut.end(), found)
        return found

    def _front(self, text: str, end: int, found: list[tuple[int, int]]) -> None:
        """A front piece of a secret that ends at ``end``."""
        if end < FRAGMENT_CHARS:
            return
        last = text[end - FRAGMENT_CHARS : end]
        if "\\" not in last and last not in self._ends:
            return
        low = max(0, end - self._reach)
        raw = text[low:end]
        window = _BACKSLASHES.sub(r"\\", raw) if "\\" in raw else raw
        best = 0
        for form, size in self._ends.get(window[-FRAGMENT_CHARS:], ()):
            if size > best and window.endswith(form[:size]) and _counts(form[:size]):
                best = size
        if best:
            found.append((low + _start_of(raw, best), end))

    def _back(self, text: str, start: int, found: list[tuple[int, int]]) -> None:
        """A back piece of a secret that starts at ``start``."""
        first = text[start : start + FRAGMENT_CHARS]
        if len(first) < FRAGMENT_CHARS or ("\\" not in first and first not in self._starts):
            return
        raw = text[start : start + self._reach]
        window = _BACKSLASHES.sub(r"\\", raw) if "\\" in raw else raw
        best = 0
        for form, at in self._starts.get(window[:FRAGMENT_CHARS], ()):
            piece = form[at:]
            if len(piece) > best and window.startswith(piece) and _counts(piece):
                best = len(piece)
        if best:
            found.append((start, start + _end_of(raw, best)))


def _start_of(raw: str, count: int) -> int:
    """Where the last ``count`` characters of ``raw`` begin, a backslash run counting one."""
    at = len(raw)
    for _ in range(count):
        at -= 1
        while at > 0 and raw[at] == "\\" and raw[at - 1] == "\\":
            at -= 1
    return at


def _end_of(raw: str, count: int) -> int:
    """Where the first ``count`` characters of ``raw`` end, a backslash run counting one."""
    at = 0
    for _ in range(count):
        if raw[at] == "\\":
            while at + 1 < len(raw) and raw[at + 1] == "\\":
                at += 1
        at += 1
    return at


def mask_spans(text: str, spans: list[tuple[int, int]], mask: str) -> str:
    """``text`` with each span (merged where they overlap) replaced by ``mask``."""
    if not spans:
        return text
    spans.sort()
    pieces: list[str] = []
    cursor = 0
    start, end = spans[0]
    for next_start, next_end in spans[1:]:
        if next_start < end:
            end = max(end, next_end)
            continue
        pieces.extend((text[cursor:start], mask))
        cursor = end
        start, end = next_start, next_end
    pieces.extend((text[cursor:start], mask, text[end:]))
    return "".join(pieces)
