"""Turning Seals into JSON text and back, shared by every Codex (private).

Every store applies the same rule (:func:`encode_seal`): the Aether, frontier and
metadata must be strict JSON (see :func:`sanctum.codex.base.find_unserialisable`), or
the put fails with a :class:`~sanctum.errors.SealError` naming the Sigil that wrote the
offending Conduit, the key path and the type — before anything is written.

Each Conduit value is planned on its own against what the writer stored for the
previous Seal (:class:`~sanctum.codex._layout.Held`): an unchanged value is reused, a
list or string that grew by appending costs only its new part (encoded and checked),
and a large dict is stored key by key, so a transcript nested in a map chains too.
The cost of a put therefore follows the change, not the size of the state; see
:mod:`sanctum.codex._layout` for the rows this produces.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from sanctum.aether.reducers import appended_from
from sanctum.codex._layout import (
    INLINE_LIMIT,
    KEEP_TEXT,
    PACK_LINKS,
    PACK_MARK,
    TEXT_MARK,
    Held,
    Step,
    ref_text,
)
from sanctum.codex.base import Seal, find_unserialisable
from sanctum.errors import SealError

__all__ = [
    "EncodedSeal",
    "check_ids",
    "decode_json",
    "encode_json",
    "encode_seal",
]

_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
MAX_ID_LENGTH = 512
"""Longest invocation_id or seal_id a Codex accepts, in characters."""


@dataclass(slots=True)
class EncodedSeal:
    """A Seal checked and encoded: per-Conduit values plus frontier and metadata text."""

    values: dict[str, Step]
    frontier: str
    metadata: str


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


def _size(value: Any) -> int:
    kind = type(value)
    return len(value) if kind is list or kind is tuple or kind is dict or kind is str else -1


def _whole(value: Any, text: str, held: Held | None) -> Step:
    """Store ``value`` (whose full text is ``text``) inline, as its old row, or as a root."""
    size = _size(value)
    if len(text) <= INLINE_LIMIT:
        return Step(Held(value, size, None, text))
    keep = text if len(text) <= KEEP_TEXT else None
    if held is not None and held.ref is not None and held.children is None and held.text == text:
        return Step(Held(value, size, held.ref, keep, None, held.base, held.tail))
    return Step(Held(value, size, None, keep), body=text)


def _link(value: Any, held: Held, content: str, mark: str, sep: str, text: str | None) -> Step:
    """A link appending ``content`` to the row ``held`` stored — or, every
    :data:`PACK_LINKS`-th append, a pack of the run since its base."""
    base = held.ref if held.base is None else held.base
    tail = (*held.tail, content)
    if len(tail) >= PACK_LINKS:
        return Step(Held(value, len(value), None, text), body=PACK_MARK + sep.join(tail), prev=base)
    step_held = Held(value, len(value), None, text, None, base, tail)
    return Step(step_held, body=mark + content, prev=held.ref)


def _extend_by_text(value: Any, text: str, held: Held) -> Step | None:
    """A link when ``text`` extends the stored text ``held.text`` (a small list or
    string that grew by appending: checked by text, so an edit in place shows)."""
    base = held.text[:-1] if held.text else ""
    if len(text) <= len(held.text or "") or not text.startswith(base):
        return None
    keep = text if len(text) <= KEEP_TEXT else None
    if base.startswith("[") and type(value) in (list, tuple) and text[len(base)] == ",":
        return _link(value, held, text[len(base) + 1 : -1], "", ",", keep)
    if base.startswith('"') and type(value) is str:
        return _link(value, held, text[len(base) : -1], TEXT_MARK, "", keep)
    return None


class _Planner:
    """Plans the Steps of one Seal's values against what the writer holds (one per put).

    ``trusted`` (per Conduit): the Seal's ``metadata["writers"]`` says no Sigil wrote
    the Conduit in this superstep, so the very object the writer stored last is still
    that value. A written Conduit may hold the same object changed in place (a dict
    edited and returned), so an unchanged identity proves nothing then; a Seal
    without ``writers`` (one made by hand) trusts nothing.
    """

    __slots__ = ("invocation_id", "seal")

    def __init__(self, invocation_id: str, seal: Seal) -> None:
        self.invocation_id = invocation_id
        self.seal = seal

    def encode(self, value: Any, where: str, owner: str) -> str:
        """The checked JSON text of ``value`` (raises the SealError naming ``where``)."""
        kind = type(value)
        if kind is dict or kind is list or kind is tuple:
            quick = _quick(value)
            if quick is not None:
                return quick
        text = _encode_part(self.invocation_id, self.seal, value, where, owner)
        _check_part(self.invocation_id, self.seal, value, where, owner, text)
        return text

    def plan(self, value: Any, held: Held | None, where: str, owner: str, trusted: bool) -> Step:
        """How to store ``value`` given ``held``, what the writer stored before.

        Only values whose text the writer does not keep (over :data:`KEEP_TEXT`
        characters) take the shortcuts; smaller ones are encoded and compared by text.
        """
        kind = type(value)
        if kind is int or kind is bool or value is None:
            return _whole(value, _dumps(value), held)
        large = held is not None and held.ref is not None and held.text is None
        if large:
            assert held is not None
            if value is held.obj and (trusted or kind is str) and _size(value) == held.size:
                return Step(held)  # unchanged
            if held.children is not None and kind is dict:
                return self.plan_map(value, held, where, owner)
            if held.children is None and kind is str and type(held.obj) is str:
                step = self.extend_text(value, held)
                if step is not None:
                    return step
            elif held.children is None and (kind is list or kind is tuple):
                step = self.extend_list(value, held, where, owner)
                if step is not None:
                    return step
        text = self.encode(value, where, owner)
        if kind is dict and len(text) > KEEP_TEXT:
            return self.plan_map(value, None, where, owner, text)
        if held is not None and held.ref is not None and held.children is None and held.text:
            step = _extend_by_text(value, text, held)
            if step is not None:
                return step
        return _whole(value, text, held)

    def extend_text(self, value: str, held: Held) -> Step | None:
        """A text link when ``value`` extends the string ``held`` stored, else None."""
        old: str = held.obj
        if len(value) <= held.size or not value.startswith(old):
            return None
        suffix = encode_basestring_ascii(value[held.size :])[1:-1]
        return _link(value, held, suffix, TEXT_MARK, "", None)

    def extend_list(
        self, value: list[Any] | tuple[Any, ...], held: Held, where: str, owner: str
    ) -> Step | None:
        """A list link when ``value`` extends the list ``held`` stored, else None.

        The first ``held.size`` items must be the very objects stored: ``value`` is
        the stored list grown in place, or the append reducer built it from that list,
        or its items are identical one by one (never merely equal: ``1 == 1.0 ==
        True`` in Python, but not in JSON).
        """
        count = held.size
        if len(value) <= count:
            return None
        old = held.obj
        if value is not old:
            origin = appended_from(value)
            if origin is None or origin[0] is not old or origin[1] != count:
                if not isinstance(old, (list, tuple)) or len(old) != count:
                    return None
                if not all(map(operator.is_, value, old)):
                    return None
        added = value[count:]
        items = added if type(added) is list else list(added)
        added_text = self.encode(items, f"{where}[{count}:]", owner)
        suffix = added_text[1:-1]
        if not suffix:
            return None
        return _link(value, held, suffix, "", ",", None)

    def plan_map(
        self,
        value: dict[Any, Any],
        held: Held | None,
        where: str,
        owner: str,
        text: str | None = None,
    ) -> Step:
        """A map row: each key's value stored on its own (a nested transcript chains).

        When every child is small (its text kept), the dict is stored whole instead: a
        map row pays off only when it lets a large child be reused or chained.
        """
        before = held.children if held is not None else None
        children: list[tuple[str, Step]] = []
        helds: dict[str, Held] = {}
        same = before is not None and len(before) == len(value)
        small = True
        for key, child in value.items():
            if type(key) is not str:
                raise _refuse(
                    self.invocation_id,
                    self.seal,
                    f"{where}[{key!r}]",
                    _a(f"{type(key).__name__} key"),
                    owner,
                    _PLAIN,
                )
            old = before.get(key) if before is not None else None
            # a child the Sigil left alone is the very object stored (trusted); one it
            # changed in place inside a map it returned is the documented blind spot
            step = self.plan(child, old, f"{where}.{key}", owner, True)
            children.append((key, step))
            helds[key] = step.held
            small = small and step.held.text is not None
            if same and (step.new_rows() or old is None or ref_text(old) != ref_text(step.held)):
                same = False
        if small:
            if text is None:
                parts = (f"{encode_basestring_ascii(k)}:{helds[k].text}" for k in helds)
                text = "{" + ",".join(parts) + "}"
            return _whole(value, text, None)
        if same and before is not None and list(before) == list(value):
            assert held is not None
            return Step(Held(value, len(value), held.ref, None, helds))
        return Step(Held(value, len(value), None, None, helds), children=children)


def encode_seal(
    invocation_id: str, seal: Seal, held: Mapping[str, Held] | None = None
) -> EncodedSeal:
    """Check and encode a Seal, all or nothing.

    Args:
        invocation_id: The Invocation the Seal belongs to (for messages).
        seal: The Seal to encode.
        held: What the writer stored for the Seal this one continues from, per
            Conduit; unchanged values, appended lists and strings, and maps holding
            them are recognised against it, at a cost proportional to the change.

    Returns:
        The encoded Seal: a :class:`~sanctum.codex._layout.Step` per Conduit.

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
    held = held or {}
    planner = _Planner(invocation_id, seal)
    writers = seal.metadata.get("writers") if isinstance(seal.metadata, Mapping) else None
    written = writers if isinstance(writers, Mapping) else None
    values: dict[str, Step] = {}
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
        trusted = written is not None and conduit not in written
        values[conduit] = planner.plan(value, held.get(conduit), conduit, conduit, trusted)
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
