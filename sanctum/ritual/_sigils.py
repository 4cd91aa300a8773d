"""How Sigils are called: the primitives the runner (:mod:`sanctum.ritual.runner`) picks from.

Every frontier Sigil gets its own shallow copy of the Aether.

* :func:`run_inline` — synchronous Sigils without retries called in bind order,
  inline, with no task, no Omen and no clock read (nobody observes).
* :func:`run_quiet` — one quiet Sigil (synchronous, no retries, no writer) called
  inline; the runner reads the clock around it for a Ward's superstep hook.
* :func:`run_observed` — the same inline calls with SigilBegan and SigilCompleted
  emitted around each, still with no task.
* :func:`run_frontier` — everything else: a single Sigil is awaited directly, several
  run as concurrent tasks; per Sigil the Wards' ``before_sigil`` run, then the attempts
  (each bounded by the policy's timeout, retried on matching failures after
  ``backoff(attempt)`` seconds with a SigilRetried Omen), then the Wards'
  ``after_sigil`` pipeline, then the SigilCompleted Omen. The first failure cancels
  the siblings still running.

Failures that exhausted their policy surface as :class:`SigilFailure`; the loop decides
between an on_error jump and SigilExecutionError. Interrupt, DeltaTypeError and
cancellation pass through untouched. A synchronous Sigil that hands back an awaitable
raises :class:`PendingAwait` out of the inline calls, to be finished asynchronously.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from sanctum.errors import DeltaTypeError, Interrupt, SigilTimeoutError, WardRejection
from sanctum.omens.events import DeltaRejected, SigilBegan, SigilCompleted, SigilRetried
from sanctum.ritual._omens import new_sigil_began, new_sigil_completed
from sanctum.ritual.algo import check_delta
from sanctum.ritual.emitter import Emitter
from sanctum.ritual.graph import SigilPlan
from sanctum.ritual.invocation import InvocationContext
from sanctum.ritual.policy import failure_matches
from sanctum.ritual.writer import NULL_WRITER, SigilWriter

__all__ = [
    "AfterHook",
    "BeforeHook",
    "Deltas",
    "PendingAwait",
    "RunContext",
    "SigilFailure",
    "cancel_all",
    "finish_inline",
    "finish_quiet",
    "gather_pauses",
    "perform",
    "run_frontier",
    "run_inline",
    "run_observed",
    "run_quiet",
]

BeforeHook = Callable[[str, Mapping[str, Any]], Awaitable[None]]
AfterHook = Callable[[str, Mapping[str, Any], Mapping[str, Any]], Awaitable[Mapping[str, Any]]]

Deltas = list[tuple[str, Mapping[str, Any]]]
"""``[(sigil, delta), ...]`` in bind order: what a superstep's Sigils returned."""


class SigilFailure(Exception):
    """A Sigil failed for good (its retries, if any, exhausted).

    ``plan`` is the failing Sigil, ``error`` the final failure (a SigilTimeoutError for a
    timeout, a WardRejection for a veto), ``attempts`` how many attempts ran.
    """

    def __init__(self, plan: SigilPlan, error: BaseException, attempts: int) -> None:
        super().__init__(f"sigil {plan.name!r} failed: {error!r}")
        self.plan = plan
        self.error = error
        self.attempts = attempts


class PendingAwait(Exception):
    """The inline path met a sync Sigil that returned an awaitable; finish asynchronously."""

    def __init__(self, done: Deltas, index: int, awaitable: Awaitable[Any]) -> None:
        super().__init__("sigil returned an awaitable")
        self.done = done
        self.index = index
        self.awaitable = awaitable


class RunContext:
    """What the runner needs to know about the Invocation it serves."""

    __slots__ = ("after", "before", "emitter", "invocation_id", "superstep")

    def __init__(
        self,
        invocation_id: str,
        emitter: Emitter | None,
        before: Sequence[BeforeHook],
        after: Sequence[tuple[str, AfterHook]],
    ) -> None:
        self.invocation_id = invocation_id
        self.superstep = 0
        self.emitter = emitter
        self.before = tuple(before)
        self.after = tuple(after)


def run_inline(frontier: Sequence[SigilPlan], aether: Mapping[str, Any]) -> Deltas:
    """Call synchronous Sigils inline, in bind order (the fast path).

    Returns:
        ``[(sigil, delta), ...]`` in bind order.

    Raises:
        SigilFailure: When a Sigil raises (later Sigils are not called).
        Interrupt: When a Sigil pauses the Invocation (``sigil`` filled in).
        DeltaTypeError: When a Sigil returns a non-mapping.
        PendingAwait: When a Sigil returned an awaitable.
    """
    out: Deltas = []
    for plan in frontier:
        try:
            if plan.takes_writer:
                result = plan.fn(dict(aether), NULL_WRITER)
            else:
                result = plan.fn(dict(aether))
        except Interrupt as pause:
            pause.sigil = plan.name
            raise
        except (Exception, SystemExit) as exc:  # sys.exit() in a sigil is its failure
            raise SigilFailure(plan, exc, 1) from exc
        if type(result) is not dict:
            if inspect.isawaitable(result):
                raise PendingAwait(out, len(out), result)
            result = check_delta(plan.name, result)
        out.append((plan.name, result))
    return out


def run_quiet(plan: SigilPlan, aether: Mapping[str, Any]) -> Mapping[str, Any]:
    """Call one quiet Sigil (synchronous, no retries, no writer) inline: the tapped path.

    Args:
        plan: The superstep's only Sigil (``plan.quiet`` holds).
        aether: The Aether at the start of the superstep (the Sigil gets a copy).

    Returns:
        The Sigil's delta.

    Raises:
        SigilFailure | Interrupt | DeltaTypeError: As :func:`run_inline`.
        PendingAwait: When the Sigil returned an awaitable (finish it with
            :func:`finish_quiet`).
    """
    try:
        result = plan.fn(dict(aether))
    except Interrupt as pause:
        pause.sigil = plan.name
        raise
    except (Exception, SystemExit) as exc:  # sys.exit() in a sigil is its failure
        raise SigilFailure(plan, exc, 1) from exc
    if type(result) is not dict:
        if inspect.isawaitable(result):
            raise PendingAwait([], 0, result)
        return check_delta(plan.name, result)
    return result


async def finish_quiet(
    plan: SigilPlan, aether: Mapping[str, Any], pending: PendingAwait
) -> Mapping[str, Any]:
    """Await what :func:`run_quiet`'s Sigil handed back (bounded by its timeout).

    Returns:
        The Sigil's delta.

    Raises:
        SigilFailure | Interrupt | DeltaTypeError: As :func:`run_inline`.
    """
    try:
        result = await _bounded(plan, pending.awaitable, aether)
    except Interrupt as pause:
        pause.sigil = plan.name
        raise
    except (Exception, SystemExit) as exc:  # sys.exit() in a sigil is its failure
        raise SigilFailure(plan, exc, 1) from exc
    return check_delta(plan.name, result)


async def run_observed(
    ctx: RunContext, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]
) -> Deltas:
    """Call synchronous Sigils inline, in bind order, announcing each (observed path).

    Same Omens, in the same order, as :func:`run_frontier` gives for such a frontier
    (SigilBegan, the call, SigilCompleted with its duration), without the coroutine
    and task per Sigil. Requires an emitter and no ``before``/``after`` Ward hooks.

    Returns:
        ``[(sigil, delta), ...]`` in bind order.

    Raises:
        SigilFailure: When a Sigil raises (later Sigils are not called).
        Interrupt: When a Sigil pauses the Invocation (``sigil`` filled in).
        DeltaTypeError: When a Sigil returns a non-mapping.
    """
    emitter = ctx.emitter
    assert emitter is not None
    immediate = emitter.immediate
    invocation_id = ctx.invocation_id
    superstep = ctx.superstep
    clock = time.perf_counter
    out: Deltas = []
    for index, plan in enumerate(frontier):
        name = plan.name
        started = clock()
        began = new_sigil_began(invocation_id, superstep, name)
        if immediate:
            emitter.deliver(began)
        else:
            await emitter.emit(began)
        try:
            if plan.takes_writer:
                writer = SigilWriter(emitter, invocation_id, superstep, name)
                result = plan.fn(dict(aether), writer)
            else:
                result = plan.fn(dict(aether))
            suspended = False
            if type(result) is not dict:
                if inspect.isawaitable(result):
                    suspended = True
                    result = await _bounded(plan, result, aether)
                result = check_delta(name, result)
        except Interrupt as pause:
            pause.sigil = name
            raise
        except DeltaTypeError:
            raise
        except (Exception, SystemExit) as exc:  # sys.exit() in a sigil is its failure
            raise SigilFailure(plan, exc, 1) from exc
        completed = new_sigil_completed(invocation_id, superstep, name, result, clock() - started)
        if immediate:
            emitter.deliver(completed)
        else:
            await emitter.emit(completed)
        out.append((name, result))
        if suspended and index + 1 < len(frontier):
            # It handed back an awaitable: like finish_inline, the rest runs concurrently.
            out.extend(await run_frontier(ctx, frontier[index + 1 :], aether))
            break
    return out


async def finish_inline(
    ctx: RunContext,
    frontier: Sequence[SigilPlan],
    aether: Mapping[str, Any],
    pending: PendingAwait,
) -> Deltas:
    """Resume :func:`run_inline` after a Sigil handed back an awaitable."""
    plan = frontier[pending.index]
    try:
        result = await _bounded(plan, pending.awaitable, aether)
    except Interrupt as pause:
        pause.sigil = plan.name
        raise
    except (Exception, SystemExit) as exc:  # sys.exit() in a sigil is its failure
        raise SigilFailure(plan, exc, 1) from exc
    out = [*pending.done, (plan.name, check_delta(plan.name, result))]
    rest = frontier[pending.index + 1 :]
    if rest:
        out.extend(await run_frontier(ctx, rest, aether))
    return out


async def _bounded(plan: SigilPlan, awaitable: Awaitable[Any], aether: Mapping[str, Any]) -> Any:
    timeout = plan.timeout
    if timeout is None:
        return await awaitable
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            return await awaitable
    except TimeoutError as exc:
        if not scope.expired():
            raise
        raise SigilTimeoutError(
            f"sigil {plan.name!r} ran past its timeout of {timeout:g} s; raise "
            "SigilPolicy.timeout or make the sigil faster",
            sigil=plan.name,
            timeout=timeout,
            aether=aether,
        ) from exc


async def _attempt(
    ctx: RunContext, plan: SigilPlan, aether: Mapping[str, Any]
) -> tuple[Mapping[str, Any], int]:
    attempt = 0
    while True:
        try:
            if plan.adapted:
                emitter = ctx.emitter
                pen: Any = (
                    NULL_WRITER
                    if emitter is None
                    else SigilWriter(emitter, ctx.invocation_id, ctx.superstep, plan.name)
                )
                where = InvocationContext(ctx.invocation_id, ctx.superstep, plan.name)
                result = plan.fn(dict(aether), pen, where)
            elif plan.takes_writer:
                emitter = ctx.emitter
                writer: Any = (
                    NULL_WRITER
                    if emitter is None
                    else SigilWriter(emitter, ctx.invocation_id, ctx.superstep, plan.name)
                )
                result = plan.fn(dict(aether), writer)
            else:
                result = plan.fn(dict(aether))
            if plan.is_async or inspect.isawaitable(result):
                result = await _bounded(plan, result, aether)
            return check_delta(plan.name, result), attempt + 1
        except (Interrupt, DeltaTypeError):
            raise
        except (Exception, SystemExit) as exc:  # sys.exit() in a sigil is its failure
            if attempt < plan.retries and failure_matches(exc, plan.retry_on):
                attempt += 1
                backoff = plan.backoff
                delay = float(backoff(attempt)) if backoff is not None else 0.0
                if ctx.emitter is not None:
                    await ctx.emitter.emit(
                        SigilRetried(
                            invocation_id=ctx.invocation_id,
                            superstep=ctx.superstep,
                            sigil=plan.name,
                            attempt=attempt,
                            cause=repr(exc),
                            delay=delay,
                        )
                    )
                await asyncio.sleep(max(0.0, delay))
                continue
            raise SigilFailure(plan, exc, attempt + 1) from exc


async def perform(ctx: RunContext, plan: SigilPlan, aether: Mapping[str, Any]) -> Mapping[str, Any]:
    """Perform one Sigil with its policy, Ward hooks and Omens.

    Returns:
        The delta, after every Ward's ``after_sigil``.

    Raises:
        SigilFailure: When the Sigil fails for good or a Ward vetoes its delta.
        Interrupt: When the Sigil pauses the Invocation.
        DeltaTypeError: When the Sigil (or a Ward) hands back a non-mapping.
    """
    emitter = ctx.emitter
    started = 0.0
    for before in ctx.before:
        await before(plan.name, dict(aether))
    if emitter is not None:
        started = time.perf_counter()
        await emitter.emit(
            SigilBegan(invocation_id=ctx.invocation_id, superstep=ctx.superstep, sigil=plan.name)
        )
    try:
        delta, attempts = await _attempt(ctx, plan, aether)
    except Interrupt as pause:
        pause.sigil = plan.name
        raise
    for ward_name, after in ctx.after:
        try:
            changed: Any = await after(plan.name, dict(aether), delta)
        except WardRejection as veto:
            if emitter is not None:
                await emitter.emit(
                    DeltaRejected(
                        invocation_id=ctx.invocation_id,
                        superstep=ctx.superstep,
                        sigil=plan.name,
                        ward=ward_name,
                        reason=veto.reason,
                    )
                )
            raise SigilFailure(plan, veto, attempts) from veto
        if not isinstance(changed, Mapping):
            kind = type(changed).__name__
            raise DeltaTypeError(
                f"ward {ward_name} returned {kind} from after_sigil for sigil {plan.name!r}; "
                "after_sigil must return the (possibly transformed) delta mapping",
                sigil=plan.name,
                returned=kind,
            )
        delta = changed
    if emitter is not None:
        await emitter.emit(
            SigilCompleted(
                invocation_id=ctx.invocation_id,
                superstep=ctx.superstep,
                sigil=plan.name,
                delta=delta,
                duration=time.perf_counter() - started,
            )
        )
    return delta


async def cancel_all(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until every one of them has finished."""
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


async def run_frontier(
    ctx: RunContext, frontier: Sequence[SigilPlan], aether: Mapping[str, Any]
) -> Deltas:
    """Run a frontier concurrently; the first failure cancels the siblings.

    Returns:
        ``[(sigil, delta), ...]`` in bind order, whatever the completion order.

    Raises:
        SigilFailure | Interrupt | DeltaTypeError: The failure of the earliest-bound
            Sigil among those that failed before the others were cancelled.
    """
    if len(frontier) == 1:
        plan = frontier[0]
        return [(plan.name, await perform(ctx, plan, aether))]
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(perform(ctx, plan, aether)) for plan in frontier]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:
        await cancel_all(tasks)
        raise
    failure = _earliest_failure(tasks)
    if isinstance(failure, Interrupt):
        # A pause: every sibling runs to its end, as it may pause too (one resumption
        # then answers every question); their deltas are discarded with the superstep.
        waiting = [task for task in tasks if not task.done()]
        try:
            if waiting:
                await asyncio.wait(waiting)
        except BaseException:
            await cancel_all(tasks)
            raise
        failure = _earliest_failure(tasks)
        if isinstance(failure, Interrupt):
            failure.reasons = {
                pause.sigil or "": pause.reason
                for task in tasks
                if not task.cancelled() and isinstance(pause := task.exception(), Interrupt)
            }
            failure.gathered = True
    if failure is not None:
        await cancel_all(tasks)
        for task in tasks:  # retrieve every outcome: no "exception never retrieved"
            if not task.cancelled():
                task.exception()
        raise failure
    return [(plan.name, task.result()) for plan, task in zip(frontier, tasks, strict=True)]


def _earliest_failure(tasks: Sequence[asyncio.Future[Any]]) -> BaseException | None:
    """The exception of the earliest-bound finished task that raised, or None."""
    for task in tasks:
        if task.done() and not task.cancelled():
            error = task.exception()
            if error is not None:
                return error
    return None


async def gather_pauses(
    ctx: RunContext, frontier: Sequence[SigilPlan], aether: Mapping[str, Any], pause: Interrupt
) -> None:
    """Collect the pauses of the Sigils an inline path never called after ``pause``.

    The inline paths call a frontier's Sigils one after another and stop at the first
    ``interrupt()``; the Sigils bound after it would have run in the same superstep, so
    they are called now (each on its own copy of the Aether, one after another, their
    deltas and failures discarded with the aborted superstep) and every pause among
    them is added to ``pause.reasons`` in bind order. Does nothing when ``pause``
    already gathered its siblings (the concurrent path waits for them all).
    """
    if pause.gathered:
        return
    pause.gathered = True
    names = [plan.name for plan in frontier]
    if pause.sigil not in names:
        return
    reasons = dict(pause.reasons) if pause.reasons else {pause.sigil: pause.reason}
    for plan in frontier[names.index(pause.sigil) + 1 :]:
        try:
            await _attempt(ctx, plan, aether)
        except Interrupt as other:
            reasons[plan.name] = other.reason
        except (Exception, SystemExit):  # discarded: the superstep is aborted and re-runs
            pass
    pause.reasons = reasons
