"""The sealed plan of the invocation, ready to be performed.

Rite — the compiled graph. Immutable; produced by ``Ritual.compile()``. Delegates
execution to the BSP scheduler (:mod:`sanctum.ritual.scheduler`): every frontier Sigil
runs concurrently within a superstep, deltas merge deterministically in Sigil insertion
order (through Conduit reducers when the Rite has an AetherSchema, by overwrite
otherwise), and edges decide the next frontier until END or ``recursion_limit``. With a
Codex attached, every superstep leaves a Seal, enabling resumption after
``interrupt()`` and time-travel from any historic Seal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sanctum.aether.reducers import Reducer, append
from sanctum.aether.schema import ERRORS_CONDUIT, AetherSchema
from sanctum.omens.events import Omen
from sanctum.omens.modes import resolve_modes
from sanctum.ritual.emitter import omen_hook_of
from sanctum.ritual.graph import Graph
from sanctum.ritual.loop import Setup, perform_invocation
from sanctum.ritual.mandate import PRINCIPAL_KEY, Mandate, using_mandate
from sanctum.ritual.runner import AfterHook, BeforeHook
from sanctum.wards.base import Ward, observes_omens
from sanctum.wards.secrets import Secrets, Veil

if TYPE_CHECKING:
    from sanctum.codex.base import Codex
    from sanctum.ritual.emitter import OmenSink

__all__ = ["Rite"]

_UNSET: Any = object()
_DONE: Any = object()


def _overrides(ward: object, hook: str) -> bool:
    method = getattr(type(ward), hook, None)
    if method is None:
        return False
    return not (isinstance(ward, Ward) and method is getattr(Ward, hook))


def _setup(
    graph: Graph,
    codex: Codex | None,
    wards: Sequence[Ward],
    limit: int,
    secrets: Secrets | None = None,
) -> Setup:
    before: list[BeforeHook] = [w.before_sigil for w in wards if _overrides(w, "before_sigil")]
    after: list[tuple[str, AfterHook]] = [
        (type(w).__name__, w.after_sigil) for w in wards if _overrides(w, "after_sigil")
    ]
    if secrets:
        # first in the pipeline: no Ward (an audit trail) and no merge sees a secret
        after.insert(0, ("Secrets", secrets.ward().after_sigil))
    omen_hooks = [
        omen_hook_of(w) for w in wards if _overrides(w, "on_omen") or observes_omens(w) is not None
    ]
    reducers: dict[str, Reducer]
    if graph.schema is not None:
        reducers = {name: c.reducer for name, c in graph.schema.conduits.items()}
    else:
        reducers = {}
    reducers.setdefault(ERRORS_CONDUIT, append)
    return Setup(
        graph=graph,
        codex=codex,
        recursion_limit=limit,
        before=tuple(before),
        after=tuple(after),
        omen_hooks=tuple(omen_hooks),
        reducers=reducers,
        secrets=secrets if secrets else None,
    )


class Rite:
    """The sealed plan of the invocation, ready to be performed.

    Rite — a compiled graph. Build one with ``Ritual.compile()``; attach a Codex or
    Wards later with :meth:`with_options`. Read-only attributes: :attr:`manifest`,
    :attr:`codex`, :attr:`wards`, :attr:`schema`, :attr:`recursion_limit`.
    """

    __slots__ = ("_codex", "_graph", "_limit", "_owns", "_secrets", "_setup", "_wards")

    def __init__(
        self,
        graph: Graph,
        *,
        codex: Codex | None = None,
        wards: Sequence[Ward] = (),
        recursion_limit: int,
        announce: bool = True,
        secrets: Secrets | None = None,
        owns: Sequence[Any] = (),
    ) -> None:
        if secrets is not None and not isinstance(secrets, Secrets):
            raise TypeError(
                f"secrets must be a sanctum Secrets (a masking policy), got "
                f"{type(secrets).__name__}; build one with Secrets(values, patterns)"
            )
        self._graph = graph
        self._codex = codex
        self._wards: tuple[Ward, ...] = tuple(wards)
        self._limit = recursion_limit
        self._secrets = secrets if secrets else None
        self._owns: tuple[Any, ...] = tuple(owns)
        self._setup = _setup(graph, codex, self._wards, recursion_limit, self._secrets)
        if announce:
            for ward in self._wards:
                ward.on_compile(graph.manifest)

    def __repr__(self) -> str:
        return f"Rite(sigils={[p.name for p in self._graph.plans]!r})"

    @property
    def manifest(self) -> dict[str, Any]:
        """The graph's description (a fresh copy).

        ``{"sigils": [names in bound order], "edges": {source: [targets]} (START as a
        source), "conditional_edges": {source: [targets] or ["*"]}, "joins": [names with
        join="all"], "entry": [names]}``.
        """
        return self._graph.manifest

    @property
    def codex(self) -> Codex | None:
        """The Seal store, or None."""
        return self._codex

    @property
    def wards(self) -> tuple[Ward, ...]:
        """The Ward pipeline, in registration order."""
        return self._wards

    @property
    def schema(self) -> AetherSchema | None:
        """The AetherSchema, or None when deltas merge by overwrite."""
        return self._graph.schema

    @property
    def recursion_limit(self) -> int:
        """Maximum supersteps of one call (a run, or one resume) of an Invocation."""
        return self._limit

    @property
    def secrets(self) -> Secrets | None:
        """The masking policy applied to deltas, Seals, Omens and errors, or None."""
        return self._secrets

    async def aclose(self) -> None:
        """Release what the Rite owns: the clients of the Oracles it built, and the
        Rites of its Circles (a ritual file's compile hands them over; a Rite built in
        Python owns nothing unless given ``owns``). Idempotent; the Rite may run again
        afterwards (clients reopen on their next call).

        Raises:
            Exception: The first error an owned ``aclose()`` raised, after every owned
                object was asked to close.
        """
        first: Exception | None = None
        for owned in self._owns:
            try:
                await owned.aclose()
            except Exception as exc:  # close the rest before reporting
                first = first or exc
        if first is not None:
            raise first

    def _veil_error(self, error: BaseException) -> None:
        """Mask the message of an error (or an Interrupt's reason) leaving a run."""
        if self._secrets is not None and isinstance(error, Exception):
            Veil(self._secrets).error(error)
            self._secrets.mask_chain(error)  # what a traceback prints of its causes

    def with_options(
        self,
        *,
        codex: Codex | None = _UNSET,
        wards: Sequence[Ward] | None = _UNSET,
        recursion_limit: int = _UNSET,
        secrets: Secrets | None = _UNSET,
        owns: Sequence[Any] = _UNSET,
    ) -> Rite:
        """Return a new Rite over the same graph with some options replaced.

        Omitted options are kept. New ``wards`` receive ``on_compile(manifest)``.

        Args:
            codex: Seal store (None detaches it).
            wards: Ward pipeline replacing the current one (None or [] for none).
            recursion_limit: Maximum supersteps per call (a positive int).
            secrets: Masking policy replacing the current one (None for none); combine
                with the current one by passing ``rite.secrets | more``.
            owns: Objects with an ``async aclose()`` that :meth:`aclose` releases
                (replacing the current ones; the new Rite shares them otherwise).

        Returns:
            The new Rite; this one is unchanged.

        Raises:
            ValueError: If ``recursion_limit`` is not a positive int.
            TypeError: If ``secrets`` is not a :class:`Secrets`.
        """
        limit = self._limit if recursion_limit is _UNSET else recursion_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"recursion_limit must be a positive int, got {limit!r}")
        new_wards = self._wards if wards is _UNSET else tuple(wards or ())
        rite = Rite(
            self._graph,
            codex=self._codex if codex is _UNSET else codex,
            wards=new_wards,
            recursion_limit=limit,
            announce=wards is not _UNSET,
            secrets=self._secrets if secrets is _UNSET else secrets,
            owns=self._owns if owns is _UNSET else owns,
        )
        return rite

    async def ainvoke(
        self,
        input: Mapping[str, Any] | None = None,
        *,
        invocation_id: str | None = None,
        seal_id: str | None = None,
        updates: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        mandate: Mandate | None = None,
    ) -> dict[str, Any]:
        """Perform the invocation, fresh or resumed from a Seal.

        Fresh run — ``input`` given, no ``seal_id``: runs the superstep loop with a
        shallow copy of ``input`` as the initial Aether. Each active Sigil receives a
        copy of the full Aether (mutating it has no effect), deltas merge
        deterministically, and edges compute the next frontier. Returns the final Aether
        when the frontier empties or holds only END.

        Resumption — ``input`` omitted (requires a Codex and ``invocation_id``):
        restores the Invocation's latest Seal — or the Seal named by ``seal_id`` for
        time-travel — and continues from its frontier and superstep count. ``updates``
        is merged into the restored Aether first (through the Conduit reducers with a
        schema). Resumption appends new Seals to the same history.

        Args:
            input: Initial Aether for a fresh run; omit to resume.
            invocation_id: The Invocation's id; generated (uuid4 hex) on a fresh run.
            seal_id: Historic Seal to time-travel from (implies resumption).
            updates: Delta injected into the restored Aether on resumption.
            metadata: JSON-serialisable keys stored in every Seal this call writes.
            mandate: Who this call acts for (a run context, see
                :mod:`sanctum.ritual.mandate`): current for every Sigil and Spell of
                the run, never stored; only its principal goes into Seal metadata
                (``mandate_principal``). A resume takes its own (the resumer's).

        Returns:
            The final Aether (a dict).

        Raises:
            AetherValidationError: If the input, a delta, or updates writes outside the
                declared Conduits (schema Rites only).
            Interrupt: If a Sigil pauses the Invocation via interrupt().
            RecursionLimitError: If this call (a run or a resume) runs recursion_limit
                supersteps without reaching END.
            SealError: If resumption lacks a Codex or invocation_id, no Seals exist,
                seal_id is unknown, or another writer advanced the Invocation first.
            SigilExecutionError: If a Sigil raises during a superstep.
            SigilJoinError: If the run ends while a join="all" Sigil still waits.
            TypeError: If a Sigil returns something other than a mapping.
            ValueError: If a router returns a value that is neither a bound Sigil nor
                END, or is missing from its path_map.
        """
        try:
            with using_mandate(mandate):
                return await perform_invocation(
                    self._setup,
                    input,
                    invocation_id=invocation_id,
                    seal_id=seal_id,
                    updates=updates,
                    metadata=_signed(metadata, mandate),
                )
        except Exception as error:
            self._veil_error(error)
            raise

    async def _perform(
        self,
        input: Mapping[str, Any] | None,
        *,
        sink: OmenSink | None = None,
        written: dict[str, Any] | None = None,
        circle: str | None = None,
    ) -> dict[str, Any]:
        """Run fresh with an Omen sink and write tracking (used by circle())."""
        try:
            return await perform_invocation(
                self._setup, input, sink=sink, written=written, circle=circle
            )
        except Exception as error:
            self._veil_error(error)
            raise

    def invoke(
        self,
        input: Mapping[str, Any] | None = None,
        *,
        invocation_id: str | None = None,
        seal_id: str | None = None,
        updates: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        mandate: Mandate | None = None,
    ) -> dict[str, Any]:
        """Perform the invocation synchronously (same semantics as :meth:`ainvoke`).

        Convenience wrapper for non-async callers; it runs its own event loop.

        Raises:
            RuntimeError: If called from within a running event loop — use
                ``await rite.ainvoke(...)`` there.
            Exception: Everything :meth:`ainvoke` raises.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                "Rite.invoke() cannot run inside a running event loop; "
                "use `await rite.ainvoke(...)` instead"
            )
        return asyncio.run(
            self.ainvoke(
                input,
                invocation_id=invocation_id,
                seal_id=seal_id,
                updates=updates,
                metadata=metadata,
                mandate=mandate,
            )
        )

    def astream(
        self,
        input: Mapping[str, Any] | None = None,
        *,
        invocation_id: str | None = None,
        seal_id: str | None = None,
        updates: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        mode: str | Iterable[str] = "updates",
        mandate: Mandate | None = None,
    ) -> AsyncIterator[Omen]:
        """Perform the invocation, streaming Omens as it unfolds.

        Async iterator over the same fresh/resume semantics as :meth:`ainvoke`. The
        scheduler runs as a background task; Omens flow through a queue and are yielded
        as they happen, filtered by ``mode``: ``"updates"`` (SigilCompleted per
        finished Sigil, in completion order), ``"values"`` (SuperstepCompleted with the
        full Aether), ``"omens"`` (the granular lifecycle), ``"tokens"`` (TokenEmitted
        payloads pushed through writers while the Sigil runs). Modes combine: pass a set
        of names for the union. Exceptions from the Invocation propagate to the consumer
        after the already-emitted Omens are drained. Closing the iterator early (e.g.
        ``aclose()`` or leaving an ``aclosing`` block) cancels the Invocation and waits
        for it to stop.

        Returns:
            An async iterator of Omens.

        Raises:
            ValueError: (StreamModeError) If ``mode`` names an unknown stream mode;
                raised immediately, before anything runs.
        """
        classes = resolve_modes(mode)
        return self._stream(
            classes,
            input,
            invocation_id=invocation_id,
            seal_id=seal_id,
            updates=updates,
            metadata=_signed(metadata, mandate),
            mandate=mandate,
        )

    async def _stream(
        self,
        classes: frozenset[type[Omen]],
        input: Mapping[str, Any] | None,
        *,
        invocation_id: str | None,
        seal_id: str | None,
        updates: Mapping[str, Any] | None,
        metadata: Mapping[str, Any] | None,
        mandate: Mandate | None = None,
    ) -> AsyncIterator[Omen]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        put = queue.put_nowait

        def sink(omen: Omen) -> None:
            if type(omen) in classes:
                put(omen)

        with using_mandate(mandate):  # the task copies the context as it is now
            task = asyncio.get_running_loop().create_task(
                perform_invocation(
                    self._setup,
                    input,
                    invocation_id=invocation_id,
                    seal_id=seal_id,
                    updates=updates,
                    metadata=metadata,
                    sink=sink,
                )
            )
        task.add_done_callback(lambda _t: put(_DONE))
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                yield item
            error = task.exception()
            if error is not None:
                self._veil_error(error)
                raise error
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            elif not task.cancelled():
                task.exception()  # mark retrieved


def _signed(
    metadata: Mapping[str, Any] | None, mandate: Mandate | None
) -> Mapping[str, Any] | None:
    """Seal metadata plus the principal the call acts for (never the rest of the Mandate)."""
    if mandate is None:
        return metadata
    return {**(metadata or {}), PRINCIPAL_KEY: mandate.principal}
