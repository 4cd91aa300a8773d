"""The Seals of one call: the claim, each superstep's Seal, the failure record.

:class:`Sealer` writes through ``Codex.put_next`` and chains the expectations, so two
concurrent resumptions never fork a history silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sanctum.codex.base import Codex, Seal, concurrent_write, new_seal_id
from sanctum.codex.claims import (
    FAILURE_KEY,
    describe_holder,
    failure_record,
    hold,
    new_claim,
    release,
)
from sanctum.errors import SealError
from sanctum.omens.events import SealWritten
from sanctum.ritual._state import State, joins_metadata
from sanctum.ritual.algo import Joins
from sanctum.ritual.constants import END
from sanctum.ritual.emitter import Emitter
from sanctum.wards.secrets import Veil

__all__ = ["Sealer", "held_error"]


class Sealer:
    """Writes the Invocation's Seals through ``put_next``, chaining the expectations."""

    __slots__ = (
        "broken",
        "claim",
        "codex",
        "emitter",
        "invocation_id",
        "last",
        "metadata",
        "start",
        "veil",
    )

    def __init__(
        self,
        codex: Codex,
        invocation_id: str,
        metadata: Mapping[str, Any] | None,
        emitter: Emitter | None,
        veil: Veil | None = None,
        call: str = "run",
    ) -> None:
        self.codex = codex
        self.invocation_id = invocation_id
        self.claim = new_claim(call)
        self.metadata = dict(metadata or {})
        self.start: tuple[Any, ...] | None = None
        """While the call holds its claim: what it started from (aether, frontier,
        superstep, joins, parent, expected head, updates)."""
        self.emitter = emitter
        self.veil = veil
        self.last: Seal | None = None
        """The latest Seal this call wrote (what a failure record repeats)."""
        self.broken = False
        """Whether a write failed (the store, or another writer): record nothing more."""

    async def take(self, state: State, frontier: Sequence[str]) -> None:
        """Claim the Invocation for this call before anything runs.

        Through ``Codex.claim`` (atomic across processes), then checks that the head
        Seal is still the one this call starts from.

        Raises:
            SealError: If another call holds the Invocation or advanced it since it
                was read; nothing was run.
        """
        inv = self.invocation_id
        held = await self.codex.claim(inv, self.claim)
        if held is not None:
            raise held_error(inv, held)
        hold(self.claim)
        self.start = (
            state.aether,
            tuple(frontier),
            state.superstep,
            state.joins,
            state.parent,
            state.expected,
            state.updates,
        )
        found = await self.codex.latest_seal_id(inv)
        if found != state.expected:
            await self.drop()
            raise concurrent_write(inv, state.expected, found)

    async def drop(self) -> None:
        """End this call's claim (at the end of the call, however it ends)."""
        if self.start is None:
            return
        self.start = None
        release(self.claim)
        try:
            await self.codex.release(self.invocation_id, self.claim)
        except Exception:  # a claim never released lapses with its process
            pass

    async def fail(self, error: BaseException, sigil: str | None, superstep: int) -> None:
        """Record a failure: the latest Seal's state again, with a failure record.

        Resuming it re-runs the frontier that failed. A store that fails now, too, is
        left alone (the run's own error is what the caller sees).
        """
        if self.broken or self.start is None:
            return
        mask = self.veil.secrets.mask_text if self.veil is not None else None
        metadata = dict(self.metadata)
        metadata[FAILURE_KEY] = failure_record(error, sigil=sigil, superstep=superstep, mask=mask)
        metadata["writers"] = {}
        last = self.last
        if last is not None:
            metadata["parent"] = last.seal_id
            metadata["joins"] = last.metadata.get("joins", {})
            seal = Seal(
                aether=last.aether,
                frontier=last.frontier,
                superstep=last.superstep,
                metadata=metadata,
            )
            expected = last.seal_id
        else:  # the call failed before its first Seal: record its starting point
            aether, frontier, number, joins, parent, expected, updates = self.start
            metadata["parent"] = parent
            metadata["joins"] = joins_metadata(joins)
            if updates is not None:
                metadata["updates"] = updates
            if self.veil is not None:
                aether = self.veil.aether(aether)
                frontier = [self.veil.text(name) for name in frontier]
                metadata = self.veil.secrets.mask(metadata)
            seal = Seal(
                aether=aether, frontier=tuple(frontier), superstep=number, metadata=metadata
            )
        try:
            await self.codex.put_next(self.invocation_id, seal, expected_latest=expected)
        except Exception:  # the run's own failure wins
            pass

    async def write(
        self,
        state: State,
        *,
        aether: Mapping[str, Any],
        frontier: Sequence[str],
        superstep: int,
        joins: Joins,
        writers: dict[str, list[str]],
        interrupt: Mapping[str, Any] | None = None,
    ) -> Seal:
        metadata: dict[str, Any] = dict(self.metadata)
        metadata["parent"] = state.parent
        metadata["joins"] = joins_metadata(joins)
        metadata["writers"] = writers
        if state.updates is not None:
            metadata["updates"] = state.updates
            state.updates = None
        if interrupt is not None:
            metadata["interrupt"] = dict(interrupt)
            # the original engine's flat keys, beside sanctum's "interrupt" record
            metadata["interrupted"] = True
            metadata["reason"] = interrupt.get("reason")
            metadata["sigil"] = interrupt.get("sigil")
        if not frontier:
            frontier = (END,)  # a finished run's last Seal: every branch reached END
        if self.veil is not None:  # the Rite's Secrets: nothing secret reaches the store
            aether = self.veil.aether(aether)
            frontier = [self.veil.text(name) for name in frontier]
            metadata = self.veil.secrets.mask(metadata)
        seal = Seal(
            seal_id=new_seal_id(),
            aether=aether,
            frontier=tuple(frontier),
            superstep=superstep,
            metadata=metadata,
        )
        try:
            await self.codex.put_next(self.invocation_id, seal, expected_latest=state.expected)
        except BaseException:
            self.broken = True
            raise
        state.parent = state.expected = seal.seal_id
        self.last = seal
        if self.emitter is not None:
            await self.emitter.emit(
                SealWritten(
                    invocation_id=self.invocation_id,
                    superstep=superstep,
                    seal_id=seal.seal_id,
                    interrupted=interrupt is not None,
                )
            )
        return seal


def held_error(inv: str, holder: Mapping[str, Any]) -> SealError:
    """The error of a call that finds the Invocation held by another call."""
    return SealError(
        f"invocation {inv!r} is being run by another call: {describe_holder(holder)}; "
        "nothing was run. Wait for it to finish or pause, then resume again",
        invocation_id=inv,
    )
