"""The stored layout of Seals, shared by the persistent stores (private).

Persistent stores keep each large Conduit value as a row ``(id, digest, prev, body)``:
a root row (``prev`` NULL) holds the whole JSON text; a chained row holds only list
items appended to the value of row ``prev``. A Seal row holds its frontier and
metadata as JSON text and its Aether as a JSON object ``{conduit: ref}`` in Conduit
order, where a ref is a value row id, or ``[value]`` for a small value (at most
:data:`INLINE_LIMIT` bytes of JSON) kept inline — a counter costs no extra row.

:func:`plan_values` decides, per Conduit, how a new Seal stores each value;
:func:`assemble_texts` rebuilds full texts from rows; :func:`thaw_seal` turns a Seal
row into a :class:`~sanctum.codex.base.Seal`, raising a
:class:`~sanctum.errors.SealError` naming the Invocation, the Seal and the store when
anything was damaged (a hand-edited row, a missing value).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from sanctum.codex._serial import (
    EncodedSeal,
    chain_digest,
    encode_json,
    extend_text,
    root_digest,
)
from sanctum.codex.base import Seal
from sanctum.errors import SealError

__all__ = [
    "INLINE_LIMIT",
    "Bases",
    "Placement",
    "aether_column",
    "assemble_texts",
    "bases_from_refs",
    "damaged",
    "decode_refs",
    "plan_values",
    "thaw_seal",
    "value_ids",
]

INLINE_LIMIT = 256
"""Largest value (bytes of JSON) kept inline in the Seal row instead of a value row."""

Ref = int | list[Any]
Bases = dict[str, tuple[str, int | None]]
"""``{conduit: (full JSON text, value row id or None when inline)}`` of a base Seal."""


@dataclass(slots=True)
class Placement:
    """How one Conduit value of a new Seal is stored.

    ``value_id`` set: reuse that row. ``digest`` set: insert a row
    ``(digest, prev, body)`` (``prev`` None for a root). Neither: inline ``text``.
    Treat as immutable (not frozen only because a frozen dataclass is slower to build,
    and one is built per Conduit per Seal).
    """

    conduit: str
    text: str
    value_id: int | None = None
    digest: bytes | None = None
    prev: int | None = None
    body: str = ""


def plan_values(encoded: EncodedSeal, bases: Bases) -> list[Placement]:
    """Decide how each value of ``encoded`` is stored, given the base Seal's values."""
    plan: list[Placement] = []
    for name, value in encoded.values.items():
        base = bases.get(name)
        if base is not None and base[0] == value.text and base[1] is not None:
            plan.append(Placement(name, value.text, value_id=base[1]))
        elif base is not None and base[1] is not None and value.base is not None:
            digest = chain_digest(base[1].to_bytes(8, "big"), value.suffix)
            plan.append(Placement(name, value.text, digest=digest, prev=base[1], body=value.suffix))
        elif len(value.text) <= INLINE_LIMIT:
            plan.append(Placement(name, value.text))
        else:
            plan.append(
                Placement(name, value.text, digest=root_digest(value.text), body=value.text)
            )
    return plan


def aether_column(plan: list[Placement], ids: dict[str, int]) -> str:
    """The Seal row's Aether column: refs in Conduit order (``ids`` for stored values)."""
    parts = []
    for place in plan:
        key = encode_basestring_ascii(place.conduit)
        value_id = ids.get(place.conduit)
        parts.append(f"{key}:{value_id}" if value_id is not None else f"{key}:[{place.text}]")
    return "{" + ",".join(parts) + "}"


def value_ids(refs: dict[str, Ref]) -> set[int]:
    """The value row ids a Seal row points at."""
    return {ref for ref in refs.values() if isinstance(ref, int)}


def bases_from_refs(refs: dict[str, Ref], texts: dict[int, str]) -> Bases:
    """A stored Seal's values as bases for the next Seal (texts re-encoded for inline)."""
    bases: Bases = {}
    for name, ref in refs.items():
        if isinstance(ref, int):
            if ref in texts:
                bases[name] = (texts[ref], ref)
        else:
            bases[name] = (encode_json(ref[0]), None)
    return bases


def damaged(invocation_id: str, seal_id: str, location: str, problem: str) -> SealError:
    """Build the SealError for a Seal whose stored form no longer makes sense."""
    return SealError(
        f"seal {seal_id!r} of invocation {invocation_id!r} in {location} is damaged: "
        f"{problem}. Nothing was changed. Resume from an earlier, intact seal with "
        "seal_id=..., or restore the store from a backup.",
        invocation_id=invocation_id,
        seal_id=seal_id,
        location=location,
    )


def _is_ref(value: object) -> bool:
    if isinstance(value, list):
        return len(value) == 1
    return isinstance(value, int) and not isinstance(value, bool)


def decode_refs(invocation_id: str, seal_id: str, location: str, text: object) -> dict[str, Ref]:
    """Parse a Seal row's Aether column into ``{conduit: value id or [inline value]}``.

    Raises:
        SealError: If the column is not a JSON object of such refs.
    """
    try:
        refs = json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        refs = None
    if not isinstance(refs, dict) or not all(_is_ref(v) for v in refs.values()):
        raise damaged(
            invocation_id, seal_id, location, "its aether column is not a map of value refs"
        )
    return refs


def assemble_texts(rows: Iterable[tuple[int, int | None, str]]) -> dict[int, str]:
    """Rebuild the full JSON text of every value row given, chains included.

    Args:
        rows: ``(id, prev, body)`` for the wanted rows and all their ancestors.

    Returns:
        ``{id: full JSON text}`` for every row whose chain is complete (a row whose
        ancestor is missing, or that loops, is left out).
    """
    table = {row_id: (prev, body) for row_id, prev, body in rows}
    texts: dict[int, str] = {}
    for start in table:
        if start in texts:
            continue
        path: list[int] = []
        seen: set[int] = set()
        node: int | None = start
        while node is not None and node not in texts:
            if node in seen or node not in table:
                node = -1
                break
            seen.add(node)
            path.append(node)
            node = table[node][0]
        if node == -1:
            continue
        text = texts[node] if node is not None else None
        for row_id in reversed(path):
            prev, body = table[row_id]
            if prev is None:
                text = body
            else:
                assert text is not None
                if not (text.startswith("[") and text.endswith("]")):
                    break
                text = extend_text(text, body)
            texts[row_id] = text
    return texts


def thaw_seal(
    invocation_id: str,
    location: str,
    row: tuple[Any, ...],
    texts: Mapping[int, str],
) -> Seal:
    """Turn a stored Seal row into a Seal, checking every field.

    Args:
        invocation_id: The Invocation (for messages).
        location: The store's path or address (for messages; never a password).
        row: ``(seal_id, superstep, timestamp, frontier_json, metadata_json, refs_json)``.
        texts: Full value texts by id (from :func:`assemble_texts`).

    Raises:
        SealError: If any field was damaged (naming the Invocation and the Seal).
    """
    seal_id, superstep, timestamp, frontier_text, metadata_text, refs_text = row
    seal_id = str(seal_id)
    refs = decode_refs(invocation_id, seal_id, location, refs_text)
    if not isinstance(superstep, int) or isinstance(superstep, bool) or superstep < 0:
        raise damaged(invocation_id, seal_id, location, f"superstep {superstep!r} is not a count")
    if not isinstance(timestamp, (int, float)) or isinstance(timestamp, bool):
        raise damaged(invocation_id, seal_id, location, f"timestamp {timestamp!r} is not a number")
    try:
        frontier = json.loads(frontier_text)
    except (TypeError, ValueError):
        frontier = None
    if not isinstance(frontier, list) or not all(isinstance(s, str) for s in frontier):
        raise damaged(
            invocation_id, seal_id, location, "its frontier is not a JSON list of sigil names"
        )
    try:
        metadata = json.loads(metadata_text)
    except (TypeError, ValueError):
        metadata = None
    if not isinstance(metadata, dict):
        raise damaged(invocation_id, seal_id, location, "its metadata is not a JSON object")
    aether: dict[str, Any] = {}
    for conduit, value_id in refs.items():
        if isinstance(value_id, list):
            aether[conduit] = value_id[0]
            continue
        text = texts.get(value_id)
        if text is None:
            raise damaged(
                invocation_id,
                seal_id,
                location,
                f"the value of conduit {conduit!r} (value {value_id}) is missing or broken",
            )
        try:
            aether[conduit] = json.loads(text)
        except ValueError:
            raise damaged(
                invocation_id,
                seal_id,
                location,
                f"the value of conduit {conduit!r} (value {value_id}) is not valid JSON",
            ) from None
    return Seal(
        seal_id=seal_id,
        aether=aether,
        frontier=tuple(frontier),
        superstep=superstep,
        timestamp=float(timestamp),
        metadata=metadata,
    )
