"""A Codex written in breath: it fades when the session ends.

MemoryCodex — an in-memory checkpoint store, the reference implementation for tests
and ephemeral invocations. Not shared across processes and not persistent. It keeps
copies, so mutating a dict after ``put`` (or a Seal returned by ``get``) never alters
the history: JSON text for plain data (lists that extend the previous Seal's list keep
only the new items), and deep copies for an Aether holding what JSON cannot (datetimes,
sets, your own objects) — which the persistent stores refuse with a SealError, as the
specification prescribes; MemoryCodex is where such state may live.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

from sanctum.codex._serial import decode_json, encode_seal, extend_text
from sanctum.codex.base import (
    Codex,
    InvocationSummary,
    Seal,
    concurrent_write,
    find_unserialisable,
)
from sanctum.errors import SealError

__all__ = ["MemoryCodex"]


@dataclass(frozen=True, slots=True)
class _Node:
    """A stored value: whole JSON text, or new list items chained to ``prev``."""

    body: str
    prev: _Node | None = None

    def text(self) -> str:
        if self.prev is None:
            return self.body
        parts: builtins.list[str] = []
        node: _Node | None = self
        while node is not None and node.prev is not None:
            parts.append(node.body)
            node = node.prev
        assert node is not None
        text = node.body
        for body in reversed(parts):
            text = extend_text(text, body)
        return text


@dataclass(frozen=True, slots=True)
class _Entry:
    seal_id: str
    superstep: int
    timestamp: float
    frontier: tuple[str, ...]
    metadata: str
    values: dict[str, _Node]
    order: int
    live: tuple[dict[str, Any], dict[str, Any]] | None = None
    """Copies of the Aether and metadata when they are not plain JSON (else None)."""

    def meta(self) -> Any:
        return _copied(self.live[1]) if self.live is not None else decode_json(self.metadata)


class MemoryCodex(Codex):
    """Ephemeral in-memory ledger of Seals.

    MemoryCodex — an in-memory checkpoint store. Stores histories in a plain dict keyed
    by invocation_id. Intended for tests and short-lived local runs; contents vanish
    with the object. Values are kept as JSON text (lists that extend the previous
    Seal's list keep only the new items), so memory grows linearly with a conversation.
    Each history is also indexed by seal_id, so a write's duplicate check and a lookup
    by seal_id take constant time however long the Invocation runs.
    """

    def __init__(self) -> None:
        """Create an empty ledger."""
        self._histories: dict[str, builtins.list[_Entry]] = {}
        self._by_id: dict[str, dict[str, _Entry]] = {}
        """Per invocation: seal_id → its entry (the same entries as ``_histories``)."""
        self._latest: dict[str, tuple[str, dict[str, tuple[str, _Node]]]] = {}
        self._lock = threading.Lock()
        self._order = 0

    # ------------------------------------------------------------------ writing

    def _bases(self, invocation_id: str, seal: Seal) -> dict[str, tuple[str, _Node]]:
        """Texts and nodes of the Seal this one probably continues from."""
        cached = self._latest.get(invocation_id)
        parent = seal.parent
        if cached is not None and (parent is None or cached[0] == parent):
            return cached[1]
        if parent is not None:
            entry = self._by_id.get(invocation_id, {}).get(parent)
            if entry is not None:
                return {name: (node.text(), node) for name, node in entry.values.items()}
        return cached[1] if cached is not None else {}

    def _write(self, invocation_id: str, seal: Seal, check: bool, expected: str | None) -> None:
        """Check, encode and append under the lock (``check``: the optimistic check)."""
        bases = self._bases(invocation_id, seal)
        try:
            encoded = encode_seal(
                invocation_id, seal, {name: text for name, (text, _) in bases.items()}
            )
        except SealError:
            plain = find_unserialisable(dict(seal.aether)) is None
            if plain and find_unserialisable(dict(seal.metadata)) is None:
                raise  # not about rich values: a bad id, frontier or superstep
            # rich values are kept as copies, but the ids, superstep, timestamp and
            # frontier must still be usable: check them on the Seal without its values
            encode_seal(invocation_id, dataclasses.replace(seal, aether={}, metadata={}), {})
            live = (_copied(dict(seal.aether)), _copied(dict(seal.metadata)))
            self._append(invocation_id, seal, check, expected, "", {}, live)
            self._latest.pop(invocation_id, None)  # the next Seal is encoded whole
            return
        values: dict[str, _Node] = {}
        for name, value in encoded.values.items():
            base = bases.get(name)
            if base is not None and base[0] == value.text:
                values[name] = base[1]
            elif base is not None and value.base is not None:
                values[name] = _Node(value.suffix, base[1])
            else:
                values[name] = _Node(value.text)
        self._append(invocation_id, seal, check, expected, encoded.metadata, values, None)
        self._latest[invocation_id] = (
            seal.seal_id,
            {name: (encoded.values[name].text, node) for name, node in values.items()},
        )

    def _append(
        self,
        invocation_id: str,
        seal: Seal,
        check: bool,
        expected: str | None,
        metadata: str,
        values: dict[str, _Node],
        live: tuple[dict[str, Any], dict[str, Any]] | None,
    ) -> None:
        """Append the entry after the optimistic check and the append-only rule."""
        history = self._check(invocation_id, seal, check, expected)
        self._order += 1
        entry = _Entry(
            seal.seal_id,
            seal.superstep,
            float(seal.timestamp),
            tuple(seal.frontier),
            metadata,
            values,
            self._order,
            live,
        )
        history.append(entry)
        self._histories[invocation_id] = history
        self._by_id.setdefault(invocation_id, {})[seal.seal_id] = entry

    def _check(
        self, invocation_id: str, seal: Seal, check: bool, expected: str | None
    ) -> builtins.list[_Entry]:
        """The history, after the optimistic check and the append-only rule."""
        history = self._histories.get(invocation_id, [])
        if check:
            latest = history[-1].seal_id if history else None
            if latest != expected:
                raise concurrent_write(invocation_id, expected, latest)
        if seal.seal_id in self._by_id.get(invocation_id, {}):
            raise SealError(
                f"invocation {invocation_id!r} already holds seal {seal.seal_id!r}; histories "
                "are append-only — write a new Seal with a fresh seal_id instead",
                invocation_id=invocation_id,
                seal_id=seal.seal_id,
            )
        return history

    async def put(self, invocation_id: str, seal: Seal) -> None:
        """Append a Seal to the Invocation's history.

        Args:
            invocation_id: The Invocation whose history grows.
            seal: The Seal to append; a checked, encoded copy is kept.

        Raises:
            SealError: If the Seal's ids, frontier or superstep are unusable, or the
                history already holds its seal_id. Nothing is written then. (An Aether
                or metadata JSON cannot hold is kept as a deep copy, not refused.)
        """
        with self._lock:
            self._write(invocation_id, seal, False, None)

    async def put_next(
        self, invocation_id: str, seal: Seal, *, expected_latest: str | None
    ) -> None:
        """Append a Seal only if the history's latest Seal is still ``expected_latest``.

        Atomic: the check and the append happen under one lock.

        Raises:
            SealError: If another writer appended first, or as for :meth:`put`;
                nothing is written.
        """
        with self._lock:
            self._write(invocation_id, seal, True, expected_latest)

    # ------------------------------------------------------------------ reading

    @staticmethod
    def _thaw(entry: _Entry) -> Seal:
        if entry.live is not None:
            aether = _copied(entry.live[0])
        else:
            aether = {name: decode_json(node.text()) for name, node in entry.values.items()}
        return Seal(
            seal_id=entry.seal_id,
            aether=aether,
            frontier=entry.frontier,
            superstep=entry.superstep,
            timestamp=entry.timestamp,
            metadata=entry.meta(),
        )

    async def get(self, invocation_id: str) -> Seal | None:
        """Return the Invocation's most recently written Seal (a fresh copy), or None."""
        with self._lock:
            history = self._histories.get(invocation_id)
            return self._thaw(history[-1]) if history else None

    async def list(self, invocation_id: str) -> builtins.list[Seal]:
        """Return the Invocation's full Seal history (fresh copies), oldest first."""
        with self._lock:
            return [self._thaw(entry) for entry in self._histories.get(invocation_id, ())]

    async def get_seal(self, invocation_id: str, seal_id: str) -> Seal | None:
        """Return the Seal ``seal_id`` of the Invocation (a fresh copy), or None."""
        with self._lock:
            entry = self._by_id.get(invocation_id, {}).get(seal_id)
            return self._thaw(entry) if entry is not None else None

    async def invocations(self, limit: int = 50) -> builtins.list[InvocationSummary]:
        """Return the most recently written Invocations, newest first (at most ``limit``).

        Args:
            limit: Maximum number of summaries.

        Returns:
            One summary per Invocation, ordered by its latest write, newest first.
        """
        with self._lock:
            latest = sorted(
                ((history[-1], name, len(history)) for name, history in self._histories.items()),
                key=lambda item: item[0].order,
                reverse=True,
            )[: max(limit, 0)]
            return [
                InvocationSummary(
                    invocation_id=name,
                    seals=count,
                    superstep=entry.superstep,
                    frontier=entry.frontier,
                    updated=entry.timestamp,
                    metadata=entry.meta(),
                )
                for entry, name, count in latest
            ]


def _copied(value: dict[str, Any]) -> dict[str, Any]:
    """A deep copy, or a shallow one of what cannot be deep-copied (locks, clients)."""
    try:
        return copy.deepcopy(value)
    except Exception:  # an object that refuses copying is kept by reference
        return dict(value)
