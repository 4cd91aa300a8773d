"""Reading stored Seals back: value chains and damage checks (private, shared by stores).

Persistent stores keep each Conduit value as a row ``(id, prev, body)``: a root row
(``prev`` NULL) holds the whole JSON text; a chained row holds only list items
appended to the value of row ``prev``. A Seal row holds its frontier and metadata as
JSON text and its Aether as ``{conduit: value id}``. This module rebuilds full texts
from such rows and turns a Seal row into a :class:`~sanctum.codex.base.Seal`, raising a
:class:`~sanctum.errors.SealError` that names the Invocation, the Seal and the store
when anything was damaged (a hand-edited row, a missing value).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from sanctum.codex._serial import extend_text
from sanctum.codex.base import Seal
from sanctum.errors import SealError

__all__ = ["assemble_texts", "damaged", "decode_refs", "thaw_seal"]


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


def decode_refs(invocation_id: str, seal_id: str, location: str, text: object) -> dict[str, int]:
    """Parse a Seal row's Aether column into ``{conduit: value id}``.

    Raises:
        SealError: If the column is not a JSON object of integer value ids.
    """
    try:
        refs = json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        refs = None
    if not isinstance(refs, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in refs.values()
    ):
        raise damaged(
            invocation_id, seal_id, location, "its aether column is not a map of value ids"
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
