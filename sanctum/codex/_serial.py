"""Turning Seals into JSON text and back, shared by every Codex (private).

Every store applies the same rule (:func:`encode_seal`): the Aether, frontier and
metadata must be strict JSON (see :func:`sanctum.codex.base.find_unserialisable`), or
the put fails with a :class:`~sanctum.errors.SealError` naming the Sigil that wrote the
offending Conduit, the key path and the type — before anything is written.

Each Conduit value is encoded on its own, so a store can keep a value once and point
at it from many Seals. When a list value extends the value the same Conduit held in a
base Seal (an append-reducer conversation), :class:`EncodedValue` also carries the
suffix — the new items only — so that a store can chain the new items to the stored
prefix instead of repeating the whole list: storage grows with the conversation, not
with its square.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from sanctum.codex.base import Seal, find_unserialisable
from sanctum.errors import SealError

__all__ = [
    "EncodedSeal",
    "EncodedValue",
    "chain_digest",
    "check_ids",
    "decode_json",
    "encode_json",
    "encode_seal",
    "extend_text",
    "root_digest",
]

_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
MAX_ID_LENGTH = 512
"""Longest invocation_id or seal_id a Codex accepts, in characters."""


@dataclass(slots=True)
class EncodedValue:
    """One Conduit value as JSON text.

    ``text`` is the full JSON text. When ``base`` is not None the value is a list that
    extends the list whose full text is ``base``, and ``suffix`` is the JSON text of
    the new items joined by commas (no brackets, never empty). Treat as immutable (not
    frozen: a frozen dataclass is slower to build, and one is built per Conduit per
    Seal).
    """

    text: str
    base: str | None = None
    suffix: str = ""


@dataclass(slots=True)
class EncodedSeal:
    """A Seal checked and encoded: per-Conduit values plus frontier and metadata text."""

    values: dict[str, EncodedValue]
    frontier: str
    metadata: str


def root_digest(text: str) -> bytes:
    """Content address (16 bytes) of a value stored whole."""
    return hashlib.blake2b(b"R" + text.encode("ascii"), digest_size=16).digest()


def chain_digest(prev: bytes, suffix: str) -> bytes:
    """Content address (16 bytes) of a list node that appends ``suffix`` to ``prev``."""
    return hashlib.blake2b(b"C" + prev + suffix.encode("ascii"), digest_size=16).digest()


def extend_text(base: str, suffix: str) -> str:
    """Return the JSON text of the list ``base`` with the items ``suffix`` appended."""
    if base == "[]":
        return f"[{suffix}]"
    return f"{base[:-1]},{suffix}]"


def check_ids(invocation_id: object, seal_id: object = "-") -> None:
    """Refuse ids that no store can key by (empty, not text, NUL, overlong).

    Raises:
        SealError: If either id is not a non-empty str of at most 512 characters
            without NUL characters.
    """
    for label, value in (("invocation_id", invocation_id), ("seal_id", seal_id)):
        if type(value) is str and 0 < len(value) <= MAX_ID_LENGTH and "\x00" not in value:
            continue
        if not isinstance(value, str) or not value or "\x00" in value or len(value) > MAX_ID_LENGTH:
            raise SealError(
                f"{label} must be a non-empty string of at most {MAX_ID_LENGTH} characters "
                f"without NUL characters, got {value!r:.80}",
                invocation_id=invocation_id if isinstance(invocation_id, str) else None,
            )


def _writers(seal: Seal, conduit: str) -> str:
    writers = seal.metadata.get("writers") if isinstance(seal.metadata, Mapping) else None
    sigils = writers.get(conduit) if isinstance(writers, Mapping) else None
    if isinstance(sigils, (list, tuple)) and sigils:
        names = ", ".join(repr(str(s)) for s in sigils)
        return f"written by sigil {names}"
    return "not written by any sigil in this superstep (it came from the input or updates)"


def _a(type_name: str) -> str:
    return f"an {type_name}" if type_name[:1].lower() in "aeiou" else f"a {type_name}"


_META = "the metadata passed to ainvoke(metadata=...) or written by the scheduler"


def _refuse(
    invocation_id: str, seal: Seal, where: str, what: str, conduit: str | None, hint: str
) -> SealError:
    """``conduit`` None: the offending value is in the metadata."""
    culprit = _writers(seal, conduit) if conduit is not None else _META  # found lazily
    return SealError(
        f"cannot seal invocation {invocation_id!r} at superstep {seal.superstep}: "
        f"{where} holds {what}, which JSON cannot carry ({culprit}). {hint}",
        invocation_id=invocation_id,
        seal_id=seal.seal_id,
    )


_PLAIN = (
    "Convert it to plain data (str, int, finite float, bool, None, lists, dicts with str "
    "keys) inside that sigil."
)


def encode_json(value: Any) -> str:
    """Compact strict JSON text (ASCII) of a value already known to serialise."""
    return _ENCODER.encode(value)


def _dumps(value: Any) -> str:
    """:func:`encode_json`, with the common scalars done without the encoder's set-up.

    The texts are exactly the encoder's (``int.__repr__``, the encoder's own string
    escaping); floats, containers and everything else go through the encoder.
    """
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return _ENCODER.encode(value)


def _encode_part(invocation_id: str, seal: Seal, value: Any, where: str, owner: str | None) -> str:
    """Encode ``value`` (found at key path ``where``) or raise the SealError."""
    try:
        text = _dumps(value)
    except RecursionError:
        raise _refuse(
            invocation_id,
            seal,
            where,
            "lists or dicts nested deeper than the JSON encoder allows (about 1,000 levels)",
            owner,
            "Flatten the structure inside that sigil.",
        ) from None
    except (TypeError, ValueError, OverflowError) as exc:
        found = find_unserialisable(value, where)
        if found is not None:
            path, type_name = found
            raise _refuse(invocation_id, seal, path, _a(type_name), owner, _PLAIN) from None
        raise _refuse(invocation_id, seal, where, f"a value ({exc})", owner, _PLAIN) from None
    return text


_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list, tuple})


def _plain_keys(value: Any) -> bool:
    """True when ``value`` is plain dicts, lists and tuples whose dict keys are all str.

    A quick walk for the small nested values the scheduler writes (metadata); False
    means "not sure" (a non-str key, or a container of another type), never "bad".
    """
    stack = [value]
    budget = 64
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            for key, child in item.items():
                if type(key) is not str:
                    return False
                if type(child) in _CONTAINERS:
                    stack.append(child)
        elif kind is list or kind is tuple:
            stack.extend(child for child in item if type(child) in _CONTAINERS)
        else:
            return False
        budget -= 1
        if budget == 0:
            return False
    return True


def _check_part(
    invocation_id: str,
    seal: Seal,
    value: Any,
    where: str,
    owner: str | None,
    text: str | None = None,
) -> None:
    """Catch what the encoder silently converts (non-str dict keys).

    ``text`` is the value's JSON text when known: a value that parses back equal to
    itself holds no such key (the fast path); otherwise the value is walked.
    """
    if type(value) in _SCALARS:
        return
    if _plain_keys(value):
        return
    if text is not None and json.loads(text) == value:
        return
    found = find_unserialisable(value, where)
    if found is not None:
        path, type_name = found
        raise _refuse(invocation_id, seal, path, _a(type_name), owner, _PLAIN)


_QUICK_NODES = 48
"""Most containers plus items :func:`_quick` encodes before leaving it to the encoder."""


def _quick(value: Any) -> str | None:
    """Strict JSON text of a small value of plain types, or None to use the encoder.

    Handles dicts with str keys, lists, tuples, str, int, bool and None (exact types,
    no subclasses; no floats) up to :data:`_QUICK_NODES` nodes — what the scheduler's
    metadata and most small Conduit values are — and produces the encoder's exact
    text. A value it returns text for holds no non-str key, so it needs no further
    check; anything else (bigger, deeper, circular, other types) returns None.
    """
    budget = [_QUICK_NODES]

    def walk(item: Any) -> str | None:
        kind = type(item)
        if kind is str:
            return encode_basestring_ascii(item)
        if kind is int:
            return int.__repr__(item)
        if item is None:
            return "null"
        if kind is bool:
            return "true" if item else "false"
        if kind is not dict and kind is not list and kind is not tuple:
            return None
        budget[0] -= len(item) + 1
        if budget[0] < 0:
            return None
        parts = []
        if kind is dict:
            for key, child in item.items():
                if type(key) is not str:
                    return None
                text = encode_basestring_ascii(child) if type(child) is str else walk(child)
                if text is None:
                    return None
                parts.append(f"{encode_basestring_ascii(key)}:{text}")
            return "{" + ",".join(parts) + "}"
        for child in item:
            text = encode_basestring_ascii(child) if type(child) is str else walk(child)
            if text is None:
                return None
            parts.append(text)
        return "[" + ",".join(parts) + "]"

    return walk(value)


def _encode_value(
    invocation_id: str, seal: Seal, conduit: str, value: Any, base: str | None
) -> EncodedValue:
    kind = type(value)
    if kind is int or kind is str or kind is bool or value is None:
        return EncodedValue(_dumps(value))  # plain scalars: nothing to check or chain
    if kind is dict or kind is list or kind is tuple:
        quick = _quick(value)
        if quick is not None and (base is None or quick == base or base[:1] != "["):
            return EncodedValue(quick)  # checked by _quick; no list chain to look for
    text = _encode_part(invocation_id, seal, value, conduit, conduit)
    if base is not None and text == base:
        # Same text as before; but {1: "a"} encodes like {"1": "a"}, so a value holding
        # objects must still read back as itself (one C-speed parse) or be checked.
        if "{" in text and json.loads(text) != value:
            _check_part(invocation_id, seal, value, conduit, conduit, text)
        return EncodedValue(text)
    if (
        base is not None
        and isinstance(value, (list, tuple))
        and len(base) >= 2
        and base[0] == "["
        and len(text) > len(base)
    ):
        if base == "[]":
            suffix = text[1:-1]
        elif text.startswith(base[:-1]) and text[len(base) - 1] == ",":
            suffix = text[len(base) : -1]
        else:
            suffix = ""
        if suffix:
            # Only the new items can hide a non-str key: the prefix text is identical.
            added = json.loads(f"[{suffix}]")
            first = len(value) - len(added)
            if added != list(value[first:]):
                for index in range(first, len(value)):
                    _check_part(invocation_id, seal, value[index], f"{conduit}[{index}]", conduit)
            return EncodedValue(text, base, suffix)
    _check_part(invocation_id, seal, value, conduit, conduit, text)
    return EncodedValue(text)


def encode_seal(
    invocation_id: str, seal: Seal, bases: Mapping[str, str] | None = None
) -> EncodedSeal:
    """Check and encode a Seal, all or nothing.

    Args:
        invocation_id: The Invocation the Seal belongs to (for messages).
        seal: The Seal to encode.
        bases: ``{conduit: full JSON text}`` of a Seal this one probably continues
            from; unchanged values and extended lists are recognised against it.

    Returns:
        The encoded Seal.

    Raises:
        SealError: If an id is unusable, the superstep is not an int, the Aether is not
            a mapping with str keys, or anything in the Aether, frontier or metadata is
            not strict JSON (naming the writing Sigil, the key path and the type).
    """
    check_ids(invocation_id, seal.seal_id)
    if type(seal.superstep) is not int and (
        not isinstance(seal.superstep, int) or isinstance(seal.superstep, bool)
    ):
        raise SealError(
            f"cannot seal invocation {invocation_id!r}: superstep must be an int, "
            f"got {type(seal.superstep).__name__}",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        )
    timestamp = seal.timestamp
    if not (type(timestamp) is float and timestamp - timestamp == 0.0) and (
        not isinstance(timestamp, (int, float))
        or isinstance(timestamp, bool)
        or timestamp != timestamp
        or timestamp in (float("inf"), float("-inf"))
    ):
        raise SealError(
            f"cannot seal invocation {invocation_id!r}: timestamp must be finite epoch "
            f"seconds, got {timestamp!r:.40}",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        )
    if type(seal.aether) is not dict and not isinstance(seal.aether, Mapping):
        raise SealError(
            f"cannot seal invocation {invocation_id!r}: the Aether must be a mapping, got "
            f"{type(seal.aether).__name__}",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        )
    bases = bases or {}
    values: dict[str, EncodedValue] = {}
    for conduit, value in seal.aether.items():
        if not isinstance(conduit, str):
            raise _refuse(
                invocation_id,
                seal,
                f"[{conduit!r}]",
                _a(f"{type(conduit).__name__} key"),
                repr(conduit),
                "Use str keys.",
            )
        values[conduit] = _encode_value(invocation_id, seal, conduit, value, bases.get(conduit))
    frontier = seal.frontier
    frontier_text = None
    if isinstance(frontier, (list, tuple)):
        try:  # the encoder's own escaping; refuses anything but str
            frontier_text = "[" + ",".join(map(encode_basestring_ascii, frontier)) + "]"
        except TypeError:
            pass
    if frontier_text is None:
        raise SealError(
            f"cannot seal invocation {invocation_id!r} at superstep {seal.superstep}: the "
            f"frontier must be a sequence of sigil names, got {frontier!r:.120}",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        )
    metadata = seal.metadata
    if type(metadata) is not dict and not isinstance(metadata, Mapping):
        raise SealError(
            f"cannot seal invocation {invocation_id!r}: metadata must be a mapping, got "
            f"{type(metadata).__name__}",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        )
    meta_text = _quick(metadata) if type(metadata) is dict else None
    if meta_text is None:
        meta_text = _encode_part(invocation_id, seal, dict(metadata), "metadata", None)
        _check_part(invocation_id, seal, metadata, "metadata", None, meta_text)
    return EncodedSeal(values, frontier_text, meta_text)


def decode_json(text: str) -> Any:
    """Parse JSON text written by :func:`encode_seal` (raises ValueError when damaged)."""
    return json.loads(text)
