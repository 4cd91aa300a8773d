"""A veil drawn over what must not be written down.

Redaction before persistence and observability. This Ward masks regex matches (API
keys, emails, ...) in every string of the delta before it merges into the Aether — so
Seals, the SigilCompleted Omens, downstream Wards (place an AuditWard after it), and
the final result only ever see the masked text. It cannot redact what a Sigil already
sent to an external system; it guards sanctum's own outputs.

What is masked: every ``str`` anywhere in the delta, recursing through mappings, lists,
tuples (which stay tuples, named tuples included), sets and frozensets. Keys of
*nested* mappings are masked too — a secret used as a key would otherwise leak into
Seals — while the delta's top-level keys are Conduit names and are left alone. When two
nested keys collapse onto the same masked text, the later ones get a ``" (2)"``,
``" (3)"``... suffix so that no value is lost. ``bytes`` and ``bytearray`` are masked as
UTF-8 text and stay bytes; a dataclass gets its fields masked (a copy, through
``dataclasses.replace``); any other object whose text (``str()``, which audit trails and
traces write) holds a match — an exception quoting a key, your own class — is replaced
by that text, masked. Numbers, ``None`` and objects whose text holds no match pass
through untouched.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from sanctum.wards._forms import Fragments, decoded, escaped_pattern, mask_spans
from sanctum.wards.base import Ward

__all__ = [
    "DEFAULT_MASK",
    "SHORT_SECRET_CHARS",
    "RedactWard",
    "TextMasker",
    "clip",
    "literal_masker",
    "mask_secrets",
    "secret_pattern",
]

DEFAULT_MASK = "[REDACTED]"
"""The text that replaces every match unless another ``mask`` is given."""

SHORT_SECRET_CHARS = 8
"""Secrets shorter than this many characters are masked only where they stand alone."""


def secret_pattern(secret: str) -> str:
    """The regex that finds one secret value (an API key) in text, in any written form.

    The rule: a secret of :data:`SHORT_SECRET_CHARS` (8) characters or more is found
    wherever it occurs, even glued to other text. A shorter one (``"x"``, ``"EMPTY"``,
    a placeholder for a local server) only as a whole token, where no letter, digit or
    underscore touches it on either side (``Bearer x``, ``key=x&``): masking it inside
    words would garble every message (``e[REDACTED]pression``) while hiding nothing
    worth hiding. Either is found raw and as JSON, ``repr``, HTML/XML or percent-encoding
    writes it, nested to any depth (``SEKRIT"42`` also as ``SEKRIT\\"42`` and
    ``SEKRIT%2242``; :func:`~sanctum.wards._forms.escaped_pattern`).
    """
    escaped = escaped_pattern(secret)
    return escaped if len(secret) >= SHORT_SECRET_CHARS else rf"(?<!\w){escaped}(?!\w)"


def mask_secrets(text: str, secrets: Iterable[str], mask: str = DEFAULT_MASK) -> str:
    """``text`` with every secret value replaced by ``mask`` (see :func:`secret_pattern`).

    Longer secrets are masked first, so one that contains another is masked whole;
    empty strings are skipped. A value holding ``%XX`` escapes is masked decoded too,
    and what a cut left of a value of 8 characters or more (its front before ``…`` or
    the end of the text, its back after ``…`` or at the start; at least 4 characters)
    is masked as well (:class:`~sanctum.wards._forms.Fragments`).
    """
    values = [s for s in secrets if s]
    if not values:
        return text
    pattern, pieces = literal_masker(values)
    text = pattern.sub(lambda _: mask, text)
    return mask_spans(text, pieces.spans(text), mask) if pieces else text


class TextMasker(Protocol):
    """Anything that masks a string: a Secrets policy, a RedactWard."""

    def mask_text(self, text: str, /) -> str:
        """``text`` with every secret masked."""
        ...


def clip(text: str, limit: int, masker: TextMasker | None = None, *, marker: str = "…") -> str:
    """``text`` cut to ``limit`` characters, the cut marked — masked first, never after.

    Cutting first would keep the front of a secret the cut went through, which no mask
    then recognises whole; so ``text`` is masked with ``masker`` (when given) and then
    cut, and the cut is marked with ``marker`` so that a masker applied later still
    finds what was left of a secret it knows (:class:`~sanctum.wards._forms.Fragments`:
    the front of a secret right before ``…``).

    Args:
        text: The text to shorten.
        limit: The most characters kept of it (the marker comes on top); >= 0.
        masker: What masks ``text`` first (a ``Secrets``, a RedactWard), or None.
        marker: What replaces the cut-off rest.

    Returns:
        ``text`` masked, then its first ``limit`` characters and ``marker`` when it was
        longer (a mask the cut would split is kept whole, so up to its length more);
        else ``text`` masked whole.
    """
    if masker is not None and text:
        text = masker.mask_text(text)
    if len(text) <= limit:
        return text
    for mask in getattr(masker, "masks", None) or {getattr(masker, "mask", DEFAULT_MASK)}:
        at = text.find(mask, max(0, limit - len(mask) + 1), limit + len(mask) - 1)
        if mask and 0 <= at < limit:  # the cut would split a mask: keep it whole
            limit = at + len(mask)
    return text if len(text) <= limit else text[:limit] + marker


def literal_masker(values: Iterable[str]) -> tuple[re.Pattern[str], Fragments]:
    """The compiled pattern of ``values`` (longest first) and their :class:`Fragments`.

    Args:
        values: Non-empty literal secret values (``%XX``-decoded forms are added).

    Returns:
        ``(pattern, fragments)``, cached for the same values.
    """
    ordered = sorted(set(_with_decoded(values)), key=lambda v: (-len(v), v))
    return _literal_masker(tuple(ordered))


@functools.lru_cache(maxsize=64)
def _literal_masker(values: tuple[str, ...]) -> tuple[re.Pattern[str], Fragments]:
    return re.compile("|".join(secret_pattern(v) for v in values)), Fragments(values)


def _with_decoded(values: Iterable[str]) -> Iterator[str]:
    for value in values:
        yield value
        plain = decoded(value)
        if plain:
            yield plain


class RedactWard(Ward):
    """The veil over secrets: masks patterns in every delta string.

    Ward — a middleware. ``patterns`` is an iterable of regex strings or compiled
    patterns (a single string or pattern is accepted too); every match anywhere in the
    delta is replaced by ``mask``. Matches of different patterns that overlap are
    masked once, as one span; empty matches are ignored (a pattern such as ``x*`` never
    sprinkles masks between characters).

    Args:
        patterns: Regular expressions (``str`` or ``re.Pattern[str]``).
        mask: The replacement text for every match.

    Raises:
        ValueError: If a pattern is not a valid regular expression (the message quotes
            it and the regex error).
        TypeError: If a pattern is neither a string nor a compiled text pattern.

    Example:
        >>> import asyncio
        >>> ward = RedactWard([r"sk-[A-Za-z0-9]{8,}"])
        >>> asyncio.run(ward.after_sigil("s", {}, {"note": "key sk-abcdefgh12"}))
        {'note': 'key [REDACTED]'}
    """

    def __init__(
        self,
        patterns: Iterable[str | re.Pattern[str]] | str | re.Pattern[str],
        mask: str = DEFAULT_MASK,
    ) -> None:
        if isinstance(patterns, str | re.Pattern):
            patterns = [patterns]
        self.mask = str(mask)
        self.patterns: tuple[re.Pattern[str], ...] = tuple(_compile(p) for p in patterns)

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Return a new delta with every match masked.

        Args:
            name: The Sigil whose delta this is.
            aether: The Aether (state) the Sigil saw; unused.
            delta: The delta to mask; it is not modified.

        Returns:
            A new ``dict`` with the same top-level keys and masked values.
        """
        return {key: self.redact(value) for key, value in delta.items()}

    def redact(self, value: Any) -> Any:
        """Mask every match in ``value``, recursing through containers.

        Usable outside the pipeline too, e.g. ``TraceRecorder(path, redact=ward.redact)``
        to mask the Omens a trace records (tokens, raw spell-call text, the input).

        Args:
            value: A string, a container of values, or any other object.

        Returns:
            ``value`` masked: a container in which something was masked is rebuilt; a
            plain dict, list, tuple or set with nothing to mask inside comes back as the
            very same object (so masking a transcript that only grew keeps its items,
            and what holds them, as they were); other objects are returned as is.
        """
        return self._redact(value, set())

    def mask_text(self, text: str) -> str:
        """Mask every match of every pattern in one string.

        Args:
            text: The string to mask.

        Returns:
            ``text`` with each (merged) match span replaced by ``mask``.
        """
        spans: list[tuple[int, int]] = []
        for pattern in self.patterns:
            spans.extend(m.span() for m in pattern.finditer(text) if m.end() > m.start())
        if not spans:
            return text
        spans.sort()
        pieces: list[str] = []
        cursor = 0
        current_start, current_end = spans[0]
        for start, end in spans[1:]:
            if start < current_end:
                current_end = max(current_end, end)
                continue
            pieces.extend((text[cursor:current_start], self.mask))
            cursor = current_end
            current_start, current_end = start, end
        pieces.extend((text[cursor:current_start], self.mask, text[current_end:]))
        return "".join(pieces)

    def _redact(self, value: Any, active: set[int]) -> Any:
        if isinstance(value, str):
            return self.mask_text(str.__str__(value))
        if value is None or isinstance(value, bool | int | float | complex):
            return value
        if isinstance(value, bytes | bytearray):
            text = bytes(value).decode("utf-8", "surrogateescape")
            masked = self.mask_text(text)
            if masked == text:
                return value
            raw = masked.encode("utf-8", "surrogateescape")
            return raw if isinstance(value, bytes) else bytearray(raw)
        if not isinstance(value, Mapping | list | tuple | set | frozenset):
            return self._redact_object(value, active)
        marker = id(value)
        if marker in active:  # a self-containing structure: leave the cycle as is
            return value
        active.add(marker)
        try:
            if isinstance(value, Mapping):
                return self._redact_mapping(value, active)
            items = [self._redact(item, active) for item in value]
            if type(value) in _PLAIN and all(map(operator.is_, items, value)):
                return value  # nothing inside changed: the very object (no copy)
            if isinstance(value, tuple):
                if hasattr(value, "_fields"):
                    return type(value)(*items)
                return tuple(items)
            if isinstance(value, frozenset):
                return frozenset(items)
            if isinstance(value, set):
                return set(items)
            return items
        finally:
            active.discard(marker)

    def _redact_object(self, value: Any, active: set[int]) -> Any:
        """A dataclass with its fields masked; any other object, by its text.

        An object whose text (``str()``, what audit trails and traces write) holds a
        match — an exception quoting a key, a custom class — is replaced by that text,
        masked: a secret never reaches a Seal, an audit line or a trace because of the
        object around it. Objects whose text holds no match are returned as they are.
        """
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            marker = id(value)
            if marker in active:
                return value
            active.add(marker)
            try:
                changed = {}
                for spec in dataclasses.fields(value):
                    current = getattr(value, spec.name, None)
                    masked = self._redact(current, active)
                    if masked is not current:
                        changed[spec.name] = masked
                if not changed:
                    return value
                if all(spec.init for spec in dataclasses.fields(value) if spec.name in changed):
                    try:
                        return dataclasses.replace(value, **changed)
                    except Exception:  # a __post_init__ that refuses the masked text
                        pass
            finally:
                active.discard(marker)
        for show in (str, repr):
            try:
                text = show(value)
            except Exception:  # an object that cannot even be shown leaks nothing either
                continue
            masked = self.mask_text(text)
            return value if masked == text else masked
        return value

    def _redact_mapping(self, value: Mapping[Any, Any], active: set[int]) -> Mapping[Any, Any]:
        result: dict[Any, Any] = {}
        same = type(value) is dict
        for key, item in value.items():
            new_key = self.mask_text(key) if isinstance(key, str) else key
            if new_key in result:
                suffix = 2
                while f"{new_key} ({suffix})" in result:
                    suffix += 1
                new_key = f"{new_key} ({suffix})"
            masked = self._redact(item, active)
            result[new_key] = masked
            same = same and new_key is key and masked is item
        return value if same else result


_PLAIN = frozenset({list, tuple, set, frozenset})
"""Container types returned as they are when nothing inside them was masked."""


def _compile(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise TypeError(
                f"RedactWard needs text patterns, got the bytes pattern {pattern.pattern!r}; "
                "compile it from a str"
            )
        return pattern
    if not isinstance(pattern, str):
        raise TypeError(
            f"RedactWard patterns must be regex strings or compiled patterns, "
            f"got {type(pattern).__name__} {pattern!r}"
        )
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"RedactWard pattern {pattern!r} is not a valid regular expression: {exc}; "
            "escape literal characters with re.escape()"
        ) from exc
