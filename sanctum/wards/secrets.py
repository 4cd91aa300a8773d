"""One masking rule for everything that leaves the process: :class:`Secrets`.

Secrets — a masking policy. It holds the literal values that must never be written
down (API keys, passwords, every ``${VAR}`` a ritual file read from the environment)
and regular expressions whose matches must not be either (the patterns of a
``redact:`` ward). Given to a Rite (``Ritual.compile(secrets=...)`` or
``rite.with_options(secrets=...)``), the engine applies it at every boundary where text
leaves a Sigil or the process:

* each delta, before any other Ward sees it (so audit trails and the merged Aether hold
  the mask, as with a :class:`~sanctum.wards.redact.RedactWard` placed first);
* every Seal written — the Aether (inputs and ``__errors__`` entries included), the
  frontier and the metadata (interrupt reasons, resumption ``updates``, the caller's
  own keys);
* every Omen handed to a Ward's ``on_omen`` (a TraceRecorder) or to an ``astream``
  consumer (tokens, raw spell-call text, echoed inner Omens);
* the messages of the errors and the reason of the Interrupt a run raises.

A literal value of :data:`~sanctum.wards.redact.SHORT_SECRET_CHARS` (8) characters or
more is masked wherever it occurs; a shorter one only where it stands alone as a token
(:func:`~sanctum.wards.redact.secret_pattern`). Either is masked in every written form:
raw, JSON-escaped (``\\"``, ``\\u00e9``), ``repr``-escaped, HTML/XML-escaped and
percent-encoded, nested to any depth; a value holding ``%XX`` escapes decoded too. What
a cut left of a value of 8 characters or more is masked as well: a piece of at least 4
characters right before a cut marker (``…``, ``...``) or at the end of the text (its
front), right after a marker or at the start (its back) — a piece of 4 or 5 characters
only when it is not a plain word or number (letters only, digits only), so ``SEKR…``
and ``2024`` stay while ``sk-l…`` does not (:mod:`sanctum.wards._forms`). :class:`Veil`
is the per-Invocation
helper the engine uses: it remembers the masked form of each Conduit value, so a
superstep costs work in proportion to the values it changed, not to the whole Aether.
Standard library only.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from sanctum.aether.reducers import append, appended_from
from sanctum.omens.events import CircleEchoed, Omen, RiteManifested, SuperstepCompleted
from sanctum.wards._forms import Fragments, mask_spans
from sanctum.wards.redact import DEFAULT_MASK, RedactWard, literal_masker

__all__ = ["MaskedException", "SecretStream", "Secrets", "Veil", "url_password"]


def url_password(url: str) -> list[str]:
    """The password a URL carries (``postgresql://user:PASSWORD@host/db``), if any.

    Args:
        url: Any text; a URL without a password (or no URL) gives nothing.

    Returns:
        The password as written in the URL (in its user part, or a ``password=``
        query parameter) and, when it differs, percent-decoded (``p%40ss`` and
        ``p@ss``); an empty list when there is none.
    """
    if "://" not in url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    userinfo, at, _host = parts.netloc.rpartition("@")
    if at and ":" in userinfo:
        found.append(userinfo.split(":", 1)[1])
    for pair in parts.query.split("&"):  # libpq's ?password=...
        key, _, value = pair.partition("=")
        if key == "password":
            found.append(value)
    out: list[str] = []
    for raw in found:
        for text in (raw, unquote(raw)):
            if text and text not in out:
                out.append(text)
    return out


class _Masker(RedactWard):
    """A RedactWard whose text masking applies several groups, each with its mask, then
    masks what cuts left of the literal values (:class:`~sanctum.wards._forms.Fragments`)."""

    def __init__(
        self, groups: Sequence[RedactWard], pieces: Sequence[tuple[Fragments, str]]
    ) -> None:
        super().__init__((), mask=DEFAULT_MASK)
        self.groups = tuple(groups)
        self.pieces = tuple(pieces)

    def mask_text(self, text: str) -> str:
        for group in self.groups:
            text = group.mask_text(text)
        for fragments, mask in self.pieces:
            spans = fragments.spans(text)
            if spans:
                text = mask_spans(text, spans, mask)
        return text


class Secrets:
    """What must never reach a Seal, an Omen, a trace, an audit line or a screen.

    Secrets — a masking policy. Immutable; combine two with ``a | b``. An empty
    ``Secrets()`` is falsy and a Rite given one does no extra work.

    A literal value is masked raw and in each escaped or encoded form (JSON, ``repr``,
    HTML/XML, percent-encoding, nested); for a value of 8 characters or more, so is a
    piece of it a cut left: at least 4 characters before a cut marker (``…``, ``...``)
    or at the end of the text, or after a marker or at the start — 6 characters when
    the piece is letters only or digits only, so ordinary words at a cut stay. The
    patterns needed are built once, here.

    Args:
        values: Literal secret values (API keys, passwords). Empty strings are ignored.
        patterns: Regular expressions (``str`` or compiled) whose matches are secret.
        mask: The text that replaces each secret.
        urls: URLs whose passwords are secret (``postgresql://user:pw@host/db``).

    Raises:
        TypeError: If ``values`` holds something other than strings, or a pattern is
            neither a string nor a compiled text pattern.
        ValueError: If a pattern is not a valid regular expression.

    Example:
        >>> secrets = Secrets(["sk-live-0123456789"], [r"tok-[0-9]{8}"])
        >>> secrets.mask_text("key sk-live-0123456789, token tok-12345678")
        'key [REDACTED], token [REDACTED]'
    """

    __slots__ = ("_groups", "_masker", "_patterns", "_values")

    def __init__(
        self,
        values: Iterable[str] = (),
        patterns: Iterable[str | re.Pattern[str]] = (),
        *,
        mask: str = DEFAULT_MASK,
        urls: Iterable[str] = (),
    ) -> None:
        if isinstance(values, str):
            values = [values]
        found: dict[str, str] = {}
        for value in values:
            if not isinstance(value, str):
                raise TypeError(
                    f"Secrets values must be strings, got {type(value).__name__}; "
                    "pass the secret's text"
                )
            if value:
                found[value] = str(mask)
        for url in urls:
            for password in url_password(str(url)):
                found[password] = str(mask)
        compiled = RedactWard(patterns, mask=mask).patterns if patterns else ()
        self._values: dict[str, str] = found
        self._patterns: tuple[tuple[re.Pattern[str], str], ...] = tuple(
            (p, str(mask)) for p in compiled
        )
        self._groups: tuple[RedactWard, ...] = ()
        self._masker: _Masker | None = None
        self._build()

    def _build(self) -> None:
        groups: list[RedactWard] = []
        pieces: list[tuple[Fragments, str]] = []
        if self._values:
            # One alternation over every literal, longest first, per mask.
            by_mask: dict[str, list[str]] = {}
            for value, mask in self._values.items():
                by_mask.setdefault(mask, []).append(value)
            for mask, values in by_mask.items():
                pattern, fragments = literal_masker(values)
                groups.append(RedactWard(pattern, mask))
                if fragments:
                    pieces.append((fragments, mask))
        by_pattern_mask: dict[str, list[re.Pattern[str]]] = {}
        for pattern, mask in self._patterns:
            by_pattern_mask.setdefault(mask, []).append(pattern)
        for mask, patterns in by_pattern_mask.items():
            groups.append(RedactWard(patterns, mask))
        self._groups = tuple(groups)
        self._masker = _Masker(groups, pieces) if groups else None

    def __bool__(self) -> bool:
        return self._masker is not None

    def __or__(self, other: Secrets | None) -> Secrets:
        if other is None or not other:
            return self
        if not self:
            return other
        merged = Secrets.__new__(Secrets)
        merged._values = {**self._values, **other._values}
        merged._patterns = tuple(dict.fromkeys((*self._patterns, *other._patterns)))
        merged._build()
        return merged

    def __repr__(self) -> str:  # never the values themselves
        return f"Secrets({len(self._values)} values, {len(self._patterns)} patterns)"

    @property
    def masks(self) -> frozenset[str]:
        """The texts this policy writes in place of secrets (``{"[REDACTED]"}`` by default)."""
        return frozenset(self._values.values()) | {mask for _, mask in self._patterns}

    @property
    def count(self) -> int:
        """How many literal values and patterns this policy masks."""
        return len(self._values) + len(self._patterns)

    def mask_text(self, text: str) -> str:
        """``text`` with every secret replaced by its mask.

        Args:
            text: Any string.

        Returns:
            The masked string (``text`` itself when nothing matched).
        """
        if self._masker is None:
            return text
        return self._masker.mask_text(text)

    def mask(self, value: Any) -> Any:
        """Mask every secret inside ``value``, recursing as RedactWard does.

        Strings, bytes, mappings (keys too), lists, tuples, sets, dataclasses, and any
        other object whose text holds a secret (then replaced by that text, masked).

        Args:
            value: Anything.

        Returns:
            A masked copy (containers are rebuilt); scalars without secrets as they are.
        """
        if self._masker is None:
            return value
        return self._masker.redact(value)

    def stream(self) -> SecretStream:
        """A masker for text that arrives in pieces (streamed tokens).

        Returns:
            A :class:`SecretStream` over these secrets.
        """
        return SecretStream(self)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where secrets stand in ``text`` (unmerged ``(start, end)`` pairs)."""
        spans: list[tuple[int, int]] = []
        for group in self._groups:
            for pattern in group.patterns:
                spans.extend(m.span() for m in pattern.finditer(text) if m.end() > m.start())
        return spans

    def _held(self, text: str) -> int:
        """Where the tail of ``text`` that may be the start of a secret begins."""
        start = len(text)
        longest = max((len(v) for v in self._values), default=0)
        for at in range(max(0, len(text) - longest + 1), len(text)):
            tail = text[at:]
            if any(value.startswith(tail) for value in self._values):
                start = at
                break
        if not self._patterns:
            return start  # literal values: exactly the tails that may start one
        # a pattern may still grow: the trailing word, and the word before it
        # (`Bearer <token>`)
        word = len(text)
        while word > 0 and not text[word - 1].isspace() and len(text) - word < _HOLD_CHARS:
            word -= 1
        if word > 0:
            gap = word
            while gap > 0 and text[gap - 1].isspace():
                gap -= 1
            before = gap
            while before > 0 and not text[before - 1].isspace() and word - before < _HOLD_CHARS:
                before -= 1
            word = before
        return min(start, word)

    def mask_chain(self, error: BaseException) -> None:
        """Mask, in place, what a traceback of ``error`` would print of the errors it chains.

        A chained exception (``__cause__`` or ``__context__``) whose own text or
        ``repr`` still shows a secret — its ``__str__`` reads an attribute, not its
        ``args`` — is replaced in the chain by a stand-in of the same name carrying the
        masked text (and the same traceback and chain), so ``traceback.print_exception``
        never prints the secret. Links whose text is clean are left as they are.

        Args:
            error: The exception leaving a run.
        """
        if self._masker is None:
            return
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            suppress = current.__suppress_context__
            for link in ("__cause__", "__context__"):
                chained = getattr(current, link)
                if chained is not None and id(chained) not in seen:
                    stand_in = self._stand_in(chained)
                    if stand_in is not chained:
                        setattr(current, link, stand_in)
            current.__suppress_context__ = suppress
            current = current.__cause__ or (
                None if current.__suppress_context__ else current.__context__
            )

    def _stand_in(self, error: BaseException) -> BaseException:
        """``error``, or a stand-in carrying its masked text when its text shows a secret."""
        try:
            text, shown = str(error), repr(error)
        except Exception:  # an exception whose __str__ fails: a traceback shows no text
            return error
        masked = self.mask_text(text)
        if masked == text and self.mask_text(shown) == shown:
            return error
        kind = type(error)
        stand_in_type = type(
            kind.__name__,
            (MaskedException,),
            {"__module__": kind.__module__, "__qualname__": kind.__qualname__},
        )
        stand_in: MaskedException = stand_in_type(masked)
        stand_in.original_type = f"{kind.__module__}.{kind.__qualname__}"
        stand_in.__cause__ = error.__cause__
        stand_in.__context__ = error.__context__
        stand_in.__suppress_context__ = error.__suppress_context__
        stand_in.__traceback__ = error.__traceback__
        return stand_in

    def ward(self) -> RedactWard:
        """A RedactWard masking these secrets in every delta (for an inner Rite).

        Returns:
            The Ward; with no secrets, one that masks nothing.
        """
        return self._masker if self._masker is not None else RedactWard(())


class MaskedException(Exception):
    """Stands in an exception chain for an error whose own text showed a secret.

    It carries the masked text, and the name, traceback and chain of the error it
    replaces (:meth:`Secrets.mask_chain`); ``original_type`` names that error's class.
    """

    original_type: str = ""


_HOLD_CHARS = 256
"""The longest word a :class:`SecretStream` holds back waiting for its end."""


class SecretStream:
    """Masks text that arrives in pieces, so a secret split across two never shows.

    Each piece is held back from where a secret could be starting (a prefix of a
    secret value, or the words a pattern could still match) until the text after it
    settles the question; what is released is masked, and never cut inside a match.
    A secret sent as ``"sk-live-01"`` then ``"23456789"`` is released as one mask.

    Args:
        secrets: The policy.
    """

    __slots__ = ("_pending", "secrets")

    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets
        self._pending = ""

    def feed(self, piece: str) -> str:
        """Take the next piece; return the masked text that can be shown now (maybe "")."""
        if not self.secrets:
            return piece
        text = self._pending + piece
        cut = self.secrets._held(text)
        for start, end in self.secrets._spans(text):
            if start < cut < end:
                cut = start  # never release part of a match: it may still grow
        self._pending = text[cut:]
        return self.secrets.mask_text(text[:cut]) if cut else ""

    def end(self) -> str:
        """The rest, masked: call once the stream is over."""
        rest, self._pending = self._pending, ""
        return self.secrets.mask_text(rest) if rest else ""


class Veil:
    """The engine's use of a :class:`Secrets` for one Invocation.

    Remembers, per Conduit, the last value it masked and its masked form: an unchanged
    value (the same object, and for a list or dict the same length) is not masked
    again, so a Seal or a SuperstepCompleted costs work in proportion to what the
    superstep changed.

    Args:
        secrets: The policy; must be truthy.
    """

    __slots__ = ("_seen", "secrets")

    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets
        self._seen: dict[Any, tuple[Any, int, Any]] = {}

    def aether(self, aether: Mapping[str, Any]) -> dict[str, Any]:
        """A masked copy of an Aether (its top-level keys are Conduit names, kept).

        Returns:
            A new dict with every value masked.
        """
        seen = self._seen
        mask = self.secrets.mask
        out: dict[str, Any] = {}
        for key, value in aether.items():
            size = len(value) if isinstance(value, list | dict) else -1
            hit = seen.get(key)
            if hit is not None and hit[0] is value and hit[1] == size:
                out[key] = hit[2]
                continue
            if hit is not None and hit[0] is not value:  # (the same object: grown in place)
                masked = self._again(value, hit[0], hit[2])
            else:
                masked = mask(value)
            seen[key] = (value, size, masked)
            out[key] = masked
        return out

    def _again(self, value: Any, before: Any, masked: Any) -> Any:
        """``value`` masked, reusing ``masked`` (the masked form of ``before``, another
        object) for what did not change: a list grown by appending — by the append
        reducer, or keeping the very same items — masks its new items only, and is
        built by ``append`` so a Codex chains it too; a dict reuses the masked form of
        each value it kept (the same object) or grew.
        """
        mask = self.secrets.mask
        if type(value) is list and type(before) is list and type(masked) is list:
            count = len(before)
            if len(value) > count == len(masked):
                origin = appended_from(value)
                kept = origin is not None and origin[0] is before and origin[1] == count
                if kept or all(map(operator.is_, value[:count], before)):
                    return append(masked, mask(value[count:]))
        elif type(value) is dict and type(before) is dict and type(masked) is dict:
            out: dict[Any, Any] = {}
            for key, child in value.items():
                shown = mask(key)
                if key not in before or shown not in masked:
                    out[shown] = mask(child)
                elif child is before[key]:
                    out[shown] = masked[shown]
                else:
                    out[shown] = self._again(child, before[key], masked[shown])
            return out
        return mask(value)

    def delta(self, delta: Mapping[str, Any]) -> dict[str, Any]:
        """A masked copy of a delta (top-level keys kept, values masked).

        A value that repeats much of what the Conduit held (a Sigil returning its whole
        transcript plus a message, through ``merge_dict`` or an overwrite) reuses the
        masked form of what it kept, so masking costs what the Sigil added.
        """
        seen = self._seen
        mask = self.secrets.mask
        out: dict[str, Any] = {}
        for key, value in delta.items():
            hit = seen.get(key)
            if hit is not None and hit[0] is not value:
                out[key] = self._again(value, hit[0], hit[2])
            else:
                out[key] = mask(value)
        return out

    def omen(self, omen: Omen) -> Omen:
        """The Omen with every secret in its fields masked (a copy, or itself if clean).

        An Aether (SuperstepCompleted, RiteManifested) is masked through the per-Conduit
        memory; an echoed inner Omen (CircleEchoed) is masked recursively.
        """
        changed: dict[str, Any] = {}
        for spec in dataclasses.fields(omen):
            value = getattr(omen, spec.name)
            if value is None or type(value) in (int, float, bool):
                continue
            if spec.name == "aether" and isinstance(omen, SuperstepCompleted | RiteManifested):
                masked: Any = self.aether(value)
            elif isinstance(omen, CircleEchoed) and spec.name == "omen":
                masked = self.omen(value)
            elif type(value) is str:
                masked = self.secrets.mask_text(value)
            else:
                masked = self.secrets.mask(value)
            if masked is not value:
                changed[spec.name] = masked
        if not changed:
            return omen
        return dataclasses.replace(omen, **changed)

    def text(self, text: str) -> str:
        """``text`` masked."""
        return self.secrets.mask_text(text)

    def error(self, error: BaseException) -> None:
        """Mask, in place, what an error or an Interrupt would show.

        Its ``args`` (the message), an ``aether`` snapshot and a ``reason`` are masked;
        so are the ``args`` of the exceptions it chains (``__cause__``/``__context__``),
        which a traceback prints. (An exception whose text is not built from its
        ``args`` keeps its own text there.)
        """
        seen: set[int] = set()
        cause: BaseException | None = error.__cause__ or error.__context__
        while cause is not None and id(cause) not in seen:  # what a traceback would show
            seen.add(id(cause))
            try:
                cause.args = tuple(self.secrets.mask(a) for a in cause.args)
            except (AttributeError, TypeError):
                pass
            cause = cause.__cause__ or cause.__context__
        try:
            error.args = tuple(self.secrets.mask(a) for a in error.args)
            snapshot = getattr(error, "aether", None)
            if isinstance(snapshot, Mapping) and snapshot:
                error.aether = self.aether(snapshot)  # type: ignore[attr-defined]
            reason = getattr(error, "reason", None)
            if isinstance(reason, str):
                error.reason = self.secrets.mask_text(reason)  # type: ignore[attr-defined]
        except (AttributeError, TypeError):  # an exception type with read-only fields
            pass
