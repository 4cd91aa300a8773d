"""The runner: how one superstep's frontier runs, and who is told.

The loop (:mod:`sanctum.ritual.loop`) ticks — it decides who runs next, merges the
deltas, writes Seals — and asks one :class:`Runner` per Invocation to run each
superstep. Which runner serves an Invocation is decided once: :class:`RunnerChoice`
is computed when the Rite is compiled (from its Wards and Secrets), and
:meth:`RunnerChoice.runner` picks the concrete runner when the Invocation starts
(a stream consumer is the one fact known only then). Each runner owns its fast paths;
the loop never branches on them.

=================  ====================================================================
runner             when, and what it does
=================  ====================================================================
bare               nobody observes (no Ward hook, no stream): synchronous Sigils
                   without retries are called inline, no task, no Omen, no clock read
observed           Omens are observed, no ``before_sigil``/``after_sigil``: inline calls
                   with SigilBegan/SigilCompleted around each, where that keeps the
                   order observers see (a single Sigil, or only synchronous observers)
superstep hooks    every Omen observer gives a Ward superstep hook
                   (:data:`~sanctum.wards.base.SuperstepHook`), no stream, no Secrets:
                   a superstep of one quiet Sigil runs inline between two clock reads
                   and the hooks take it whole, instead of its four Omens; any other
                   superstep runs as *observed*
hooked             a Ward hooks ``before_sigil``/``after_sigil``: every Sigil goes
                   through :func:`~sanctum.ritual._sigils.run_frontier`
=================  ====================================================================

The protocol, per superstep (``ctx.superstep`` already set by the loop):

1. :meth:`Runner.start` runs the frontier. It returns the deltas when it finished
   synchronously, or an awaitable of them (the loop tells them apart with
   ``type(result) is list``): the fast paths never create a coroutine.
2. The loop merges the deltas. If the merge raises, it calls :meth:`Runner.refused`.
3. :meth:`Runner.finished` announces the completed superstep; it returns None or an
   awaitable the loop awaits. The loop asks :meth:`Runner.announcer` for it once per
   Invocation: a runner that never announces (the bare one) gives None, and the loop
   makes no call at all.

Failures that exhausted their policy surface as :class:`SigilFailure`; Interrupt,
DeltaTypeError and cancellation pass through untouched.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanctum.ritual._omens import new_superstep_began, new_superstep_completed
from sanctum.ritual._sigils import (
    AfterHook,
    BeforeHook,
    Deltas,
    PendingAwait,
    RunContext,
    SigilFailure,
    cancel_all,
    finish_inline,
    finish_quiet,
    gather_pauses,
    perform,
    run_frontier,
    run_inline,
    run_observed,
    run_quiet,
)
from sanctum.ritual.algo import frontier_names
from sanctum.ritual.emitter import ImmediateHook, OmenHook
from sanctum.ritual.graph import SigilPlan
from sanctum.wards.base import SuperstepHook

__all__ = [
    "AfterHook",
    "BeforeHook",
    "Deltas",
    "RunContext",
    "Runner",
    "RunnerChoice",
    "SigilFailure",
    "cancel_all",
    "choose_runner",
    "gather_pauses",
    "perform",
    "run_frontier",
]

_clock_ns = time.perf_counter_ns


class Runner:
    """The hooked runner, and the protocol every runner follows.

    Every Sigil goes through :func:`~sanctum.ritual._sigils.run_frontier` (Ward hooks,
    policies, tasks for a wider frontier), with SuperstepBegan before it and
    SuperstepCompleted after the merge when an emitter listens.

    Args:
        ctx: The Invocation the runner serves (its emitter, Ward hooks, superstep).
    """

    __slots__ = ("ctx", "emitter")

    name = "hooked"
    """Which runner this is (shown by ``repr`` and asserted by tests)."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.emitter = ctx.emitter

    def __repr__(self) -> str:
        return f"<{self.name} runner>"

    def start(
        self, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]
    ) -> Deltas | Awaitable[Deltas]:
        """Run the frontier of superstep ``ctx.superstep``.

        Args:
            frontier: The Sigils to run, in bind order.
            aether: The Aether at the start of the superstep (each Sigil gets a copy).

        Returns:
            ``[(sigil, delta), ...]`` in bind order, or an awaitable of it.

        Raises:
            SigilFailure | Interrupt | DeltaTypeError: Now or from the awaitable.
        """
        return self._announced(frontier, aether)

    async def _announced(self, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]) -> Deltas:
        emitter = self.emitter
        if emitter is not None:
            ctx = self.ctx
            names = frontier_names(frontier)
            await emitter.emit(new_superstep_began(ctx.invocation_id, ctx.superstep, names))
        return await run_frontier(self.ctx, frontier, aether)

    def refused(self) -> None:
        """The merge refused this superstep's deltas: it did not complete."""

    def announcer(self) -> Callable[[Mapping[str, Any]], Awaitable[None] | None] | None:
        """:meth:`finished`, or None for a runner that never announces (asked once)."""
        return self.finished

    def finished(self, aether: Mapping[str, Any]) -> Awaitable[None] | None:
        """Announce the completed superstep (SuperstepCompleted, or a superstep hook).

        Args:
            aether: The Aether after the merge.

        Returns:
            None, or an awaitable the loop awaits before it goes on.

        Raises:
            Exception: What an observer raised (the Invocation fails).
        """
        emitter = self.emitter
        if emitter is None:
            return None
        ctx = self.ctx
        return emitter.emit(new_superstep_completed(ctx.invocation_id, ctx.superstep, aether))


class _Bare(Runner):
    """Nobody observes: synchronous Sigils run inline, with no Omen and no task."""

    __slots__ = ()

    name = "bare"

    def start(
        self, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]
    ) -> Deltas | Awaitable[Deltas]:
        for plan in frontier:
            if not plan.fast:
                return run_frontier(self.ctx, frontier, aether)
        try:
            return run_inline(frontier, aether)
        except PendingAwait as pending:
            return finish_inline(self.ctx, frontier, aether, pending)

    def announcer(self) -> None:
        return None


class _Observed(Runner):
    """Omens are observed, no Ward hooks a Sigil: inline calls announced one by one.

    A frontier of synchronous Sigils without retries runs inline with SigilBegan and
    SigilCompleted around each call — a single Sigil always, a wider frontier when
    every observer is synchronous (so observers see the order the concurrent path
    gives). Anything else runs concurrently.
    """

    __slots__ = ("immediate",)

    name = "observed"

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        assert self.emitter is not None
        self.immediate = self.emitter.immediate

    def start(
        self, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]
    ) -> Deltas | Awaitable[Deltas]:
        if not self.immediate:
            return self._announced(frontier, aether)
        ctx = self.ctx
        began = new_superstep_began(ctx.invocation_id, ctx.superstep, frontier_names(frontier))
        self.emitter.deliver(began)  # type: ignore[union-attr]
        return self._body(frontier, aether)

    async def _announced(self, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]) -> Deltas:
        ctx = self.ctx
        began = new_superstep_began(ctx.invocation_id, ctx.superstep, frontier_names(frontier))
        await self.emitter.emit(began)  # type: ignore[union-attr]
        return await self._body(frontier, aether)

    def _body(self, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]) -> Awaitable[Deltas]:
        if self.immediate or len(frontier) == 1:
            for plan in frontier:
                if not plan.fast:
                    break
            else:
                return run_observed(self.ctx, frontier, aether)
        return run_frontier(self.ctx, frontier, aether)

    def finished(self, aether: Mapping[str, Any]) -> Awaitable[None] | None:
        ctx = self.ctx
        completed = new_superstep_completed(ctx.invocation_id, ctx.superstep, aether)
        if self.immediate:
            self.emitter.deliver(completed)  # type: ignore[union-attr]
            return None
        return self.emitter.emit(completed)  # type: ignore[union-attr]


class _SuperstepHooks(_Observed):
    """Every observer takes whole supersteps: one quiet Sigil runs between two clocks.

    A frontier of one quiet Sigil (synchronous, no retries, no writer) is called
    inline with a ``perf_counter_ns`` reading on each side; nothing can happen between
    them that an observer would see, so no Omen is built and every Ward superstep
    hook is called once, after the merge. Other frontiers run as observed.
    """

    __slots__ = ("began", "delta", "ended", "hooks", "one", "plan")

    name = "superstep-hooks"

    def __init__(self, ctx: RunContext, hooks: tuple[SuperstepHook, ...]) -> None:
        super().__init__(ctx)
        self.hooks = hooks
        self.one = hooks[0] if len(hooks) == 1 else None
        self.plan: SigilPlan | None = None
        """The quiet Sigil of the current superstep, or None when it ran observed."""
        self.began = 0
        self.ended = 0
        self.delta: Mapping[str, Any] = {}

    def start(
        self, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]
    ) -> Deltas | Awaitable[Deltas]:
        if len(frontier) != 1 or not frontier[0].quiet:
            self.plan = None
            return super().start(frontier, aether)
        plan = self.plan = frontier[0]
        self.began = _clock_ns()
        try:
            delta = run_quiet(plan, aether)
        except PendingAwait as pending:
            return self._finish(plan, aether, pending)
        except BaseException:
            self._unfinished(None, None)
            raise
        self.ended = _clock_ns()
        self.delta = delta
        return [(plan.name, delta)]

    async def _finish(
        self, plan: SigilPlan, aether: Mapping[str, Any], pending: PendingAwait
    ) -> Deltas:
        try:
            delta = await finish_quiet(plan, aether, pending)
        except BaseException:
            self._unfinished(None, None)
            raise
        self.ended = _clock_ns()
        self.delta = delta
        return [(plan.name, delta)]

    def _unfinished(self, ended: int | None, delta: Mapping[str, Any] | None) -> None:
        ctx, name, began = self.ctx, self.plan.name, self.began  # type: ignore[union-attr]
        for hook in self.hooks:
            hook(ctx.invocation_id, ctx.superstep, name, began, ended, delta, False)

    def refused(self) -> None:
        if self.plan is not None:
            self._unfinished(self.ended, self.delta)

    def finished(self, aether: Mapping[str, Any]) -> Awaitable[None] | None:
        plan = self.plan
        if plan is None:
            return super().finished(aether)
        ctx, began, ended, delta = self.ctx, self.began, self.ended, self.delta
        if self.one is not None:  # the usual case: one recorder
            self.one(ctx.invocation_id, ctx.superstep, plan.name, began, ended, delta, True)
            return None
        for hook in self.hooks:
            hook(ctx.invocation_id, ctx.superstep, plan.name, began, ended, delta, True)
        return None


@dataclass(frozen=True, slots=True)
class RunnerChoice:
    """Which runner a Rite's Invocations get, decided once when the Rite is compiled.

    Attributes:
        hooked: A Ward hooks ``before_sigil`` or ``after_sigil`` (or Secrets mask deltas).
        superstep_hooks: Every Omen observer's superstep hook, in registration order,
            when each has one and the Rite has no Secrets (a hook would see a raw
            delta); else empty.
    """

    hooked: bool
    superstep_hooks: tuple[SuperstepHook, ...] = ()

    def runner(self, ctx: RunContext, *, streamed: bool) -> Runner:
        """The runner for one Invocation.

        Args:
            ctx: The Invocation (its emitter is None when nobody observes Omens).
            streamed: Whether a stream consumer takes the Omens (superstep hooks then
                stand down: the stream needs every Omen).

        Returns:
            A :class:`Runner` (its ``name`` says which).
        """
        if self.hooked:
            return Runner(ctx)
        if ctx.emitter is None:
            return _Bare(ctx)
        if self.superstep_hooks and not streamed:
            return _SuperstepHooks(ctx, self.superstep_hooks)
        return _Observed(ctx)


def choose_runner(
    before: Sequence[BeforeHook],
    after: Sequence[tuple[str, AfterHook]],
    omen_hooks: Sequence[OmenHook | ImmediateHook],
    *,
    masked: bool,
) -> RunnerChoice:
    """Decide, once per Rite, which runner its Invocations get.

    Args:
        before: The Wards' ``before_sigil`` hooks.
        after: The ``after_sigil`` pipeline (Secrets masking included).
        omen_hooks: Every Omen observer, as :func:`~sanctum.ritual.emitter.omen_hook_of`
            gives it.
        masked: Whether the Rite has Secrets (Omens are veiled).

    Returns:
        The choice, applied per Invocation by :meth:`RunnerChoice.runner`.
    """
    hooks = tuple(
        hook.tap for hook in omen_hooks if isinstance(hook, ImmediateHook) and hook.tap is not None
    )
    whole = bool(hooks) and len(hooks) == len(omen_hooks) and not masked
    return RunnerChoice(hooked=bool(before or after), superstep_hooks=hooks if whole else ())
