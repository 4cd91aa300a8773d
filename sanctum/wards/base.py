"""The protective circles drawn around the ritual.

Ward — middleware. A Ward observes and intercepts the engine's work through optional
hooks, all no-ops by default:

* ``on_compile(manifest)``: once, when the Ward is bound to a compiled graph.
* ``before_sigil(name, aether)``: before a Sigil executes (``aether`` is a copy).
* ``after_sigil(name, aether, delta) -> delta``: with the Sigil's delta before it merges
  into the Aether — return it (possibly transformed), or raise WardRejection to veto.
  Transformed deltas are what Seals, Omens and downstream Wards see.
* ``on_omen(omen)``: for every Omen the engine emits, before it reaches the stream.

Wards are registered with ``compile(wards=[...])`` and applied as a pipeline in
registration order: the delta returned by one Ward is the input of the next.

A Ward that only records Omens may also take the engine's quick path by declaring two
optional capabilities instead of overriding ``on_omen`` (see :class:`ObservesOmens`):

* ``observe(omen)``: a plain, non-blocking method doing all the work ``on_omen`` would
  do. The engine calls it directly, in order and at the same moment as ``on_omen``,
  with no coroutine per Omen (and the default ``on_omen`` forwards to it, so awaiting
  ``on_omen`` by hand still works).
* ``superstep_hook()``: asked once per Rite and Invocation; it returns a
  :data:`SuperstepHook` (or None). When every Omen observer of a run has one and no
  stream listens, a superstep of one synchronous Sigil (no retries, no writer) builds
  none of its four Omens (SuperstepBegan, SigilBegan, SigilCompleted,
  SuperstepCompleted): the engine calls the hook once with the whole superstep.

A class that overrides ``on_omen`` is always awaited with every Omen, whatever it
declares (a subclass changing ``on_omen`` keeps its meaning). ``TraceRecorder`` is the
Ward that uses both capabilities.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from sanctum.errors import WardRejection
from sanctum.omens.events import Omen

__all__ = [
    "ObservesOmens",
    "SuperstepHook",
    "Ward",
    "WardRejection",
    "observes_omens",
    "superstep_hook_of",
]

SuperstepHook = Callable[[str, int, str, int, int | None, Mapping[str, Any] | None, bool], None]
"""``hook(invocation_id, superstep, sigil, began, ended, delta, finished)``.

Called once per superstep whose frontier is one Sigil that is synchronous, without
retries and without a writer, in place of that superstep's SuperstepBegan,
SigilBegan, SigilCompleted and SuperstepCompleted Omens: after its delta was merged
and before its Seal, if any. Positional arguments, no record object: it runs every
superstep, and a hook must cost about what the run itself costs.

* ``invocation_id``, ``superstep`` — as on the Omens it replaces.
* ``sigil`` — the Sigil's name.
* ``began``, ``ended`` — ``time.perf_counter_ns()`` readings (a monotonic clock: add
  ``time.time_ns() - time.perf_counter_ns()`` for epoch nanoseconds) taken just before
  the call and just after it returned; ``ended`` is None when the Sigil did not
  complete (it raised, paused or returned a bad delta).
* ``delta`` — what the Sigil returned (the hook must copy what it keeps), or None when
  it did not complete.
* ``finished`` — False when the superstep did not complete: the Sigil did not, or the
  merge refused its delta (then ``ended`` and ``delta`` are set).

What the hook raises fails the Invocation.
"""


@runtime_checkable
class ObservesOmens(Protocol):
    """The quick-observer capability a Ward may declare (see the module docstring).

    ``observe`` is required; ``superstep_hook()`` (returning a :data:`SuperstepHook` or
    None) is optional. Both are looked up once, when a Rite is compiled and when an
    Invocation starts; neither may block or need the event loop.
    """

    def observe(self, omen: Omen) -> None:
        """Take one Omen synchronously (what ``on_omen`` would do).

        Raises:
            Exception: Anything raised fails the Invocation, as from ``on_omen``.
        """


def observes_omens(ward: object) -> ObservesOmens | None:
    """``ward`` when it takes Omens through ``observe``, else None.

    True for an object with a callable ``observe`` whose class does not override
    :meth:`Ward.on_omen` (one that does is awaited as usual); ``superstep_hook`` is
    optional (see :func:`superstep_hook_of`).

    Args:
        ward: A Ward (or any object registered as one).

    Returns:
        The Ward, typed as the capability, or None.
    """
    on_omen = getattr(type(ward), "on_omen", None)
    if on_omen is not None and on_omen is not Ward.on_omen:
        return None
    if isinstance(ward, ObservesOmens) and callable(getattr(ward, "observe", None)):
        return ward
    return None


def superstep_hook_of(observer: ObservesOmens) -> SuperstepHook | None:
    """The observer's :data:`SuperstepHook`, or None when it declares none.

    Raises:
        TypeError: If ``superstep_hook()`` gave something that is neither callable nor
            None (found when the Rite is set up, not in the middle of a run).
    """
    factory = getattr(observer, "superstep_hook", None)
    if factory is None:
        return None
    hook = factory()
    if hook is not None and not callable(hook):
        raise TypeError(
            f"{type(observer).__name__}.superstep_hook() must return a callable taking "
            f"(invocation_id, superstep, sigil, began, ended, delta, finished) or None, "
            f"got {type(hook).__name__}"
        )
    return hook  # type: ignore[no-any-return]


class Ward:
    """One circle of protection: observe, transform, or veto.

    Ward — a middleware. Subclass and override any hook; the defaults observe nothing
    and pass deltas through unchanged. Hooks run inside the superstep, so keep them
    fast — offload heavy work. A Ward that only records Omens may declare
    ``observe``/``superstep_hook`` instead of overriding ``on_omen``
    (:class:`ObservesOmens`).
    """

    def on_compile(self, manifest: Mapping[str, Any]) -> None:
        """Called once when the Ward is bound to a compiled graph.

        ``manifest`` describes the graph: ``{"sigils": [names], "edges": {source:
        [targets]}, "conditional_edges": {source: [targets] or ["*"] when dynamic}}``
        (it may carry more keys, e.g. ``"joins"``). Treat it as read-only.
        """

    async def before_sigil(self, name: str, aether: Mapping[str, Any]) -> None:
        """Called before Sigil ``name`` executes (``aether`` is a copy)."""

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Inspect or transform Sigil ``name``'s delta; return the delta.

        The returned mapping replaces the Sigil's delta for everything downstream (next
        Wards, reducers, Seals, SigilCompleted Omens).

        Raises:
            WardRejection: To veto the delta.
        """
        return delta

    async def on_omen(self, omen: Omen) -> None:
        """Called for every Omen before it reaches the stream.

        The default hands the Omen to ``observe`` when the Ward declares it
        (:class:`ObservesOmens`), and does nothing otherwise.
        """
        observe = getattr(self, "observe", None)
        if observe is not None:
            observe(omen)
