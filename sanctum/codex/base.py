"""Seals — the wax impressions each superstep leaves behind.

Seal — a checkpoint; Codex — a checkpoint store. A Seal is the snapshot written at the
end of a superstep: the full Aether, the frontier of the next superstep, the superstep
number, a timestamp and free-form metadata. A Codex stores Seals per Invocation (keyed
by invocation_id) and yields them back for resumption, human-in-the-loop pauses and
time-travel.

Metadata keys the scheduler writes (all JSON-serialisable):

``parent``
    seal_id of the Seal this one continues from (``None`` for an Invocation's first).
    Time-travel makes a tree: two runs resumed from one historic Seal each name it.
``joins``
    ``{sigil: [predecessor, ...]}`` — activations a ``join="all"`` Sigil has gathered
    so far (sorted), carried across supersteps and resumptions.
``interrupt``
    ``{"reason": str, "sigil": str}`` on the Seal written when ``interrupt()`` paused
    the run; absent otherwise. The same Seal also carries the original engine's flat
    keys: ``interrupted`` (``True``), ``reason`` and ``sigil``.
``writers``
    ``{conduit: [sigil, ...]}`` — which Sigils wrote which Conduits in this superstep
    (bound order); used to name the culprit when state cannot be serialised.
``updates``
    the resumption ``updates`` merged into this Seal's Aether, if any.

Keys a caller passes through ``Rite.ainvoke(metadata=...)`` are stored beside these
(the command line records the ritual file's path and content hash there).
"""

from __future__ import annotations

import builtins
import dataclasses
import math
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sanctum.codex.claims import claim_alive, ledger_id, seal_status
from sanctum.codex.frontier import Frontier
from sanctum.errors import SealError

__all__ = [
    "Codex",
    "InvocationSummary",
    "LedgerCodex",
    "Seal",
    "find_unserialisable",
    "new_seal_id",
]


def new_seal_id() -> str:
    """Return a fresh, unique seal_id (32 lowercase hex characters, uuid4)."""
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class Seal:
    """The wax impression of one superstep.

    Seal — a checkpoint. Immutable. ``aether`` is the full state after the superstep's
    deltas were applied; ``frontier`` the Sigils active in the next superstep
    (``(END,)`` when the Invocation finished) — resumption continues from it; it is a
    :class:`~sanctum.codex.frontier.Frontier`, a tuple that also compares equal to a
    list of the same names (``seal.frontier == ["transmute"]``); ``superstep`` the
    1-based count within the Invocation (an interrupt in superstep *n* leaves a Seal
    numbered *n - 1* whose frontier is the interrupted one); ``timestamp`` epoch
    seconds; ``metadata`` free-form context (see the module docstring for the keys the
    scheduler writes). ``seal_id`` uniquely identifies the Seal for time-travel (a new
    uuid4 hex when not given).

    ``frontier`` may be given as any sequence of names; it is kept as a Frontier.
    """

    aether: Mapping[str, Any]
    frontier: tuple[str, ...]
    superstep: int
    timestamp: float = field(default_factory=time.time)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    seal_id: str = field(default_factory=new_seal_id)

    def __post_init__(self) -> None:
        if type(self.frontier) is not Frontier:
            object.__setattr__(self, "frontier", Frontier(self.frontier))

    @property
    def parent(self) -> str | None:
        """The seal_id this Seal continues from (``metadata["parent"]``), or None."""
        value = self.metadata.get("parent")
        return value if isinstance(value, str) else None

    @property
    def interrupt(self) -> Mapping[str, Any] | None:
        """The interrupt details (``reason``, ``sigil``) when this Seal records a pause."""
        value = self.metadata.get("interrupt")
        return value if isinstance(value, Mapping) else None


@dataclass(frozen=True, slots=True)
class InvocationSummary:
    """One line of a Codex's index of Invocations.

    ``seals`` counts the Seals in the history; ``superstep`` and ``frontier`` come from
    the most recently written Seal; ``updated`` is its timestamp (epoch seconds);
    ``metadata`` its metadata. ``status`` is ``"paused"`` when that Seal records an
    interrupt, ``"failed"`` when it records a failure, ``"done"`` when its frontier is
    empty or only END, ``"incomplete"`` otherwise (stopped by a signal or a crash
    after its last Seal — or still running: :meth:`Codex.holder` tells, and the
    command line shows such an Invocation as ``"running"``); see
    :func:`sanctum.codex.claims.seal_status`.
    """

    invocation_id: str
    seals: int
    superstep: int
    frontier: tuple[str, ...]
    updated: float
    metadata: Mapping[str, Any]
    running: bool = False
    """Whether a live call holds the Invocation (filled in by ``sanctum.api``)."""

    @property
    def status(self) -> str:
        """``running``, ``paused``, ``done``, ``failed`` or ``incomplete`` (see above)."""
        return seal_status(self.metadata, self.frontier, running=self.running)


_JSON_SCALARS = (str, int, bool, type(None))


def find_unserialisable(value: Any, path: str = "") -> tuple[str, str] | None:
    """Find the first value that strict JSON cannot carry.

    Walks dicts (string keys only), lists and tuples, iteratively (any depth). Floats
    must be finite; a container that contains itself is reported as a
    ``"circular reference"``. Returns ``(key_path, type_name)`` — e.g.
    ``("messages[3].payload", "datetime")`` — or ``None`` when everything serialises.
    ``path`` prefixes the reported key path.
    """
    exit_marker = object()
    active: set[int] = set()
    checked: set[int] = set()
    stack: builtins.list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if where is exit_marker:
            active.discard(id(item))
            checked.add(id(item))
            continue
        if isinstance(item, _JSON_SCALARS):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return where or "$", f"float ({item})"
            continue
        if isinstance(item, (Mapping, builtins.list, tuple)):
            ident = id(item)
            if ident in active:
                return where or "$", "circular reference"
            if ident in checked:
                continue
            active.add(ident)
            stack.append((exit_marker, item))  # type: ignore[arg-type]
        if isinstance(item, Mapping):
            children: builtins.list[tuple[str, Any]] = []
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{where}[{key!r}]" if where else f"[{key!r}]", (
                        f"{type(key).__name__} key"
                    )
                children.append((f"{where}.{key}" if where else key, child))
            stack.extend(reversed(children))
            continue
        if isinstance(item, (builtins.list, tuple)):
            stack.extend(
                (f"{where}[{i}]", child) for i, child in reversed(builtins.list(enumerate(item)))
            )
            continue
        return where or "$", type(item).__name__
    return None


class Codex(ABC):
    """The ledger where Seals are inscribed and consulted.

    Codex — a checkpoint store. Abstract async storage contract for Seals, keyed by
    invocation_id. Histories are append-only: resuming an Invocation appends new Seals
    after the old ones, and :meth:`get` returns the most recently written Seal (not the
    highest superstep number). Implementations: MemoryCodex (ephemeral, for tests),
    SqliteCodex (local file), PostgresCodex (optional extra, sanctum.codex.postgres).

    Only :meth:`put`, :meth:`get` and :meth:`list` are required. The others have
    working defaults that a store should override when it can do better:
    :meth:`put_next` (an atomic optimistic check, which the scheduler uses so that two
    processes resuming one Invocation never fork its history silently),
    :meth:`get_seal`, :meth:`latest_seal_id`, :meth:`history`, :meth:`invocations`,
    :meth:`delete` and :meth:`aclose`.
    """

    @abstractmethod
    async def put(self, invocation_id: str, seal: Seal) -> None:
        """Append a Seal to the Invocation's history.

        Raises:
            SealError: If the Seal cannot be stored (e.g. unserialisable state, for
                persistent stores; the store is unreachable).
        """

    @abstractmethod
    async def get(self, invocation_id: str) -> Seal | None:
        """Return the Invocation's most recently written Seal, or None."""

    @abstractmethod
    async def list(self, invocation_id: str) -> builtins.list[Seal]:
        """Return the Invocation's full Seal history, oldest first."""

    async def put_next(
        self, invocation_id: str, seal: Seal, *, expected_latest: str | None
    ) -> None:
        """Append a Seal only if the history's latest Seal is still ``expected_latest``.

        Optimistic concurrency: a writer states which seal_id it believed was the most
        recent (``None`` for an empty history). The default implementation reads then
        writes, which is atomic only within one process; stores shared between
        processes override it with a transaction.

        Raises:
            SealError: If another writer appended first; nothing is written.
        """
        latest = await self.get(invocation_id)
        latest_id = latest.seal_id if latest is not None else None
        if latest_id != expected_latest:
            raise concurrent_write(invocation_id, expected_latest, latest_id)
        await self.put(invocation_id, seal)

    async def get_seal(self, invocation_id: str, seal_id: str) -> Seal | None:
        """Return the Seal ``seal_id`` of the Invocation, or None when unknown."""
        for seal in await self.list(invocation_id):
            if seal.seal_id == seal_id:
                return seal
        return None

    async def latest_seal_id(self, invocation_id: str) -> str | None:
        """Return the seal_id of the Invocation's most recently written Seal, or None.

        Reads no value: a store answers from its index. The default loads the latest
        Seal through :meth:`get`.

        Raises:
            SealError: If the store cannot be read.
        """
        latest = await self.get(invocation_id)
        return latest.seal_id if latest is not None else None

    async def history(
        self, invocation_id: str, *, values: bool = True, on_damage: str = "raise"
    ) -> AsyncIterator[Seal]:
        """Yield the Invocation's Seals one at a time, oldest first (none when unknown).

        The streaming form of :meth:`list`: a caller that handles one Seal at a time
        holds one Seal's values, however long the history. With ``values=False`` each
        Seal's ``aether`` is empty and no value is read or decoded (what listing a
        history needs); ids, supersteps, frontiers, times and metadata are all there.
        With ``on_damage="mark"`` a Seal whose stored form is damaged is yielded as a
        stand-in — its seal_id, an empty Aether and frontier, and
        ``metadata["damaged"]`` holding the problem — and the listing goes on;
        ``"raise"`` (the default) raises. The default goes through :meth:`list`.

        Raises:
            SealError: If the store cannot be read or a Seal was damaged.
        """
        for seal in await self.list(invocation_id):
            yield seal if values else dataclasses.replace(seal, aether={})

    async def invocations(self, limit: int = 50) -> builtins.list[InvocationSummary]:
        """Return the most recently updated Invocations, newest first (at most ``limit``).

        Raises:
            NotImplementedError: If the store cannot enumerate its Invocations.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot list its invocations")

    async def delete(self, invocation_id: str) -> bool:
        """Strike an Invocation from the ledger: its Seals and its index row.

        Removes every Seal of the Invocation (its whole history, every branch) and the
        row that lists it among :meth:`invocations`, with the Invocation's claim ledger
        (see :class:`LedgerCodex`), in one transaction where the store has them.
        Value rows are left alone: they are content-addressed and shared between
        Invocations (two runs that hold the same text store it once), so a value
        another Invocation still names stays readable; rows no Seal names any more are
        not reclaimed. Deleting does not check who runs the Invocation: a caller that
        must not delete a running Invocation asks :meth:`holder` first. Deleting an
        Invocation the store does not know is no error.

        Returns:
            True when the store held the Invocation (now gone), False when it did not.

        Raises:
            NotImplementedError: If the store cannot delete (the default).
            SealError: If the store cannot be written.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot delete invocations")

    async def claim(
        self, invocation_id: str, holder: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """Record ``holder`` as the one call running the Invocation, unless one runs it.

        ``holder`` is a record from :func:`sanctum.codex.claims.new_claim`. The engine
        claims before a call runs anything and :meth:`release` s when it ends. This
        default claims nothing (returns None: a store of your own keeps exactly the
        Invocations you run, as in the original engine; two processes resuming one
        Invocation are still kept from forking its history by :meth:`put_next`). The
        built-in stores claim for real: see :class:`LedgerCodex`.

        Returns:
            None when ``holder`` now holds the Invocation; otherwise the record of the
            live holder.

        Raises:
            SealError: If the store cannot be read or written.
        """
        return None

    async def release(self, invocation_id: str, holder: Mapping[str, Any]) -> None:
        """End ``holder``'s claim on the Invocation (see :meth:`claim`); the default
        does nothing."""

    async def holder(self, invocation_id: str) -> Mapping[str, Any] | None:
        """The record of the live call running the Invocation, or None (the default:
        no claims are kept)."""
        return None

    async def aclose(self) -> None:
        """Release connections or file handles. Idempotent; the default does nothing."""


class LedgerCodex(Codex):
    """A Codex that keeps claims (see :meth:`Codex.claim`) as small Seals in a ledger.

    The ledger of an Invocation is the Invocation
    :func:`~sanctum.codex.claims.ledger_id` (which listings leave out), appended
    through :meth:`put_next`: the compare-and-set a store already has makes a claim
    atomic across processes, with no new table — one read and one write per call,
    none per superstep. MemoryCodex, SqliteCodex and PostgresCodex are LedgerCodices.
    """

    async def claim(
        self, invocation_id: str, holder: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """Record ``holder`` as the one call running the Invocation, unless one runs it.

        ``holder`` is a record from :func:`sanctum.codex.claims.new_claim`. The engine
        claims before a call runs anything, and :meth:`release` s when it ends, so of
        two processes starting or resuming one Invocation at once only one runs.

        Kept as a Seal in the Invocation's ledger (see the class docstring).

        Returns:
            None when ``holder`` now holds the Invocation; otherwise the record of the
            live holder (which may be a later winner of the same race).

        Raises:
            SealError: If the store cannot be read or written.
        """
        ledger = ledger_id(invocation_id)
        head = await self.get(ledger)
        if head is not None:
            current = head.metadata.get("holder")
            if not head.metadata.get("released") and claim_alive(current, head.timestamp):
                return current if isinstance(current, Mapping) else {}
        seal = Seal(
            aether={},
            frontier=(),
            superstep=head.superstep + 1 if head is not None else 1,
            metadata={"holder": dict(holder), "invocation_id": invocation_id},
        )
        expected = head.seal_id if head is not None else None
        try:
            await self.put_next(ledger, seal, expected_latest=expected)
        except SealError:
            if await self.latest_seal_id(ledger) == expected:
                raise  # not a lost race: the store itself failed
            winner = await self.get(ledger)
            found = winner.metadata.get("holder") if winner is not None else None
            return found if isinstance(found, Mapping) else {}
        return None

    async def release(self, invocation_id: str, holder: Mapping[str, Any]) -> None:
        """End ``holder``'s claim on the Invocation (see :meth:`claim`).

        Does nothing when another call holds it now. A claim never released (the
        process was killed) lapses by itself: see
        :func:`~sanctum.codex.claims.claim_alive`.

        Raises:
            SealError: If the store cannot be read or written.
        """
        ledger = ledger_id(invocation_id)
        head = await self.get(ledger)
        if head is None or head.metadata.get("released"):
            return
        current = head.metadata.get("holder")
        if not isinstance(current, Mapping) or current.get("token") != holder.get("token"):
            return
        seal = Seal(
            aether={},
            frontier=(),
            superstep=head.superstep + 1,
            metadata={"holder": dict(current), "invocation_id": invocation_id, "released": True},
        )
        try:
            await self.put_next(ledger, seal, expected_latest=head.seal_id)
        except SealError:
            pass  # someone took a lapsed claim over meanwhile: nothing of ours to end

    async def holder(self, invocation_id: str) -> Mapping[str, Any] | None:
        """The record of the live call running the Invocation, or None.

        Raises:
            SealError: If the store cannot be read.
        """
        head = await self.get(ledger_id(invocation_id))
        if head is None or head.metadata.get("released"):
            return None
        current = head.metadata.get("holder")
        if isinstance(current, Mapping) and claim_alive(current, head.timestamp):
            return current
        return None


def concurrent_write(invocation_id: str, expected: str | None, found: str | None) -> SealError:
    """Build the SealError for a lost optimistic-concurrency race."""
    return SealError(
        f"invocation {invocation_id!r} was advanced by another writer: expected its latest "
        f"seal to be {expected!r} but found {found!r}; nothing was written. Another process "
        "is probably resuming the same invocation — wait for it, then resume again.",
        invocation_id=invocation_id,
        seal_id=found,
    )
