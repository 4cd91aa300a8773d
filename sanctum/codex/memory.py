"""A Codex written in breath: it fades when the session ends.

MemoryCodex — an in-memory checkpoint store, the reference implementation for tests
and ephemeral invocations. Not shared across processes and not persistent. It keeps
copies, so mutating a dict after ``put`` (or a Seal returned by ``get``) never alters
the history: JSON text for plain data, in the value rows every store shares (see
:mod:`sanctum.codex._layout`: a list or string that grows by appending keeps only its
new part per Seal), and deep copies for an Aether holding what JSON cannot (datetimes,
sets, your own objects) — which the persistent stores refuse with a SealError, as the
specification prescribes; MemoryCodex is where such state may live.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import threading
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

from sanctum.codex._layout import Held, HeldCache, write_step
from sanctum.codex._serial import decode_json, encode_json, encode_seal
from sanctum.codex._stored import (
    Values,
    aether_column,
    child_ids,
    decode_refs,
    thaw_seal,
    value_ids,
)
from sanctum.codex.base import (
    InvocationSummary,
    LedgerCodex,
    Seal,
    concurrent_write,
    find_unserialisable,
)
from sanctum.codex.claims import LEDGER_PREFIX, ledger_id
from sanctum.errors import SealError

__all__ = ["MemoryCodex"]

_LOCATION = "memory"


@dataclass(frozen=True, slots=True)
class _Entry:
    seal_id: str
    superstep: int
    timestamp: float
    frontier: tuple[str, ...]
    metadata: str
    aether: str
    """The Aether column, as a persistent store writes it (refs to value rows)."""
    order: int
    live: tuple[dict[str, Any], dict[str, Any]] | None = None
    """Copies of the Aether and metadata when they are not plain JSON (else None)."""

    def meta(self) -> Any:
        return _copied(self.live[1]) if self.live is not None else decode_json(self.metadata)


class MemoryCodex(LedgerCodex):
    """Ephemeral in-memory ledger of Seals.

    MemoryCodex — an in-memory checkpoint store. Stores histories in a plain dict keyed
    by invocation_id. Intended for tests and short-lived local runs; contents vanish
    with the object. Values are kept as JSON text in the persistent stores' layout (a
    list or string that extends the previous Seal's keeps only its new part), so
    memory grows linearly with a conversation and a put costs what changed.
    Each history is also indexed by seal_id, so a write's duplicate check and a lookup
    by seal_id take constant time however long the Invocation runs.
    """

    def __init__(self) -> None:
        """Create an empty ledger."""
        self._histories: dict[str, builtins.list[_Entry]] = {}
        self._by_id: dict[str, dict[str, _Entry]] = {}
        """Per invocation: seal_id → its entry (the same entries as ``_histories``)."""
        self._rows: dict[int, tuple[int | None, str]] = {}
        """Value rows, the layout every store shares: id → (prev, body)."""
        self._helds = HeldCache()
        self._lock = threading.Lock()
        self._order = 0

    # ------------------------------------------------------------------ writing

    def _held(self, invocation_id: str, parent: str | None) -> dict[str, Held]:
        """What the Seal ``parent`` holds, remembered or rebuilt (a hint: {} if unknown)."""
        if parent is None:
            return {}
        held = self._helds.get(invocation_id, parent)
        if held is not None:
            return held
        entry = self._by_id.get(invocation_id, {}).get(parent)
        if entry is None or entry.live is not None:
            return {}
        try:
            self._thaw(invocation_id, entry, remember=True)
        except SealError:
            return {}
        return self._helds.get(invocation_id, parent) or {}

    def _put_row(self, body: str, prev: Any) -> int:
        row_id = len(self._rows) + 1
        self._rows[row_id] = (prev, body)
        return row_id

    def _write(self, invocation_id: str, seal: Seal, check: bool, expected: str | None) -> None:
        """Check, encode and append under the lock (``check``: the optimistic check)."""
        try:
            encoded = encode_seal(invocation_id, seal, self._held(invocation_id, seal.parent))
        except SealError:
            plain = find_unserialisable(dict(seal.aether)) is None
            if plain and find_unserialisable(dict(seal.metadata)) is None:
                raise  # not about rich values: a bad id, frontier or superstep
            # rich values are kept as copies, but the ids, superstep, timestamp and
            # frontier must still be usable: check them on the Seal without its values
            encode_seal(invocation_id, dataclasses.replace(seal, aether={}, metadata={}), {})
            live = (_copied(dict(seal.aether)), _copied(dict(seal.metadata)))
            self._append(invocation_id, seal, check, expected, "", "{}", live)
            return
        history = self._check(invocation_id, seal, check, expected)
        for step in encoded.values.values():
            write_step(step, self._put_row)
        aether = aether_column(encoded.values)
        self._append(invocation_id, seal, check, expected, encoded.metadata, aether, None, history)
        self._helds.put(
            invocation_id, seal.seal_id, {name: step.held for name, step in encoded.values.items()}
        )

    def _append(
        self,
        invocation_id: str,
        seal: Seal,
        check: bool,
        expected: str | None,
        metadata: str,
        aether: str,
        live: tuple[dict[str, Any], dict[str, Any]] | None,
        history: builtins.list[_Entry] | None = None,
    ) -> None:
        """Append the entry after the optimistic check and the append-only rule."""
        if history is None:
            history = self._check(invocation_id, seal, check, expected)
        self._order += 1
        entry = _Entry(
            seal.seal_id,
            seal.superstep,
            float(seal.timestamp),
            tuple(seal.frontier),
            metadata,
            aether,
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

    def _chains(self, ids: Iterable[int]) -> builtins.list[tuple[int, Any, Any]]:
        """The value rows behind ``ids``: their chains, and a map row's children's."""
        rows = self._rows
        out: builtins.list[tuple[int, Any, Any]] = []
        seen: set[int] = set()
        stack = builtins.list(ids)
        while stack:
            row_id = stack.pop()
            while row_id not in seen and row_id in rows:
                seen.add(row_id)
                prev, body = rows[row_id]
                out.append((row_id, prev, body))
                stack.extend(child_ids(body))
                if prev is None:
                    break
                row_id = prev
        return out

    def _thaw(self, invocation_id: str, entry: _Entry, remember: bool = False) -> Seal:
        if entry.live is not None:
            return Seal(
                seal_id=entry.seal_id,
                aether=_copied(entry.live[0]),
                frontier=entry.frontier,
                superstep=entry.superstep,
                timestamp=entry.timestamp,
                metadata=entry.meta(),
            )
        refs = decode_refs(invocation_id, entry.seal_id, _LOCATION, entry.aether)
        values = Values(self._chains(value_ids(refs)))
        row = (
            entry.seal_id,
            entry.superstep,
            entry.timestamp,
            encode_json(builtins.list(entry.frontier)),
            entry.metadata,
            entry.aether,
        )
        held: dict[str, Held] | None = {} if remember else None
        seal = thaw_seal(invocation_id, _LOCATION, row, values, held)
        if held is not None:
            self._helds.put(invocation_id, entry.seal_id, held)
        return seal

    async def get(self, invocation_id: str) -> Seal | None:
        """Return the Invocation's most recently written Seal (a fresh copy), or None."""
        with self._lock:
            history = self._histories.get(invocation_id)
            return self._thaw(invocation_id, history[-1], remember=True) if history else None

    async def list(self, invocation_id: str) -> builtins.list[Seal]:
        """Return the Invocation's full Seal history (fresh copies), oldest first."""
        with self._lock:
            return [
                self._thaw(invocation_id, entry) for entry in self._histories.get(invocation_id, ())
            ]

    async def history(
        self, invocation_id: str, *, values: bool = True, on_damage: str = "raise"
    ) -> AsyncIterator[Seal]:
        """Yield the Invocation's Seals (fresh copies) one at a time, oldest first.

        ``values=False`` rebuilds no value (``aether`` is empty); ``on_damage`` is
        accepted as for the persistent stores (nothing in memory is ever damaged).
        """
        with self._lock:
            entries = builtins.list(self._histories.get(invocation_id, ()))
        for entry in entries:
            if values:
                with self._lock:
                    seal = self._thaw(invocation_id, entry)
            else:
                seal = Seal(
                    seal_id=entry.seal_id,
                    aether={},
                    frontier=entry.frontier,
                    superstep=entry.superstep,
                    timestamp=entry.timestamp,
                    metadata=entry.meta(),
                )
            yield seal

    async def latest_seal_id(self, invocation_id: str) -> str | None:
        """Return the seal_id of the Invocation's latest Seal, or None."""
        with self._lock:
            history = self._histories.get(invocation_id)
            return history[-1].seal_id if history else None

    async def get_seal(self, invocation_id: str, seal_id: str) -> Seal | None:
        """Return the Seal ``seal_id`` of the Invocation (a fresh copy), or None."""
        with self._lock:
            entry = self._by_id.get(invocation_id, {}).get(seal_id)
            return self._thaw(invocation_id, entry, remember=True) if entry is not None else None

    async def delete(self, invocation_id: str) -> bool:
        """Remove the Invocation's Seals, its listing and its claim ledger.

        Value rows stay (they are shared between Invocations; see
        :meth:`Codex.delete`).

        Returns:
            True when the Invocation was held, False when it was unknown.
        """
        with self._lock:
            found = False
            for name in (invocation_id, ledger_id(invocation_id)):
                found = self._histories.pop(name, None) is not None or found
                self._by_id.pop(name, None)
            self._helds.clear()
            return found

    async def invocations(self, limit: int = 50) -> builtins.list[InvocationSummary]:
        """Return the most recently written Invocations, newest first (at most ``limit``).

        Args:
            limit: Maximum number of summaries.

        Returns:
            One summary per Invocation, ordered by its latest write, newest first.
        """
        with self._lock:
            latest = sorted(
                (
                    (history[-1], name, len(history))
                    for name, history in self._histories.items()
                    if not name.startswith(LEDGER_PREFIX)  # claim ledgers are no runs
                ),
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
