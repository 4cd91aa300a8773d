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
from sanctum.codex.base import Codex
from sanctum.errors import Interrupt, RecursionLimitError, SealError, SigilExecutionError
from sanctum.omens.events import RiteBegan, RiteManifested
from sanctum.ritual._sealer import Sealer
from sanctum.ritual._state import State, fresh_state, resumed_state
from sanctum.ritual.algo import (
    Joins,
    error_entry,
    frontier_names,
    join_error,
    merge_deltas,
    next_frontier,
    with_error,
    writers_of,
)
from sanctum.ritual.emitter import Emitter, ImmediateHook, OmenHook, OmenSink
from sanctum.ritual.graph import Graph, SigilPlan
from sanctum.ritual.runner import (
    AfterHook,
    BeforeHook,
    RunContext,
    RunnerChoice,
    SigilFailure,
    choose_runner,
    gather_pauses,
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
    runner: RunnerChoice = field(init=False)
    """Which runner the Rite's Invocations get (decided here, once per Rite)."""

    def __post_init__(self) -> None:
        choice = choose_runner(self.before, self.after, self.omen_hooks, masked=bool(self.secrets))
        object.__setattr__(self, "runner", choice)


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
    """The error of a call that ran ``limit`` supersteps without reaching END.

    The error words itself from its fields (:meth:`RecursionLimitError.worded`), so
    another layer can re-word the advice without parsing the message.
    """
    return RecursionLimitError(
        invocation_id=inv,
        sigil=last,
        limit=limit,
        circle=circle,
        resumed_from=resumed_from,
        superstep=superstep,
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


def _check_call(
    input: Mapping[str, Any] | None,
    invocation_id: str | None,
    seal_id: str | None,
    updates: Mapping[str, Any] | None,
) -> None:
    """Refuse arguments that cannot go together (input with seal_id or updates)."""
    if input is None:
        return
    if seal_id is not None:
        raise SealError(
            "seal_id time-travels from a historic seal and cannot be combined with input; "
            "omit input (use updates= to change the restored Aether)",
            invocation_id=invocation_id,
            seal_id=seal_id,
        )
    if updates is not None:
        raise SealError(
            "updates are merged into a restored Seal and cannot be combined with input; "
            "put those values in input for a fresh run, or omit input to resume",
            invocation_id=invocation_id,
        )


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
    _check_call(input, invocation_id, seal_id, updates)
    if input is None:
        state = await resumed_state(setup.graph, setup.codex, invocation_id, seal_id, updates)
        inv = str(invocation_id)  # _resume refused a missing one
    else:
        inv = invocation_id or uuid.uuid4().hex
        state = await fresh_state(setup.graph, setup.codex, input, inv, updates)
    run = _Invocation(setup, inv, state, sink, written, circle)
    if setup.codex is not None:
        call = "run" if input is not None else "resume"
        run.sealer = Sealer(setup.codex, inv, metadata, run.emitter, run.veil, call)
        if state.frontier or state.updates is not None:
            await run.sealer.take(state, frontier_names(state.frontier))
    return await run.perform()


class _Invocation:
    """One Invocation in progress: ticks supersteps until the frontier empties.

    The loop proper is :meth:`_tick`; the rare events (a Sigil failing into its
    on_error, a pause, the recursion limit, the end) are methods of their own.
    """

    __slots__ = (
        "circle",
        "ctx",
        "emitter",
        "inv",
        "runner",
        "sealer",
        "setup",
        "sink",
        "state",
        "veil",
        "written",
    )

    def __init__(
        self,
        setup: Setup,
        inv: str,
        state: State,
        sink: OmenSink | None,
        written: dict[str, Any] | None,
        circle: str | None,
    ) -> None:
        self.setup = setup
        self.inv = inv
        self.state = state
        self.sink = sink
        self.written = written
        self.circle = circle
        self.veil = Veil(setup.secrets) if setup.secrets else None
        self.emitter = (
            Emitter(setup.omen_hooks, sink, self.veil.omen if self.veil is not None else None)
            if (setup.omen_hooks or sink is not None)
            else None
        )
        self.ctx = RunContext(inv, self.emitter, setup.before, setup.after)
        self.runner = setup.runner.runner(self.ctx, streamed=sink is not None)
        self.sealer: Sealer | None = None

    async def perform(self) -> dict[str, Any]:
        """Run to the end; on failure record it, close the stream, release the claim."""
        emitter, sealer, state = self.emitter, self.sealer, self.state
        try:
            if emitter is not None:
                began = RiteBegan(
                    invocation_id=self.inv,
                    superstep=state.superstep,
                    resumed_from=state.resumed_from,
                )
                await emitter.emit(began)
            if not state.frontier and sealer is not None and state.updates is not None:
                await sealer.write(
                    state,
                    aether=state.aether,
                    frontier=(),
                    superstep=state.superstep,
                    joins=state.joins,
                    writers={},
                )
            aether = await self._tick()
            await self._manifest(aether)
            return dict(aether) if sealer is not None else aether
        except asyncio.CancelledError:
            if emitter is not None:
                await emitter.aclose()
            raise
        except BaseException as error:
            await self._abort(error)
            raise
        finally:
            if sealer is not None:
                await sealer.drop()

    async def _tick(self) -> dict[str, Any]:
        """The superstep loop: run the frontier, merge, pick the next one, seal.

        Returns:
            The final Aether (the frontier emptied).
        """
        setup, state, runner, ctx = self.setup, self.state, self.runner, self.ctx
        graph = setup.graph
        schema = graph.schema
        sealer, written, sink = self.sealer, self.written, self.sink
        aether, frontier, superstep, joins = (
            state.aether,
            state.frontier,
            state.superstep,
            state.joins,
        )
        stop_at = superstep + setup.recursion_limit  # the limit bounds this call's supersteps
        start, refused, finished = runner.start, runner.refused, runner.announcer()
        async_routers, reducers = graph.async_routers, setup.reducers
        last: str | None = None  # the latest Sigil executed
        clock = time.perf_counter
        yielded = clock()
        try:
            while frontier:
                if superstep >= stop_at:
                    raise self._limit_error(superstep, last)
                superstep += 1
                ctx.superstep = superstep
                try:
                    deltas = start(frontier, aether)
                    if type(deltas) is not list:
                        deltas = await deltas  # type: ignore[misc]
                except SigilFailure as failure:
                    last = failure.plan.name
                    aether, frontier = self._fall_back(failure, aether, superstep)
                except Interrupt as pause:
                    await self._pause(pause, frontier, aether, superstep, joins)
                    raise
                else:
                    try:
                        aether = merge_deltas(aether, deltas, schema)
                    except BaseException:
                        refused()
                        raise
                    if finished is not None:
                        announced = finished(aether)
                        if announced is not None:
                            await announced
                    if written is not None:
                        _fold_written(written, deltas, reducers)
                    last = frontier[-1].name
                    routed = await _route_async(frontier, aether) if async_routers else None
                    done = frontier
                    frontier, joins = next_frontier(done, aether, joins, graph, routed)
                    if sealer is not None:
                        await self._seal(sealer, aether, frontier, superstep, joins, deltas)
                # Hand control back between supersteps — always when a stream consumer
                # waits, else once YIELD_INTERVAL passed — so wait_for, aclose() and
                # Ctrl-C can cancel the run here, right after its latest Seal.
                now = clock()
                if sink is not None or now - yielded > YIELD_INTERVAL:
                    yielded = now
                    await asyncio.sleep(0)
        finally:
            state.superstep = superstep  # what a failure record and RiteManifested name
        if joins:
            stuck = join_error(joins, graph, self.inv)
            if stuck is not None:
                raise stuck
        return aether

    def _fall_back(
        self, failure: SigilFailure, aether: dict[str, Any], superstep: int
    ) -> tuple[dict[str, Any], tuple[SigilPlan, ...]]:
        """A Sigil failed for good: jump to its on_error Sigil, or fail the Invocation.

        Returns:
            The Aether with the ``__errors__`` entry, and the frontier of the fallback.

        Raises:
            SigilExecutionError: When the Sigil has no on_error.
        """
        fallback = failure.plan.on_error
        name = failure.plan.name
        if fallback is None:
            error = _execution_error(failure, aether, self.inv, superstep, self.circle)
            if error is failure.error:  # a policy timeout, already chained
                raise error from error.__cause__
            raise error from failure.error
        entry = error_entry(name, failure.error, superstep, failure.attempts)
        if self.written is not None:
            _fold_written(self.written, [(name, {ERRORS_CONDUIT: [entry]})], self.setup.reducers)
        self.state.errors_by = name
        return with_error(aether, entry), (fallback,)

    async def _pause(
        self,
        pause: Interrupt,
        frontier: tuple[SigilPlan, ...],
        aether: dict[str, Any],
        superstep: int,
        joins: Joins,
    ) -> None:
        """Complete an interrupt: every question of the superstep, and its Seal."""
        if len(frontier) > 1:
            await gather_pauses(self.ctx, frontier, aether, pause)
        if not pause.reasons and pause.sigil is not None:
            pause.reasons = {pause.sigil: pause.reason}
        pause.invocation_id = self.inv
        pause.seal_id = None
        keep = getattr(pause, "keep", None)  # a KeepingInterrupt's work to keep
        if keep:
            aether = merge_deltas(aether, [(pause.sigil or "", keep)], self.setup.graph.schema)
        if self.sealer is not None:
            seal = await self.sealer.write(
                self.state,
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

    async def _seal(
        self,
        sealer: Sealer,
        aether: dict[str, Any],
        frontier: tuple[SigilPlan, ...],
        superstep: int,
        joins: Joins,
        deltas: Sequence[tuple[str, Mapping[str, Any]]],
    ) -> None:
        """Write the Seal of a completed superstep (who wrote what, in its metadata)."""
        state = self.state
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

    def _limit_error(self, superstep: int, last: str | None) -> RecursionLimitError:
        return _limit_error(
            self.inv,
            self.circle,
            self.setup.recursion_limit,
            last,
            self.state.resumed_from,
            superstep,
        )

    async def _manifest(self, aether: dict[str, Any]) -> None:
        """Announce the end (RiteManifested) and deliver every Omen still queued."""
        emitter = self.emitter
        if emitter is not None:
            manifested = RiteManifested(
                invocation_id=self.inv, superstep=self.state.superstep, aether=aether
            )
            await emitter.emit(manifested)
            await emitter.drain()

    async def _abort(self, error: BaseException) -> None:
        """Record a failure in a Seal (not a pause) and close the Omen stream."""
        sealer, emitter = self.sealer, self.emitter
        if sealer is not None and isinstance(error, Exception) and not isinstance(error, Interrupt):
            await sealer.fail(error, getattr(error, "sigil", None), self.state.superstep)
        if emitter is not None:
            try:
                await emitter.drain()
            except Exception:  # the run's own failure wins
                pass
            await emitter.aclose()
