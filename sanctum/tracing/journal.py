"""The chronicler's notebook: Omens turned into trace entries as they arrive.

A :class:`Chronicle` holds what one Invocation (or one run of a Circle inside it) gave
off, already converted to JSON data so that later mutations of a delta cannot rewrite
history. The superstep timeline is kept in the form it is written in
(:class:`~sanctum.tracing.timeline.Timeline`: one row per Sigil execution, times in
integer epoch nanoseconds). Rows come from the four
per-superstep Omens or, on the engine's tapped path, straight from
:meth:`Chronicle.tap` — a whole superstep of one synchronous Sigil per call, no Omen
built. Work per Omen is small and constant apart from copying the Omen's payload;
everything derived (supersteps, spell calls, status) is computed once, when the trace
is built or read.

``CircleEchoed`` Omens are unwrapped into child Chronicles — one per Circle run, keyed
by the Circle's name, the outer Sigil and superstep, and the inner invocation — so a
nested execution is traced in full.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Mapping
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
from sanctum.tracing.timeline import Timeline
from sanctum.wards._jsonable import jsonable

__all__ = ["Chronicle"]

Entry = dict[str, Any]

_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Value types a delta may hold to be copied as it is (see ``_snapshot``)."""

_EMPTY: dict[str, Any] = {}
"""The one recorded empty delta (readers get copies: see ``document.expand``)."""


class Chronicle:
    """Trace entries of one run, filled Omen by Omen (or superstep by superstep).

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
        self.timeline = Timeline()
        self.retries: list[Entry] = []
        self.repairs: list[Entry] = []
        self.rejections: list[Entry] = []
        self.seals: list[Entry] = []
        self.tokens: list[Entry] = []
        self.others: list[Entry] = []
        self.omen_counts: Counter[str] = Counter()
        self.children: dict[tuple[str, str, int, str], Chronicle] = {}
        self._latest_child: dict[tuple[str, str, int], Chronicle] = {}
        self._sigils: dict[tuple[int, str], int] = {}  # -> row number
        self._open: list[int] = []  # rows created running (they may still be)
        self._columns = self.timeline.appenders()
        self._frontier: tuple[int, list[str]] | None = None  # announced, no row yet
        self._epoch = time.time_ns() - time.perf_counter_ns()
        """Add to a ``perf_counter_ns()`` reading for epoch nanoseconds (taken once: a
        run's rows share one clock, so wall-clock adjustments cannot reorder them)."""
        self._opened = 0  # rows added by Omens (SigilBegan or a stray completion)
        self.on_foreign: Callable[[str], None] | None = None
        """Told the id of another Invocation whose Omens arrive mid-run (a recorder
        shared by concurrent Invocations); they are recorded all the same."""

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

    def tap(
        self,
        invocation_id: str,
        superstep: int,
        sigil: str,
        began: int,
        ended: int | None,
        delta: Mapping[str, Any] | None,
        finished: bool,
    ) -> None:
        """Record one superstep of a synchronous Sigil (the engine's superstep tap).

        Equivalent to folding in its SuperstepBegan, SigilBegan, SigilCompleted and
        SuperstepCompleted Omens; the arguments are described by
        :data:`sanctum.wards.base.SuperstepHook`. The row it adds for a completed
        Sigil is complete: nothing changes it later.
        """
        if self._open or self.invocation_id != invocation_id:
            self._before_tap(invocation_id, superstep, began)
        if ended is None:  # it began and never completed: a running row, settled later
            self.omen_counts["SuperstepBegan"] += 1
            self.omen_counts["SigilBegan"] += 1
            self._new_row(superstep, sigil, began + self._epoch)
            return
        # Timeline.add and _snapshot, inlined: this runs every superstep
        if type(delta) is dict:
            if delta:
                for key, item in delta.items():
                    if type(item) not in _SCALARS or type(key) is not str:
                        delta = jsonable(delta)
                        break
                else:
                    delta = delta.copy()
            else:
                delta = _EMPTY  # shared: nothing ever changes a recorded delta
        else:
            delta = jsonable(delta)
        add_superstep, add_sigil, add_began, add_ended, add_delta, codes = self._columns
        try:
            code = codes[sigil]
        except KeyError:
            code = self.timeline.code(sigil)
        epoch = self._epoch  # marks are perf_counter_ns(): this makes them epoch ns
        add_superstep(superstep)
        add_sigil(code)
        add_began(began + epoch)
        add_ended(ended + epoch)
        add_delta(delta)
        if not finished:
            self.omen_counts["SuperstepCompleted"] -= 1  # the merge refused the delta

    def _before_tap(self, invocation_id: str, superstep: int, began: int) -> None:
        """The rare work before a tapped superstep."""
        if self.invocation_id is None:
            self._note_invocation(invocation_id, (began + self._epoch) / 1e9)
        elif invocation_id != self.invocation_id and self.on_foreign is not None:
            self.on_foreign(invocation_id)
        if self._open:
            self._settle_earlier(superstep)

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
        """Forget everything (a new Invocation begins after the last one)."""
        hook = self.on_foreign
        self.__init__(  # type: ignore[misc]
            circle=self.circle, sigil=self.outer_sigil, superstep=self.outer_superstep
        )
        self.on_foreign = hook

    def counts(self) -> dict[str, int]:
        """How many Omens of each class the run gave off (tapped supersteps included)."""
        counts = Counter(self.omen_counts)
        tapped = len(self.timeline) - self._opened  # a completed row per tapped superstep
        if tapped:
            for kind in ("SuperstepBegan", "SigilBegan", "SigilCompleted", "SuperstepCompleted"):
                counts[kind] += tapped
        return {name: n for name, n in sorted(counts.items()) if n > 0}

    def latest_at(self) -> float | None:
        """Epoch seconds of the latest thing recorded, or None."""
        last = self.last_at
        if len(self.timeline):
            ended = self.timeline.ended(len(self.timeline) - 1)
            if ended is not None:
                tapped = ended / 1e9
                last = tapped if last is None or tapped > last else last
        return last

    # ------------------------------------------------------------------ handlers
    def _rite_began(self, omen: RiteBegan) -> None:
        # a resumption may come after a suspend, which the monotonic clock skips
        self._epoch = time.time_ns() - time.perf_counter_ns()
        another = self.invocation_id is not None and omen.invocation_id != self.invocation_id
        if (self.manifested or another) and self.circle is None:
            self.reset()  # a new Invocation: what the last one left is not part of it
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
        # Only rows created since the last check can still be running: constant work
        # per superstep, however long the run.
        if self._open:
            self._settle_earlier(omen.superstep)
        for name in omen.frontier:  # the same superstep again (a resumption re-runs it)
            self._sigils.pop((omen.superstep, name), None)
        # Rows only tell which Sigils began; a wider frontier is kept with its first row
        # (an inline frontier stops at a failure: the later Sigils never begin).
        names = [str(name) for name in omen.frontier]
        self._frontier = (omen.superstep, names) if len(names) > 1 else None

    def _sigil_began(self, omen: SigilBegan) -> None:
        self._note_invocation(omen.invocation_id, omen.timestamp)
        existing = self._sigils.get((omen.superstep, omen.sigil))
        if existing is not None and self.timeline.state(existing) == "running":
            return  # a retry may announce the same Sigil again: keep the first start
        self._new_row(omen.superstep, omen.sigil, self._at(omen.timestamp))

    def _sigil_retried(self, omen: SigilRetried) -> None:
        row = self._sigil_row(omen.superstep, omen.sigil, omen.timestamp)
        attempts = self.timeline.attempts
        attempts[row] = max(attempts.get(row, 1), omen.attempt + 1)
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
        row = self._sigil_row(omen.superstep, omen.sigil, omen.timestamp - duration)
        self.timeline.end(row, self._at(omen.timestamp), _snapshot(omen.delta))
        self.timeline.status.pop(row, None)

    def _superstep_completed(self, omen: SuperstepCompleted) -> None:
        """Nothing to keep: a superstep ends when its last Sigil does."""

    def _seal_written(self, omen: SealWritten) -> None:
        if omen.interrupted:
            timeline = self.timeline
            last = timeline.last_step()
            self.pause = {
                "sigil": None,
                "reason": None,
                "seal_id": omen.seal_id,
                "superstep": timeline.superstep(last[0]) if last else None,
            }
            for row in last:
                if timeline.state(row) == "running":
                    timeline.status[row] = "interrupted"
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
        row = self._sigil_row(omen.superstep, omen.sigil, omen.timestamp)
        self.timeline.status[row] = "rejected"
        self.timeline.end(row, self._at(omen.timestamp))
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
        timeline = self.timeline
        last = timeline.last_step()
        pause = self.pause or {
            "sigil": None,
            "reason": None,
            "seal_id": None,
            "superstep": timeline.superstep(last[0]) if last else None,
        }
        pause["sigil"] = sigil if sigil is not None else pause["sigil"]
        pause["reason"] = jsonable(reason)
        pause["seal_id"] = seal_id or pause["seal_id"]
        self.pause = pause
        if sigil is not None:
            for row in last:
                if timeline.state(row) in ("running", "interrupted"):
                    culprit = timeline.sigil(row) == sigil
                    timeline.status[row] = "interrupted" if culprit else "aborted"

    def settle_failure(self, culprit: str | None) -> None:
        """Mark what was still running when the Invocation failed.

        Args:
            culprit: The Sigil the failure names; its running row in the last
                superstep becomes ``failed``, every other running row ``aborted``;
                each ends now (so its duration is how long it ran before the failure).
        """
        timeline = self.timeline
        last = timeline.last_step()
        now = time.time_ns()  # the failure reached the trace now: the rows ran until then
        for row in self._open:
            if timeline.state(row) == "running":
                failed = culprit is not None and timeline.sigil(row) == culprit and row in last
                timeline.status[row] = "failed" if failed else "aborted"
                if timeline.ended(row) is None:
                    timeline.end(row, now)

    def _settle_earlier(self, superstep: int) -> None:
        timeline = self.timeline
        still: list[int] = []
        for row in self._open:
            if timeline.state(row) == "running":
                if timeline.superstep(row) < superstep:
                    timeline.status[row] = "failed"
                else:
                    still.append(row)
        self._open = still

    def _settle_running(self, status: str) -> None:
        for row in self._open:
            if self.timeline.state(row) == "running":
                self.timeline.status[row] = status
        self._open = []

    # ------------------------------------------------------------------ helpers
    def _at(self, timestamp: float) -> int:
        """An Omen's epoch-seconds timestamp as epoch nanoseconds."""
        return int(timestamp * 1e9)

    def _note_invocation(self, invocation_id: str, stamp: float) -> None:
        if invocation_id and self.invocation_id is None:
            self.invocation_id = invocation_id
        if self.started_at is None:
            self.started_at = stamp

    def _new_row(self, superstep: int, sigil: str, began: int) -> int:
        row = self.timeline.open(superstep, sigil, began)
        if self._frontier is not None:
            if self._frontier[0] == superstep:
                self.timeline.frontiers[row] = self._frontier[1]
            self._frontier = None
        self._opened += 1
        self._sigils[(superstep, sigil)] = row
        self._open.append(row)
        return row

    def _sigil_row(self, superstep: int, sigil: str, started_at: float) -> int:
        row = self._sigils.get((superstep, sigil))
        if row is None or self.timeline.state(row) != "running":
            row = self._new_row(superstep, sigil, self._at(started_at))
        return row


def _snapshot(value: Any) -> Any:
    """``jsonable(value)``, with a quick copy for the usual flat dict of plain scalars.

    The copy is what keeps history intact when user code later mutates the delta. A
    scalar JSON cannot hold as it is (NaN, an integer too long to print) is left to
    the writer, which then converts the whole document with ``jsonable``; a key that
    is not a string sends the delta through ``jsonable`` at once (``{1: .., "1": ..}``
    must not become two equal JSON keys).
    """
    if type(value) is dict:
        for key, item in value.items():
            if type(item) not in _SCALARS or type(key) is not str:
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
