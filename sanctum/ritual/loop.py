"""The superstep loop: the stateful heart of an Invocation.

One call of :func:`perform_invocation` runs one Invocation (fresh or resumed) to its
end: it restores or builds the starting state, then repeats BSP supersteps — run the
frontier (:mod:`sanctum.ritual.runner`), merge the deltas in bind order and compute the
next frontier (:mod:`sanctum.ritual.algo`), write a Seal — until the frontier empties
or holds only END. It owns everything stateful: the superstep count and the recursion
limit, join bookkeeping carried in Seal metadata, on_error jumps into ``__errors__``,
the Seal written for an interrupt, and the optimistic ``put_next`` chain that keeps
two concurrent resumptions from forking a history silently.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sanctum.aether.reducers import Reducer, overwrite
from sanctum.aether.schema import ERRORS_CONDUIT
from sanctum.codex.base import Codex, Seal, concurrent_write, new_seal_id
from sanctum.codex.claims import (
    FAILURE_KEY,
    describe_holder,
    failure_record,
    hold,
    new_claim,
    release,
)
from sanctum.errors import (
    Interrupt,
    RecursionLimitError,
    SealError,
    SigilExecutionError,
)
from sanctum.omens.events import (
    RiteBegan,
    RiteManifested,
    SealWritten,
)
from sanctum.ritual._omens import new_superstep_began, new_superstep_completed
from sanctum.ritual.algo import (
    Joins,
    entry_frontier,
    error_entry,
    frontier_names,
    join_error,
    merge_deltas,
    next_frontier,
    restore_frontier,
    with_error,
    writers_of,
)
from sanctum.ritual.constants import END
from sanctum.ritual.emitter import Emitter, ImmediateHook, OmenHook, OmenSink
from sanctum.ritual.graph import Graph, SigilPlan
from sanctum.ritual.runner import (
    AfterHook,
    BeforeHook,
    PendingAwait,
    RunContext,
    SigilFailure,
    finish_inline,
    finish_quiet,
    gather_pauses,
    run_frontier,
    run_inline,
    run_observed,
    run_quiet,
)
from sanctum.wards.secrets import Secrets, Veil

__all__ = ["YIELD_INTERVAL", "Setup", "perform_invocation"]

YIELD_INTERVAL = 0.005
"""Seconds of uninterrupted work after which the loop hands control back to the event
loop between supersteps (so timeouts, cancellation and other tasks get a turn even when
every Sigil is synchronous and the Codex never suspends)."""


@dataclass(frozen=True, slots=True)
class Setup:
    """Everything fixed about a Rite that the loop needs (built once per Rite)."""

    graph: Graph
    codex: Codex | None
    recursion_limit: int
    before: tuple[BeforeHook, ...] = ()
    after: tuple[tuple[str, AfterHook], ...] = ()
    omen_hooks: tuple[OmenHook | ImmediateHook, ...] = ()
    reducers: dict[str, Reducer] = field(default_factory=dict)
    secrets: Secrets | None = None


@dataclass(slots=True)
class _State:
    aether: dict[str, Any]
    frontier: tuple[SigilPlan, ...]
    superstep: int
    joins: Joins
    parent: str | None
    expected: str | None
    resumed_from: str | None = None
    updates: dict[str, Any] | None = None
    errors_by: str | None = None


def _joins_metadata(joins: Joins) -> dict[str, list[str]]:
    return {name: sorted(got) for name, got in joins.items()}


async def _fresh(
    setup: Setup, input: Mapping[str, Any], invocation_id: str, updates: Mapping[str, Any] | None
) -> _State:
    if not isinstance(input, Mapping):
        raise TypeError(f"input must be a mapping (the initial Aether), got {type(input).__name__}")
    schema = setup.graph.schema
    if schema is not None:
        schema.validate_input(input)
        aether = schema.initial(input)
    else:
        aether = dict(input)
    if updates:
        aether = _apply_updates(setup, aether, updates)
    frontier, joins = entry_frontier(setup.graph, {})
    expected = None
    if setup.codex is not None:
        expected = await setup.codex.latest_seal_id(invocation_id)
    return _State(aether, frontier, 0, joins, None, expected)


def _apply_updates(
    setup: Setup, aether: dict[str, Any], updates: Mapping[str, Any]
) -> dict[str, Any]:
    if not isinstance(updates, Mapping):
        raise TypeError(f"updates must be a mapping, got {type(updates).__name__}")
    schema = setup.graph.schema
    if schema is None:
        return {**aether, **updates}
    schema.validate_updates(updates)
    return schema.apply_delta(aether, updates, sigil="updates")


async def _resume(
    setup: Setup, invocation_id: str | None, seal_id: str | None, updates: Mapping[str, Any] | None
) -> _State:
    codex = setup.codex
    if codex is None:
        raise SealError(
            "cannot resume: this Rite has no Codex; compile(codex=...) or "
            "rite.with_options(codex=...), or pass input for a fresh run",
            invocation_id=invocation_id,
            seal_id=seal_id,
        )
    if not invocation_id:
        raise SealError(
            "cannot resume without an invocation_id; pass ainvoke(invocation_id=...) "
            "(or input for a fresh run)",
            seal_id=seal_id,
        )
    if seal_id is not None:
        seal = await codex.get_seal(invocation_id, seal_id)
        if seal is None:
            raise SealError(
                f"invocation {invocation_id!r} has no seal {seal_id!r}; list its seals to "
                "pick one to time-travel from",
                invocation_id=invocation_id,
                seal_id=seal_id,
            )
        expected = await codex.latest_seal_id(invocation_id)
    else:
        latest = await codex.get(invocation_id)
        if latest is None:
            raise SealError(
                f"No Seals for invocation {invocation_id!r}: nothing to resume from; start "
                "it with input first (or check the invocation_id and the codex)",
                invocation_id=invocation_id,
            )
        seal = latest
        expected = latest.seal_id
    try:
        frontier = restore_frontier(seal.frontier, setup.graph)
    except KeyError as exc:
        raise SealError(
            f"seal {seal.seal_id!r} of invocation {invocation_id!r} names sigil {exc.args[0]!r}, "
            "which this Rite does not bind; resume with the Rite that wrote it",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        ) from None
    raw_joins = seal.metadata.get("joins") or {}
    joins: Joins = {str(name): frozenset(got) for name, got in dict(raw_joins).items() if got}
    aether = dict(seal.aether)
    if updates:
        aether = _apply_updates(setup, aether, updates)
    if updates and not frontier:
        raise SealError(
            f"seal {seal.seal_id!r} of invocation {invocation_id!r} ends a finished run "
            "(its frontier is END); updates would rewrite a finished history, so nothing "
            "was written. To run part of it again with new values, resume from an "
            "earlier seal with seal_id=... (it branches, and the history is kept)",
            invocation_id=invocation_id,
            seal_id=seal.seal_id,
        )
    return _State(
        aether,
        frontier,
        seal.superstep,
        joins,
        seal.seal_id,
        expected,
        resumed_from=seal.seal_id,
        updates=dict(updates) if updates else None,
    )


class _Sealer:
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

    async def take(self, state: _State, frontier: Sequence[str]) -> None:
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
            raise _held(inv, held)
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
            metadata["joins"] = _joins_metadata(joins)
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
        state: _State,
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
        metadata["joins"] = _joins_metadata(joins)
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


def _held(inv: str, holder: Mapping[str, Any]) -> SealError:
    """The error of a call that finds the Invocation held by another call."""
    return SealError(
        f"invocation {inv!r} is being run by another call: {describe_holder(holder)}; "
        "nothing was run. Wait for it to finish or pause, then resume again",
        invocation_id=inv,
    )


def _run_label(invocation_id: str, circle: str | None) -> str:
    """How messages name a run: the Invocation, or a Circle's inner run."""
    if circle is None:
        return f"invocation {invocation_id!r}"
    return f"the inner run {invocation_id!r} of circle {circle!r}"


def _limit_error(
    inv: str,
    circle: str | None,
    limit: int,
    last: str | None,
    resumed_from: str | None,
    superstep: int,
) -> RecursionLimitError:
    """The error of a call that ran ``limit`` supersteps without reaching END."""
    if resumed_from is None:
        call = "this run"
    else:
        call = (
            f"this resume (from seal {resumed_from!r}, superstep {superstep - limit}, "
            f"to superstep {superstep})"
        )
    return RecursionLimitError(
        f"{_run_label(inv, circle)} reached the recursion limit of {limit} supersteps in "
        f"{call} without reaching END; last sigil executed: {last!r}. Check the cycle's "
        "stop condition, or raise compile(recursion_limit=...)",
        invocation_id=inv,
        sigil=last,
        limit=limit,
    )


def _execution_error(
    failure: SigilFailure,
    aether: Mapping[str, Any],
    invocation_id: str,
    superstep: int,
    circle: str | None,
) -> SigilExecutionError:
    error = failure.error
    name = failure.plan.name
    if isinstance(error, SigilExecutionError) and error.sigil == name:
        # Already names this Sigil (a timeout, or a SpellCallParseError from a summon
        # loop): it reaches the caller as itself, with the run's context filled in.
        error.invocation_id = invocation_id
        if not error.aether:
            error.aether = dict(aether)
        return error
    if isinstance(error, SigilExecutionError):
        # A Circle's inner run failed; its message names the inner run as such.
        cause = f"its inner run failed: {error}"
    elif isinstance(error, SystemExit):
        cause = f"it called sys.exit({error.code!r}); a sigil fails by raising an exception"
    else:
        cause = f"{type(error).__name__}: {error}"
    return SigilExecutionError(
        f"sigil {name!r} failed in superstep {superstep} of "
        f"{_run_label(invocation_id, circle)} after {failure.attempts} attempt(s): {cause}",
        sigil=name,
        aether=aether,
        invocation_id=invocation_id,
    )


async def _route_async(done: Sequence[SigilPlan], aether: Mapping[str, Any]) -> dict[str, Any]:
    routed: dict[str, Any] = {}
    for plan in done:
        if plan.router is not None and plan.router_async:
            routed[plan.name] = await plan.router(aether)
    return routed


def _fold_written(
    written: dict[str, Any],
    deltas: Sequence[tuple[str, Mapping[str, Any]]],
    reducers: Mapping[str, Reducer],
) -> None:
    for _sigil, delta in deltas:
        for key, value in delta.items():
            if key in written:
                reducer = reducers.get(key, overwrite)
                written[key] = value if reducer is overwrite else reducer(written[key], value)
            else:
                written[key] = value


async def perform_invocation(
    setup: Setup,
    input: Mapping[str, Any] | None = None,
    *,
    invocation_id: str | None = None,
    seal_id: str | None = None,
    updates: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    sink: OmenSink | None = None,
    written: dict[str, Any] | None = None,
    circle: str | None = None,
) -> dict[str, Any]:
    """Run one Invocation, fresh or resumed, and return the final Aether.

    Args:
        setup: The Rite's fixed parts.
        input: Initial Aether for a fresh run; None to resume.
        invocation_id: The run's id (generated for a fresh run when omitted).
        seal_id: Historic Seal to time-travel from (implies resumption).
        updates: Delta merged into the restored Aether before continuing.
        metadata: Extra JSON-serialisable keys stored in every Seal written.
        sink: Non-blocking consumer of every Omen (the stream); None builds none.
        written: When given, filled with the folded value of every key the run wrote
            (a Circle's delta).
        circle: The Circle's name when this run is a Circle's inner run (error
            messages then say so instead of naming it as the Invocation).

    Returns:
        The final Aether.

    Raises:
        AetherValidationError | Interrupt | RecursionLimitError | SealError |
        SigilExecutionError | SigilJoinError | DeltaTypeError | RouteError: See
            ``Rite.ainvoke``.
    """
    graph = setup.graph
    schema = graph.schema
    codex = setup.codex
    resume = input is None
    if seal_id is not None and input is not None:
        raise SealError(
            "seal_id time-travels from a historic seal and cannot be combined with input; "
            "omit input (use updates= to change the restored Aether)",
            invocation_id=invocation_id,
            seal_id=seal_id,
        )
    if updates is not None and input is not None:
        raise SealError(
            "updates are merged into a restored Seal and cannot be combined with input; "
            "put those values in input for a fresh run, or omit input to resume",
            invocation_id=invocation_id,
        )
    if resume:
        state = await _resume(setup, invocation_id, seal_id, updates)
        assert invocation_id is not None
        inv = invocation_id
    else:
        inv = invocation_id or uuid.uuid4().hex
        assert input is not None
        state = await _fresh(setup, input, inv, updates)

    veil = Veil(setup.secrets) if setup.secrets else None
    emitter = (
        Emitter(setup.omen_hooks, sink, veil.omen if veil is not None else None)
        if (setup.omen_hooks or sink is not None)
        else None
    )
    ctx = RunContext(inv, emitter, setup.before, setup.after)
    hookless = not setup.before and not setup.after
    plain = emitter is None and hookless
    immediate = emitter is not None and emitter.immediate
    taps = emitter.taps if emitter is not None and hookless else None
    only_tap = taps[0] if taps is not None and len(taps) == 1 else None
    clock_ns = time.perf_counter_ns
    sealer = None
    if codex is not None:
        sealer = _Sealer(codex, inv, metadata, emitter, veil, "resume" if resume else "run")
        if state.frontier or state.updates is not None:
            await sealer.take(state, frontier_names(state.frontier))
    limit = setup.recursion_limit
    reducers = setup.reducers
    aether = state.aether
    frontier = state.frontier
    superstep = state.superstep
    joins = state.joins
    last: str | None = None
    stop_at = superstep + limit  # the limit bounds the supersteps of this call
    clock = time.perf_counter
    yielded = clock()
    try:
        if emitter is not None:
            await emitter.emit(
                RiteBegan(invocation_id=inv, superstep=superstep, resumed_from=state.resumed_from)
            )
        if not frontier and sealer is not None and state.updates is not None:
            await sealer.write(
                state, aether=aether, frontier=(), superstep=superstep, joins=joins, writers={}
            )
        while frontier:
            if superstep >= stop_at:
                raise _limit_error(inv, circle, limit, last, state.resumed_from, superstep)
            superstep += 1
            ctx.superstep = superstep
            tapped = False
            try:
                if plain:
                    for plan in frontier:
                        if not plan.fast:
                            deltas = await run_frontier(ctx, frontier, aether)
                            break
                    else:
                        try:
                            deltas = run_inline(frontier, aether)
                        except PendingAwait as pending:
                            deltas = await finish_inline(ctx, frontier, aether, pending)
                else:
                    # A superstep tap stands in for the four Omens of a superstep of
                    # one quiet Sigil (sync, no retry, no writer): nothing can happen
                    # between its start and its end that an observer would see.
                    if taps is not None and len(frontier) == 1 and frontier[0].quiet:
                        tapped = True
                        quiet = frontier[0]
                        started_ns = clock_ns()
                        try:
                            try:
                                delta = run_quiet(quiet, aether)
                            except PendingAwait as pending:
                                delta = await finish_quiet(quiet, aether, pending)
                        except BaseException:
                            for tap in taps:
                                tap(inv, superstep, quiet.name, started_ns, None, None, False)
                            raise
                        ended_ns = clock_ns()
                        deltas = [(quiet.name, delta)]
                    else:
                        if emitter is not None:
                            began = new_superstep_began(inv, superstep, frontier_names(frontier))
                            if immediate:
                                emitter.deliver(began)
                            else:
                                await emitter.emit(began)
                        if hookless and (immediate or len(frontier) == 1):
                            for plan in frontier:
                                if not plan.fast:
                                    deltas = await run_frontier(ctx, frontier, aether)
                                    break
                            else:
                                deltas = await run_observed(ctx, frontier, aether)
                        else:
                            deltas = await run_frontier(ctx, frontier, aether)
            except SigilFailure as failure:
                fallback = failure.plan.on_error
                last = failure.plan.name
                if fallback is None:
                    error = _execution_error(failure, aether, inv, superstep, circle)
                    if error is failure.error:  # a policy timeout, already chained
                        raise error from error.__cause__
                    raise error from failure.error
                entry = error_entry(failure.plan.name, failure.error, superstep, failure.attempts)
                aether = with_error(aether, entry)
                if written is not None:
                    _fold_written(written, [(last, {ERRORS_CONDUIT: [entry]})], reducers)
                state.errors_by = last
                frontier = (fallback,)
                now = clock()
                if sink is not None or now - yielded > YIELD_INTERVAL:
                    yielded = now
                    await asyncio.sleep(0)
                continue
            except Interrupt as pause:
                if len(frontier) > 1:
                    await gather_pauses(ctx, frontier, aether, pause)
                if not pause.reasons and pause.sigil is not None:
                    pause.reasons = {pause.sigil: pause.reason}
                pause.invocation_id = inv
                pause.seal_id = None
                if sealer is not None:
                    seal = await sealer.write(
                        state,
                        aether=aether,
                        frontier=frontier_names(frontier),
                        superstep=superstep - 1,
                        joins=joins,
                        writers={},
                        interrupt={
                            "reason": pause.reason,
                            "sigil": pause.sigil,
                            "reasons": dict(pause.reasons),
                        },
                    )
                    pause.seal_id = seal.seal_id
                raise
            if tapped:
                # told after the merge, as SuperstepCompleted would be: a delta the
                # schema refuses leaves the superstep unfinished
                try:
                    aether = merge_deltas(aether, deltas, schema)
                except BaseException:
                    for tap in taps:  # type: ignore[union-attr]
                        tap(inv, superstep, quiet.name, started_ns, ended_ns, delta, False)
                    raise
                if only_tap is not None:
                    only_tap(inv, superstep, quiet.name, started_ns, ended_ns, delta, True)
                else:
                    for tap in taps:  # type: ignore[union-attr]
                        tap(inv, superstep, quiet.name, started_ns, ended_ns, delta, True)
            else:
                aether = merge_deltas(aether, deltas, schema)
            if written is not None:
                _fold_written(written, deltas, reducers)
            last = frontier[-1].name
            if emitter is not None and not tapped:
                completed = new_superstep_completed(inv, superstep, aether)
                if immediate:
                    emitter.deliver(completed)
                else:
                    await emitter.emit(completed)
            done = frontier
            routed = await _route_async(done, aether) if graph.async_routers else None
            frontier, joins = next_frontier(done, aether, joins, graph, routed)
            if sealer is not None:
                writers = writers_of(deltas)
                if state.errors_by is not None:
                    writers.setdefault(ERRORS_CONDUIT, []).insert(0, state.errors_by)
                    state.errors_by = None
                await sealer.write(
                    state,
                    aether=aether,
                    frontier=frontier_names(frontier),
                    superstep=superstep,
                    joins=joins,
                    writers=writers,
                )
            # Hand control back between supersteps — always when a stream consumer
            # waits, else once YIELD_INTERVAL passed — so wait_for, aclose() and Ctrl-C
            # can cancel the run here, right after its latest Seal.
            # (a tapped superstep already read the clock when its last Sigil ended)
            now = ended_ns * 1e-9 if tapped and sealer is None else clock()
            if sink is not None or now - yielded > YIELD_INTERVAL:
                yielded = now
                await asyncio.sleep(0)
        stuck = join_error(joins, graph, inv) if joins else None
        if stuck is not None:
            raise stuck
        if emitter is not None:
            await emitter.emit(
                RiteManifested(invocation_id=inv, superstep=superstep, aether=aether)
            )
            await emitter.drain()
    except asyncio.CancelledError:
        if emitter is not None:
            await emitter.aclose()
        raise
    except BaseException as error:
        if sealer is not None and isinstance(error, Exception) and not isinstance(error, Interrupt):
            await sealer.fail(error, getattr(error, "sigil", None), superstep)
        if emitter is not None:
            try:
                await emitter.drain()
            except Exception:  # the run's own failure wins
                pass
            await emitter.aclose()
        raise
    finally:
        if sealer is not None:
            await sealer.drop()
    return dict(aether) if codex is not None else aether
