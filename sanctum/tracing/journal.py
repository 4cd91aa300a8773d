"""The chronicler's notebook: Omens turned into trace entries as they arrive.

A :class:`Chronicle` holds what one Invocation (or one run of a Circle inside it) gave
off, already converted to JSON data so that later mutations of a delta cannot rewrite
history. Work per Omen is small and constant apart from copying the Omen's payload;
everything derived (spell calls, status, durations of unfinished work) is computed
once, by :mod:`sanctum.tracing.document`, when the trace is built.

``CircleEchoed`` Omens are unwrapped into child Chronicles — one per Circle run, keyed
by the Circle's name, the outer Sigil and superstep, and the inner invocation — so a
nested execution is traced in full.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from typing import Any

from sanctum.omens.events import (
    CircleEchoed,
    DeltaRejected,
    Omen,
    RiteBegan,
    RiteManifested,
    SealWritten,
    SigilBegan,
    SigilCompleted,
    SigilRetried,
    SpellCallRejected,
    SpellCallRepaired,
    SuperstepBegan,
    SuperstepCompleted,
    TokenEmitted,
)
from sanctum.wards._jsonable import jsonable

__all__ = ["Chronicle"]

Entry = dict[str, Any]

_PLAIN_INT_BITS = 10_000
"""Integers up to this size are copied as they are (``jsonable`` summarises larger)."""


class Chronicle:
    """Trace entries of one run, filled Omen by Omen.

    Attributes are plain lists and dicts of JSON data, read by
    :func:`sanctum.tracing.document.assemble`.
    """

    def __init__(self, *, circle: str | None = None, sigil: str = "", superstep: int = 0) -> None:
        self.circle = circle
        self.outer_sigil = sigil
        self.outer_superstep = superstep
        self.invocation_id: str | None = None
        self.resumed_from: str | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.last_at: float | None = None
        self.manifested = False
        self.final_superstep: int | None = None
        self.final_aether: Any = None
        self.pause: Entry | None = None
        self.supersteps: list[Entry] = []
        self.deltas: list[Entry] = []
        self.retries: list[Entry] = []
        self.repairs: list[Entry] = []
        self.rejections: list[Entry] = []
        self.seals: list[Entry] = []
        self.tokens: list[Entry] = []
        self.others: list[Entry] = []
        self.omen_counts: Counter[str] = Counter()
        self.children: dict[tuple[str, str, int, str], Chronicle] = {}
        self._latest_child: dict[tuple[str, str, int], Chronicle] = {}
        self._steps: dict[int, Entry] = {}
        self._sigils: dict[tuple[int, str], Entry] = {}
        self._open: list[tuple[int, Entry]] = []  # Sigil entries that may still be running

    # ------------------------------------------------------------------ recording
    def record(self, omen: Omen) -> None:
        """Fold one Omen into the chronicle (unwrapping Circle echoes).

        Args:
            omen: Any Omen; unknown subclasses are kept in ``others`` field by field.
        """
        if isinstance(omen, CircleEchoed):
            self.omen_counts["CircleEchoed"] += 1
            self._child(omen).record(omen.omen)
            return
        kind = type(omen)
        self.omen_counts[kind.__name__] += 1
        stamp = omen.timestamp
        if self.last_at is None or stamp > self.last_at:
            self.last_at = stamp
        handler = _HANDLERS.get(kind)
        if handler is None:
            for kind, candidate in _HANDLERS.items():
                if isinstance(omen, kind):
                    handler = candidate
                    break
        if handler is None:
            self.others.append(_fields(omen))
        else:
            handler(self, omen)

    def _child(self, echo: CircleEchoed) -> Chronicle:
        place = (echo.circle, echo.sigil, echo.superstep)
        inner_id = getattr(echo.omen, "invocation_id", "")
        latest = self._latest_child.get(place)
        if latest is not None and (not inner_id or isinstance(echo.omen, CircleEchoed)):
            return latest  # no inner invocation to tell runs apart: the current run
        key = (*place, str(inner_id or ""))
        child = self.children.get(key)
        if child is None:
            child = Chronicle(circle=echo.circle, sigil=echo.sigil, superstep=echo.superstep)
            self.children[key] = child
        self._latest_child[place] = child
        return child

    def reset(self) -> None:
        """Forget everything (a new Invocation begins after the last one manifested)."""
        self.__init__(  # type: ignore[misc]
            circle=self.circle, sigil=self.outer_sigil, superstep=self.outer_superstep
        )

    # ------------------------------------------------------------------ handlers
    def _rite_began(self, omen: RiteBegan) -> None:
        if self.manifested and self.circle is None:
            self.reset()
            self.omen_counts["RiteBegan"] += 1
        else:
            self._settle_running("aborted")  # a resumption: the last attempt is over
        self.invocation_id = omen.invocation_id
        self.resumed_from = self.resumed_from or omen.resumed_from
        if self.started_at is None:
            self.started_at = omen.timestamp
        self.last_at = omen.timestamp if self.last_at is None else self.last_at

    def _superstep_began(self, omen: SuperstepBegan) -> None:
        self._note_invocation(omen.invocation_id, omen.timestamp)
        # A Sigil of an earlier superstep still running when a later one begins never
        # completed: its superstep was aborted by an on_error jump after it failed.
        # Only entries created since the last check can still be running: constant work
        # per superstep, however long the run.
        if self._open:
            still: list[tuple[int, Entry]] = []
            for number, entry in self._open:
                if entry["status"] == "running":
                    if number < omen.superstep:
                        entry["status"] = "failed"
                    else:
                        still.append((number, entry))
            self._open = still
        previous = self._steps.get(omen.superstep)
        if previous is not None:  # the same superstep again (a resumption re-runs it)
            for entry in previous["sigils"]:
                self._sigils.pop((omen.superstep, entry["sigil"]), None)
        step: Entry = {
            "superstep": omen.superstep,
            "frontier": list(omen.frontier),
            "started_at": omen.timestamp,
            "ended_at": None,
            "sigils": [],
        }
        self.supersteps.append(step)
        self._steps[omen.superstep] = step

    def _sigil_began(self, omen: SigilBegan) -> None:
        self._note_invocation(omen.invocation_id, omen.timestamp)
        key = (omen.superstep, omen.sigil)
        existing = self._sigils.get(key)
        if existing is not None and existing["status"] == "running":
            return  # a retry may announce the same Sigil again: keep the first start
        self._new_sigil(omen.superstep, omen.sigil, omen.timestamp)

    def _sigil_retried(self, omen: SigilRetried) -> None:
        entry = self._sigil_entry(omen.superstep, omen.sigil, omen.timestamp)
        entry["attempts"] = max(int(entry["attempts"]), omen.attempt + 1)
        self.retries.append(
            {
                "superstep": omen.superstep,
                "sigil": omen.sigil,
                "attempt": omen.attempt,
                "cause": jsonable(omen.cause),
                "delay": jsonable(omen.delay),
                "timestamp": omen.timestamp,
            }
        )

    def _sigil_completed(self, omen: SigilCompleted) -> None:
        self._note_invocation(omen.invocation_id, omen.timestamp)
        duration = float(omen.duration) if omen.duration else 0.0
        entry = self._sigil_entry(omen.superstep, omen.sigil, omen.timestamp - duration)
        delta = _snapshot(omen.delta)
        entry["ended_at"] = omen.timestamp
        entry["duration"] = duration if duration > 0 else omen.timestamp - entry["started_at"]
        entry["status"] = "completed"
        entry["delta_keys"] = sorted(delta) if isinstance(delta, dict) else []
        self.deltas.append(
            {
                "superstep": omen.superstep,
                "sigil": omen.sigil,
                "timestamp": omen.timestamp,
                "delta": delta,
            }
        )

    def _superstep_completed(self, omen: SuperstepCompleted) -> None:
        step = self._steps.get(omen.superstep)
        if step is not None:
            step["ended_at"] = omen.timestamp

    def _seal_written(self, omen: SealWritten) -> None:
        if omen.interrupted:
            self.pause = {
                "sigil": None,
                "reason": None,
                "seal_id": omen.seal_id,
                "superstep": self.supersteps[-1]["superstep"] if self.supersteps else None,
            }
            if self.supersteps:
                for entry in self.supersteps[-1]["sigils"]:
                    if entry["status"] == "running":
                        entry["status"] = "interrupted"
        self.seals.append(
            {
                "superstep": omen.superstep,
                "seal_id": omen.seal_id,
                "interrupted": bool(omen.interrupted),
                "timestamp": omen.timestamp,
            }
        )

    def _token(self, omen: TokenEmitted) -> None:
        self.tokens.append(
            {
                "superstep": omen.superstep,
                "sigil": omen.sigil,
                "payload": jsonable(omen.payload),
                "timestamp": omen.timestamp,
            }
        )

    def _manifested(self, omen: RiteManifested) -> None:
        self._note_invocation(omen.invocation_id, omen.timestamp)
        self.manifested = True
        self.ended_at = omen.timestamp
        self.final_superstep = omen.superstep
        self.final_aether = jsonable(omen.aether)

    def _delta_rejected(self, omen: DeltaRejected) -> None:
        entry = self._sigil_entry(omen.superstep, omen.sigil, omen.timestamp)
        entry["status"] = "rejected"
        entry["ended_at"] = omen.timestamp
        entry["duration"] = omen.timestamp - entry["started_at"]
        self.rejections.append(
            {
                "kind": "delta",
                "superstep": omen.superstep,
                "sigil": omen.sigil,
                "ward": omen.ward,
                "reason": jsonable(omen.reason),
                "timestamp": omen.timestamp,
            }
        )

    def _spell_repaired(self, omen: SpellCallRepaired) -> None:
        self.repairs.append(
            {
                "superstep": omen.superstep,
                "sigil": omen.sigil,
                "spell": jsonable(omen.spell),
                "call_id": jsonable(omen.call_id),
                "detail": jsonable(omen.detail),
                "raw": jsonable(omen.raw),
                "arguments": jsonable(omen.arguments),
                "timestamp": omen.timestamp,
            }
        )

    def _spell_rejected(self, omen: SpellCallRejected) -> None:
        self.rejections.append(
            {
                "kind": "spell",
                "superstep": omen.superstep,
                "sigil": omen.sigil,
                "spell": jsonable(omen.spell),
                "call_id": jsonable(omen.call_id),
                "reason": jsonable(omen.reason),
                "raw": jsonable(omen.raw),
                "timestamp": omen.timestamp,
            }
        )

    # ------------------------------------------------------------------ pauses
    def note_pause(self, sigil: str | None, reason: Any, seal_id: str | None) -> None:
        """Record who paused the Invocation (from the ``Interrupt`` the caller caught).

        Args:
            sigil: The Sigil that called ``interrupt()``, if known.
            reason: The interrupt's reason (any value; stored as JSON data).
            seal_id: The Seal written for the pause, if any.
        """
        pause = self.pause or {
            "sigil": None,
            "reason": None,
            "seal_id": None,
            "superstep": self.supersteps[-1]["superstep"] if self.supersteps else None,
        }
        pause["sigil"] = sigil if sigil is not None else pause["sigil"]
        pause["reason"] = jsonable(reason)
        pause["seal_id"] = seal_id or pause["seal_id"]
        self.pause = pause
        if self.supersteps and sigil is not None:
            for entry in self.supersteps[-1]["sigils"]:
                if entry["status"] in ("running", "interrupted"):
                    entry["status"] = "interrupted" if entry["sigil"] == sigil else "aborted"

    def _settle_running(self, status: str) -> None:
        for step in self.supersteps:
            for entry in step["sigils"]:
                if entry["status"] == "running":
                    entry["status"] = status

    # ------------------------------------------------------------------ helpers
    def _note_invocation(self, invocation_id: str, stamp: float) -> None:
        if invocation_id and self.invocation_id is None:
            self.invocation_id = invocation_id
        if self.started_at is None:
            self.started_at = stamp

    def _new_sigil(self, superstep: int, sigil: str, started_at: float) -> Entry:
        step = self._steps.get(superstep)
        if step is None:
            step = {
                "superstep": superstep,
                "frontier": [],
                "started_at": started_at,
                "ended_at": None,
                "sigils": [],
            }
            self.supersteps.append(step)
            self._steps[superstep] = step
        entry: Entry = {
            "sigil": sigil,
            "started_at": started_at,
            "ended_at": None,
            "duration": None,
            "status": "running",
            "attempts": 1,
            "delta_keys": [],
        }
        step["sigils"].append(entry)
        self._sigils[(superstep, sigil)] = entry
        self._open.append((superstep, entry))
        return entry

    def _sigil_entry(self, superstep: int, sigil: str, started_at: float) -> Entry:
        entry = self._sigils.get((superstep, sigil))
        if entry is None or entry["status"] != "running":
            entry = self._new_sigil(superstep, sigil, started_at)
        return entry


def _snapshot(value: Any) -> Any:
    """``jsonable(value)``, with a quick copy for the usual flat dict of plain scalars.

    The copy is what keeps history intact when user code later mutates the delta.
    """
    if type(value) is dict:
        for key, item in value.items():
            kind = type(item)
            if type(key) is not str or not (
                kind is str
                or kind is bool
                or item is None
                or (kind is int and item.bit_length() <= _PLAIN_INT_BITS)
                or (kind is float and math.isfinite(item))
            ):
                return jsonable(value)
        return value.copy()
    return jsonable(value)


def _fields(omen: Omen) -> Entry:
    entry: Entry = {"type": type(omen).__name__}
    for item in dataclasses.fields(omen):
        entry[item.name] = jsonable(getattr(omen, item.name, None))
    return entry


_HANDLERS: dict[type[Omen], Any] = {
    RiteBegan: Chronicle._rite_began,
    SuperstepBegan: Chronicle._superstep_began,
    SigilBegan: Chronicle._sigil_began,
    SigilRetried: Chronicle._sigil_retried,
    SigilCompleted: Chronicle._sigil_completed,
    SuperstepCompleted: Chronicle._superstep_completed,
    SealWritten: Chronicle._seal_written,
    TokenEmitted: Chronicle._token,
    RiteManifested: Chronicle._manifested,
    DeltaRejected: Chronicle._delta_rejected,
    SpellCallRepaired: Chronicle._spell_repaired,
    SpellCallRejected: Chronicle._spell_rejected,
}
