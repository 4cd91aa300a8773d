"""The circle where Sigils are bound before the invocation.

Ritual — the graph builder. Register nodes with :meth:`Ritual.add_sigil`, connect them
with :meth:`~Ritual.add_edge` / :meth:`~Ritual.add_conditional_edge` (or
:meth:`~Ritual.set_entry_point` for a START edge), then call :meth:`~Ritual.compile` to
validate the graph and obtain an executable :class:`~sanctum.ritual.rite.Rite`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sanctum.aether.schema import AetherSchema
from sanctum.errors import RitualValidationError
from sanctum.ritual.constants import DEFAULT_RECURSION_LIMIT, END, START
from sanctum.ritual.graph import Graph, Router, SigilFn, SigilSpec, detect_async, detect_writer
from sanctum.ritual.policy import SigilPolicy
from sanctum.ritual.validation import validate_ritual

if TYPE_CHECKING:
    from sanctum.codex.base import Codex
    from sanctum.ritual.rite import Rite
    from sanctum.wards.base import Ward
    from sanctum.wards.secrets import Secrets

__all__ = ["Ritual"]


def _as_schema(schema: object) -> AetherSchema | None:
    if schema is None or isinstance(schema, AetherSchema):
        return schema
    if isinstance(schema, Mapping):
        return AetherSchema(schema)
    if isinstance(schema, type):
        return AetherSchema.from_class(schema)
    raise TypeError(
        "Ritual(schema=...) takes an AetherSchema, a mapping of conduits or an annotated "
        f"class, got {type(schema).__name__}"
    )


class Ritual:
    """The circle where Sigils are bound before the invocation.

    Ritual — a graph builder. Mutable; builder methods return ``self`` to allow
    chaining. When an AetherSchema is given, every delta key must name a declared
    Conduit and merges through that Conduit's reducer; without a schema, deltas merge by
    plain overwrite. Within a superstep, deltas are applied in Sigil insertion order —
    the order Sigils were bound — so concurrent writes to the same Conduit are
    deterministic.

    A source with several static edges fans out: all targets activate in the next
    superstep. Fan-in uses "any" semantics by default: a Sigil runs as soon as any
    predecessor activates it, and multiple activations within one superstep coalesce
    into a single execution. Binding a Sigil with ``join="all"`` makes it a barrier: it
    waits — across supersteps when branches have uneven lengths — until every static
    predecessor has activated it, then runs once.

    Args:
        schema: An AetherSchema, a mapping accepted by ``AetherSchema(...)``, an
            annotated class (``AetherSchema.from_class``), or None for overwrite merges.

    Raises:
        TypeError: If ``schema`` is none of those.
    """

    def __init__(self, schema: AetherSchema | Mapping[str, Any] | type | None = None) -> None:
        self._schema = _as_schema(schema)
        self._sigils: dict[str, SigilSpec] = {}
        self._edges: dict[str, list[str]] = {}
        self._conditional: dict[str, tuple[Router, Mapping[Hashable, str] | None]] = {}

    @property
    def schema(self) -> AetherSchema | None:
        """The Ritual's AetherSchema, or None."""
        return self._schema

    def add_sigil(
        self,
        name: str,
        fn: SigilFn,
        policy: SigilPolicy | None = None,
        *,
        join: str = "any",
    ) -> Ritual:
        """Bind a Sigil to the Ritual.

        Sigil — a graph node. ``fn`` receives a copy of the full Aether (and, when it
        takes a second positional parameter, a writer) and returns a partial delta to
        merge into the state; it may be sync or async. ``policy`` grants resilience
        (see SigilPolicy) and overrides ``compile(default_policy=...)``. ``join`` sets
        the fan-in semantics: ``"any"`` runs the Sigil as soon as any predecessor
        activates it; ``"all"`` makes it a barrier over its static predecessors —
        activations accumulate across supersteps (and survive Seals) and the Sigil runs
        once when the last predecessor arrives.

        Args:
            name: Unique Sigil name (not START or END).
            fn: The Sigil function.
            policy: Per-Sigil SigilPolicy, or None for the compile default.
            join: ``"any"`` or ``"all"``.

        Returns:
            This Ritual, for chaining.

        Raises:
            RitualValidationError: If ``name`` is START/END, already bound, ``fn`` is not
                callable, or ``join`` is not "any"/"all".
        """
        if name in (START, END):
            raise RitualValidationError(
                f"{name!r} is reserved and cannot name a sigil; choose another name",
                sigils=[name],
            )
        if not isinstance(name, str) or not name:
            raise RitualValidationError(
                f"a sigil name must be a non-empty string, got {name!r}", sigils=[str(name)]
            )
        if name in self._sigils:
            raise RitualValidationError(
                f"sigil {name!r} is already bound; sigil names must be unique", sigils=[name]
            )
        if not callable(fn):
            raise RitualValidationError(
                f"sigil {name!r} needs a callable, got {type(fn).__name__}", sigils=[name]
            )
        if join not in ("any", "all"):
            raise RitualValidationError(
                f"sigil {name!r} has join={join!r}; join must be 'any' or 'all'", sigils=[name]
            )
        if policy is not None and not isinstance(policy, SigilPolicy):
            raise RitualValidationError(
                f"sigil {name!r} has a policy of type {type(policy).__name__}; pass a SigilPolicy",
                sigils=[name],
            )
        self._sigils[name] = SigilSpec(
            name=name,
            fn=fn,
            policy=policy,
            join=join,
            takes_writer=detect_writer(fn),
            is_async=detect_async(fn),
        )
        return self

    def add_edge(self, source: str, target: str) -> Ritual:
        """Trace a fixed path from one Sigil to the next.

        After ``source`` completes, ``target`` activates in the next superstep.
        ``source`` may be START and ``target`` END; cycles are allowed. Several static
        edges from one source fan out; static edges and a conditional edge are mutually
        exclusive on the same source.

        Returns:
            This Ritual, for chaining.

        Raises:
            RitualValidationError: If the edge starts at END, ends at START, duplicates
                an existing edge, or ``source`` already has a conditional edge.
        """
        if source == END:
            raise RitualValidationError(
                f"an edge cannot start at END (edge END -> {target!r})", sigils=[target]
            )
        if target == START:
            raise RitualValidationError(
                f"an edge cannot end at START (edge {source!r} -> START)", sigils=[source]
            )
        targets = self._edges.setdefault(source, [])
        if target in targets:
            raise RitualValidationError(
                f"edge {source!r} -> {target!r} is already traced", sigils=[source, target]
            )
        if source in self._conditional:
            if not targets:
                del self._edges[source]
            raise RitualValidationError(
                f"sigil {source!r} already has a conditional edge; static and conditional "
                "edges cannot share a source",
                sigils=[source, target],
            )
        targets.append(target)
        return self

    def add_conditional_edge(
        self,
        source: str,
        router: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | None = None,
    ) -> Ritual:
        """Trace a branching path decided at invocation time.

        After ``source`` completes, ``router`` receives the full Aether and returns the
        name of the next Sigil (or END). With ``path_map``, the router's return value is
        a key into it and the mapped name is followed (a sequence of names maps each name
        to itself).

        Returns:
            This Ritual, for chaining.

        Raises:
            RitualValidationError: If ``source`` is START or END, ``router`` is not
                callable, or ``source`` already has an outgoing edge.
        """
        if source in (START, END):
            raise RitualValidationError(
                f"a conditional edge cannot start at {source!r}; use set_entry_point() for "
                "entry points",
                sigils=[source],
            )
        if not callable(router):
            raise RitualValidationError(
                f"the router of {source!r} must be callable, got {type(router).__name__}",
                sigils=[source],
            )
        if source in self._conditional or self._edges.get(source):
            raise RitualValidationError(
                f"sigil {source!r} already has an outgoing edge; a conditional edge must be "
                "its only one",
                sigils=[source],
            )
        mapping: Mapping[Hashable, str] | None
        if path_map is None:
            mapping = None
        elif isinstance(path_map, Mapping):
            mapping = dict(path_map)
        elif isinstance(path_map, (list, tuple)):
            mapping = {name: name for name in path_map}
        else:
            raise RitualValidationError(
                f"path_map of {source!r} must be a mapping or a list of names, "
                f"got {type(path_map).__name__}",
                sigils=[source],
            )
        self._conditional[source] = (router, mapping)
        return self

    def set_entry_point(self, name: str) -> Ritual:
        """Mark a Sigil where the invocation begins (``add_edge(START, name)``).

        May be called several times: all entry points activate in the first superstep.

        Returns:
            This Ritual, for chaining.

        Raises:
            RitualValidationError: If ``name`` is already an entry point or is START.
        """
        return self.add_edge(START, name)

    def compile(
        self,
        recursion_limit: int = DEFAULT_RECURSION_LIMIT,
        codex: Codex | None = None,
        default_policy: SigilPolicy | None = None,
        wards: Sequence[Ward] | None = None,
        secrets: Secrets | None = None,
    ) -> Rite:
        """Seal the Ritual into a Rite.

        Validates the graph (see :mod:`sanctum.ritual.validation` for the order of the
        checks) and returns the executable plan. The Ritual stays usable; later changes
        do not affect the returned Rite.

        Args:
            recursion_limit: Maximum supersteps of one call (a run, or one resume)
                before RecursionLimitError; superstep numbers continue across resumes.
            codex: Seal store; with one, every superstep leaves a Seal (resumption,
                interrupt(), time-travel).
            default_policy: Resilience for Sigils bound without their own policy.
            wards: Middleware pipeline, applied in registration order.
            secrets: Masking policy (:class:`~sanctum.wards.secrets.Secrets`): the
                engine masks its values and patterns in every delta (before the Wards),
                Seal, Omen and error message of the Rite's runs.

        Returns:
            The compiled Rite.

        Raises:
            RitualValidationError: On the first violation found, naming the offending
                Sigils, or when ``recursion_limit`` is not a positive int.
            TypeError: If ``secrets`` is not a Secrets.
        """
        from sanctum.ritual.rite import Rite

        if isinstance(recursion_limit, bool) or not isinstance(recursion_limit, int):
            raise RitualValidationError(
                f"recursion_limit must be a positive int, got {recursion_limit!r}"
            )
        if recursion_limit < 1:
            raise RitualValidationError(
                f"recursion_limit must be a positive int, got {recursion_limit!r}"
            )
        if default_policy is not None and not isinstance(default_policy, SigilPolicy):
            raise RitualValidationError(
                f"default_policy must be a SigilPolicy, got {type(default_policy).__name__}"
            )
        edges = {source: list(targets) for source, targets in self._edges.items() if targets}
        validate_ritual(self._sigils, edges, self._conditional, default_policy)
        graph = Graph(
            dict(self._sigils), edges, dict(self._conditional), self._schema, default_policy
        )
        return Rite(
            graph,
            codex=codex,
            wards=tuple(wards or ()),
            recursion_limit=recursion_limit,
            secrets=secrets,
        )
