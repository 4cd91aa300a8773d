"""Wards of endurance: what to do when a Sigil falters.

Per-Sigil resilience policies. A local model can stall, a Spell can flake — the engine
must not hang or die for it. A :class:`SigilPolicy` bounds each attempt with a timeout,
retries transient failures with exponential backoff and jitter, and can divert a
definitive failure to a fallback Sigil instead of failing the Invocation.

Precedence on failure (documented contract):

1. ``timeout`` bounds every attempt — an attempt past it raises SigilTimeoutError (a
   SigilExecutionError subclass);
2. ``retries`` re-run the Sigil when the failure matches ``retry_on`` (timeouts
   included by default), emitting a SigilRetried Omen per attempt and sleeping
   ``backoff(attempt)`` seconds between them;
3. ``on_error`` — once retries are exhausted, jump to the named fallback Sigil: the
   failed superstep is aborted (no Seal written, sibling deltas discarded), the failure
   is appended to the reserved ``"__errors__"`` Conduit, and the fallback runs as the
   next superstep (which writes its Seal normally);
4. otherwise the failure propagates as SigilExecutionError.

A failure is matched against ``retry_on`` through its chain of SigilExecutionError
causes (:func:`failure_matches`): a Circle Sigil whose inner Rite failed raises the
inner SigilExecutionError, and ``retry_on=(ConnectionError,)`` still matches when the
inner Sigil's original failure was a ConnectionError — a Circle is one node whose
failures are its inner failures.

Timeouts bound async Sigils; a synchronous Sigil body cannot be interrupted mid-run —
offload blocking work with ``asyncio.to_thread``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sanctum.errors import SigilExecutionError

__all__ = ["BackoffFn", "SigilPolicy", "exponential_backoff", "failure_chain", "failure_matches"]

BackoffFn = Callable[[int], float]
"""Delay in seconds before retry number ``attempt`` (1-based)."""


def failure_chain(error: BaseException) -> Iterator[BaseException]:
    """Walk a failure and the originals it wraps: ``error``, then down the causes.

    A SigilExecutionError (a Circle's inner failure, a wrapped Sigil failure) hands
    over to its ``__cause__``; the walk stops at the first exception that is not a
    SigilExecutionError or has no cause (cycles are cut).

    Args:
        error: The failure a Sigil attempt raised.

    Returns:
        An iterator of exceptions, outermost first, the original failure last.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        if not isinstance(current, SigilExecutionError):
            return
        current = current.__cause__


def failure_matches(error: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether ``error`` — or an original failure it wraps — is one of ``kinds``.

    Args:
        error: The failure a Sigil attempt raised.
        kinds: Exception classes (a policy's ``retry_on``).

    Returns:
        True when any exception of :func:`failure_chain` is an instance of ``kinds``.
    """
    return any(isinstance(link, kinds) for link in failure_chain(error))


def exponential_backoff(base: float = 0.1, cap: float = 5.0, jitter: bool = True) -> BackoffFn:
    """Build the classic exponential-backoff-with-jitter delay function.

    Retry ``attempt`` waits ``min(cap, base * 2**(attempt-1))`` seconds, scaled by a
    uniform factor in [0.5, 1.0] when ``jitter`` is on (jitter decorrelates retry
    storms when several Sigils fail together).

    Args:
        base: Delay of the first retry, in seconds (>= 0).
        cap: Upper bound of any delay, in seconds (>= 0).
        jitter: Scale each delay by a random factor in [0.5, 1.0].

    Returns:
        A :data:`BackoffFn` mapping the 1-based retry number to seconds.

    Raises:
        ValueError: If ``base`` or ``cap`` is negative.
    """
    if base < 0 or cap < 0:
        raise ValueError(f"exponential_backoff needs base >= 0 and cap >= 0, got {base}, {cap}")

    def backoff(attempt: int) -> float:
        exponent = max(0, attempt - 1)
        delay = cap if exponent >= 64 else min(cap, base * 2**exponent)
        if jitter:
            delay *= random.uniform(0.5, 1.0)
        return float(delay)

    return backoff


@dataclass(frozen=True, slots=True)
class SigilPolicy:
    """The endurance granted to one Sigil.

    SigilPolicy — a node's retry/timeout/fallback policy. ``timeout`` bounds each
    attempt in seconds (None = unbounded); ``retries`` is how many extra attempts follow
    a matching failure; ``backoff`` maps the retry number to a delay in seconds
    (default: exponential with jitter, base 0.1 s, cap 5 s); ``retry_on`` is the tuple
    of exception types worth retrying (default: any Exception — includes
    SigilTimeoutError); ``on_error`` names the fallback Sigil to jump to after the last
    attempt fails (see the module docstring for the full precedence and Seal
    interaction).

    Attach per Sigil with ``add_sigil(name, fn, policy=...)`` or globally with
    ``compile(default_policy=...)``; the per-Sigil policy wins.

    Raises:
        ValueError: If ``timeout`` is not positive, ``retries`` is negative or not an
            int, ``backoff`` is not callable, or ``retry_on`` holds non-exception types.
    """

    timeout: float | None = None
    retries: int = 0
    backoff: BackoffFn = field(default_factory=exponential_backoff)
    retry_on: tuple[type[BaseException], ...] = (Exception,)
    on_error: str | None = None

    def __post_init__(self) -> None:
        if self.timeout is not None and not (
            isinstance(self.timeout, (int, float)) and self.timeout > 0
        ):
            raise ValueError(
                f"SigilPolicy.timeout must be a positive number of seconds or None, "
                f"got {self.timeout!r}"
            )
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"SigilPolicy.retries must be an int >= 0, got {self.retries!r}")
        if not callable(self.backoff):
            raise ValueError("SigilPolicy.backoff must be callable: attempt (1-based) -> seconds")
        retry_on: Any = self.retry_on
        if isinstance(retry_on, type):
            retry_on = (retry_on,)
        retry_on = tuple(retry_on)
        for item in retry_on:
            if not (isinstance(item, type) and issubclass(item, BaseException)):
                raise ValueError(f"SigilPolicy.retry_on must hold exception classes, got {item!r}")
        object.__setattr__(self, "retry_on", retry_on)
        if self.on_error is not None and (not isinstance(self.on_error, str) or not self.on_error):
            raise ValueError(f"SigilPolicy.on_error must name a Sigil, got {self.on_error!r}")
