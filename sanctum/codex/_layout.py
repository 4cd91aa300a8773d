"""The stored layout of Conduit values, shared by every Codex (private).

Every store keeps a Conduit value as one or more *value rows* ``(id, prev, body)``:

==========  ======  ================================================================
row         prev    body
==========  ======  ================================================================
root        NULL    the value's whole JSON text (any type)
list link   a row   the JSON text of list items appended to the value of ``prev``,
                    joined by commas, without brackets
text link   a row   ``\\x01`` then the JSON-escaped characters appended to the string
                    of ``prev`` (no quotes)
pack        a row   ``\\x03`` then what the last :data:`PACK_LINKS` links appended
                    since ``prev`` (a root or a pack): items or characters, as above
map         NULL    ``\\x02`` then a JSON object ``{key: ref}``: each key's value as a
                    row id, or ``[value]`` inline
==========  ======  ================================================================

Escaped JSON never holds a raw control character, so the marks cannot be mistaken for
text; unmarked link bodies are the original layout's list links. A value that grows by
appending (a transcript, a running log, a transcript inside a ``merge_dict`` map)
therefore costs its new part per Seal, on disk and in time. Every
:data:`PACK_LINKS`-th append writes a pack instead of a link: it repeats the run of
links since the previous pack in one row and the next links chain to it, so loading
the latest value reads one row per pack plus fewer than :data:`PACK_LINKS` links, and
a damaged link spoils at most the Seals of its own run. Storage stays linear: a pack
repeats each item once (SqliteCodex stores packs deflated; PostgreSQL compresses
them itself), where a full snapshot every K links would grow with the square of the
transcript.

A writer remembers, per Conduit, what it stored last (:class:`Held`): the object, its
length and its row. The next Seal compares by identity and length first, so an
unchanged value costs nothing and an appended one costs its new items; only values
whose whole text is at most :data:`KEEP_TEXT` characters are compared by text (a
change made in place inside a large value the Seal already holds — mutating a nested
item instead of returning a new value — is recorded when the Conduit is next written
whole; see docs/persistence.md).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

__all__ = [
    "INLINE_LIMIT",
    "KEEP_TEXT",
    "MAP_MARK",
    "PACK_LINKS",
    "PACK_MARK",
    "TEXT_MARK",
    "Held",
    "HeldCache",
    "PutRow",
    "Step",
    "chain_digest",
    "map_body",
    "ref_text",
    "root_digest",
    "row_digest",
    "write_step",
]

INLINE_LIMIT = 256
"""Largest value (characters of JSON) kept inline in the Seal row instead of a value row."""

KEEP_TEXT = 4096
"""Largest value (characters of JSON) whose text a writer keeps to compare by text."""

PACK_LINKS = 64
"""Appends per pack (see the module docstring). Chosen by measurement
(docs/persistence.md#layout): with 64, loading a 3,000-message transcript reads about
110 rows, a pack costs under a millisecond to deflate, and the packs add about a
quarter of the payload to a SQLite file."""

TEXT_MARK = "\x01"
"""First character of a text link's body."""

MAP_MARK = "\x02"
"""First character of a map row's body."""

PACK_MARK = "\x03"
"""First character of a pack's body."""


@dataclass(slots=True)
class Held:
    """What a writer knows of one stored value.

    ``obj`` is the object that was stored (compared by identity), ``size`` its length
    then (``len`` of a list, str or dict; -1 for other types), ``ref`` the store's row
    handle (None for an inline value), ``text`` the whole JSON text when at most
    :data:`KEEP_TEXT` characters (else None), ``children`` each key's Held for a map
    row. For a link, ``base`` is the root or pack its run of links continues and
    ``tail`` what each link of the run appended (bodies without marks, oldest first);
    for a root or a pack, ``base`` is None and ``tail`` empty.
    """

    obj: Any
    size: int
    ref: Any
    text: str | None
    children: dict[str, Held] | None = None
    base: Any = None
    tail: tuple[str, ...] = ()


class HeldCache:
    """What a writer holds of recent Seals, to chain the next Seal to them.

    Per Invocation, the latest two Seals it wrote or loaded (the one a resume loads
    and the one written next; the older of two written Seals is never a parent
    again), for at most ``invocations`` Invocations, the least recently used
    dropped — so it holds about twice the state of each recent Invocation, however
    long its history.
    """

    __slots__ = ("_entries", "_invocations")

    def __init__(self, invocations: int = 32) -> None:
        self._invocations = invocations
        self._entries: OrderedDict[str, OrderedDict[str, dict[str, Held]]] = OrderedDict()

    def get(self, invocation_id: str, seal_id: str | None) -> dict[str, Held] | None:
        """What the Seal ``seal_id`` holds, if remembered."""
        seals = self._entries.get(invocation_id)
        if seals is None or seal_id is None:
            return None
        return seals.get(seal_id)

    def put(self, invocation_id: str, seal_id: str, held: dict[str, Held]) -> None:
        """Remember what the Seal ``seal_id`` holds."""
        entries = self._entries
        seals = entries.get(invocation_id)
        if seals is None:
            seals = entries[invocation_id] = OrderedDict()
        seals[seal_id] = held
        seals.move_to_end(seal_id)
        while len(seals) > 2:
            seals.popitem(last=False)
        entries.move_to_end(invocation_id)
        while len(entries) > self._invocations:
            entries.popitem(last=False)

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()


@dataclass(slots=True)
class Step:
    """How one value of a new Seal is stored.

    ``body`` None: nothing new is written (``held.ref`` reused, or inline when it is
    None). Otherwise a row with ``body`` continuing ``prev`` is written — or, when
    ``children`` is set, a map row whose children are written first — and its handle
    becomes ``held.ref``.
    """

    held: Held
    body: str | None = None
    prev: Any = None
    children: list[tuple[str, Step]] | None = None

    def new_rows(self) -> bool:
        """True when writing this step inserts at least one row."""
        return self.body is not None or self.children is not None


PutRow = Callable[[str, Any], Any]
"""A store's row writer: ``(body, prev handle or None) -> new row handle``."""


def ref_text(held: Held) -> str:
    """A ref as stored in a Seal row or a map row: the row id, or ``[text]`` inline."""
    if held.ref is None:
        return f"[{held.text}]"
    return str(held.ref)


def map_body(children: list[tuple[str, Step]]) -> str:
    """A map row's body, once its children's rows are written."""
    parts = (f"{encode_basestring_ascii(key)}:{ref_text(step.held)}" for key, step in children)
    return MAP_MARK + "{" + ",".join(parts) + "}"


def write_step(step: Step, put_row: PutRow) -> None:
    """Write the rows ``step`` needs, children first, filling each ``held.ref``."""
    if step.children is not None:
        for _key, child in step.children:
            write_step(child, put_row)
        step.held.ref = put_row(map_body(step.children), None)
    elif step.body is not None:
        step.held.ref = put_row(step.body, step.prev)


def root_digest(text: str) -> bytes:
    """Content address (16 bytes) of a row with no predecessor."""
    return hashlib.blake2b(b"R" + text.encode("ascii"), digest_size=16).digest()


def chain_digest(prev: bytes, suffix: str) -> bytes:
    """Content address (16 bytes) of a link appending ``suffix`` to the row ``prev``."""
    return hashlib.blake2b(b"C" + prev + suffix.encode("ascii"), digest_size=16).digest()


def row_digest(body: str, prev: int | None) -> bytes:
    """Content address of a value row (SQL stores deduplicate rows by it)."""
    if prev is None:
        return root_digest(body)
    return chain_digest(prev.to_bytes(8, "big"), body)
