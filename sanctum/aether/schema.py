"""The Conduits are drawn: the shape the shared energy must take.

State schema. A Conduit (a state channel) declares how one key of the Aether (the
state dict) merges deltas: its reducer. An AetherSchema is the complete set of
Conduits a Ritual operates on; with one, every delta key must name a declared Conduit
and merges through that Conduit's reducer instead of plain overwrite.

The reserved Conduit ``__errors__`` (see :data:`ERRORS_CONDUIT`) is always accepted
and merges with ``append``: the scheduler records on_error failures there.
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, get_args, get_origin

from sanctum.aether.reducers import Reducer, append, overwrite
from sanctum.errors import AetherValidationError

__all__ = ["ERRORS_CONDUIT", "NO_DEFAULT", "Aether", "AetherSchema", "Conduit"]

Aether = dict[str, Any]
"""The Aether — the shared state dict, keyed by Conduit name."""

ERRORS_CONDUIT = "__errors__"
"""Reserved Conduit where failures diverted by ``on_error`` are appended."""


class _NoDefault:
    """The type of :data:`NO_DEFAULT` (a Conduit that starts absent)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: typing.Final = _NoDefault()
"""Marks a Conduit without a default: the key is absent until something writes it."""


@dataclass(frozen=True, slots=True)
class Conduit:
    """One channel of the Aether and the way it merges new energy.

    Conduit — a state channel with a reducer. ``reducer`` ``(current, update) -> new``
    is applied when a Sigil's delta writes to this key; it defaults to overwrite. The
    reducer is skipped when the key is not yet present in the Aether: the delta value
    is set directly, so custom reducers never receive a missing current value.
    ``type`` is informational (documentation and the YAML layer), never enforced.
    ``default`` (optional) is the value the Conduit holds at the start of a fresh
    Invocation when the input does not set it — e.g. ``[]`` for a transcript, so the
    first Sigil can read it; a deep copy is taken per Invocation.
    """

    reducer: Reducer = overwrite
    type: Any = field(default=Any, compare=False)
    default: Any = field(default=NO_DEFAULT, compare=False)


def _conduit_from(spec: object) -> Conduit:
    if isinstance(spec, Conduit):
        return spec
    if get_origin(spec) is Annotated:
        base, *metadata = get_args(spec)
        for item in metadata:
            if callable(item):
                return Conduit(reducer=item, type=base)
        return Conduit(type=base)
    return Conduit(type=spec)


_ERRORS = Conduit(reducer=append, type=list)


class AetherSchema:
    """The declared shape of the shared energy.

    AetherSchema — the state schema. Maps each Aether key to its Conduit. Values in the
    constructor mapping may be Conduit instances, ``Annotated[T, reducer]`` forms, or
    plain types (which default to overwrite)::

        AetherSchema({
            "messages": Conduit(reducer=append),
            "score": Annotated[int, add],
            "verdict": str,
        })

    Delta application is deterministic: within a superstep, deltas are applied in Sigil
    insertion order, and each key merges through its Conduit's reducer.
    """

    __slots__ = ("_conduits", "_defaults", "_reducers")

    def __init__(self, conduits: Mapping[str, object]) -> None:
        self._conduits: dict[str, Conduit] = {
            str(name): _conduit_from(spec) for name, spec in conduits.items()
        }
        self._reducers: dict[str, Reducer] = {name: c.reducer for name, c in self._conduits.items()}
        self._reducers.setdefault(ERRORS_CONDUIT, _ERRORS.reducer)
        self._defaults: dict[str, Any] = {
            name: c.default for name, c in self._conduits.items() if c.default is not NO_DEFAULT
        }

    def __repr__(self) -> str:
        return f"AetherSchema({sorted(self._conduits)!r})"

    def __contains__(self, key: object) -> bool:
        return key in self._reducers

    @property
    def conduits(self) -> dict[str, Conduit]:
        """A copy of the mapping from Aether key to its Conduit."""
        return dict(self._conduits)

    def initial(self, input: Mapping[str, Any]) -> Aether:
        """The Aether a fresh Invocation starts from: Conduit defaults under ``input``.

        Every Conduit declared with a ``default`` that ``input`` does not set gets a
        deep copy of its default. Returns a new dict; ``input`` is not mutated.
        """
        if not self._defaults:
            return dict(input)
        start = {k: copy.deepcopy(v) for k, v in self._defaults.items() if k not in input}
        start.update(input)
        return start

    @classmethod
    def from_class(cls, source: type) -> AetherSchema:
        """Read the Conduits from a class's annotations.

        Sugar for declaring the schema as an annotated class::

            class ChantAether:
                messages: Annotated[list, append]
                score: int  # plain annotation -> overwrite

        ``Annotated[T, reducer]`` fields use the first callable metadata item as the
        Conduit's reducer. A class attribute's value (``messages: list = []``) becomes
        the Conduit's default.
        """
        hints = typing.get_type_hints(source, include_extras=True)
        conduits: dict[str, Conduit] = {}
        for name, hint in hints.items():
            conduit = _conduit_from(hint)
            if name in vars(source) and not isinstance(vars(source)[name], Conduit):
                conduit = Conduit(conduit.reducer, conduit.type, vars(source)[name])
            conduits[name] = conduit
        return cls(conduits)

    def _undeclared(self, keys: Iterable[str]) -> list[str]:
        reducers = self._reducers
        return sorted(str(k) for k in keys if k not in reducers)

    def validate_input(self, input: Mapping[str, Any]) -> None:
        """Check that the initial Aether only uses declared Conduits.

        Raises:
            AetherValidationError: If ``input`` contains keys not declared in the schema.
        """
        bad = self._undeclared(input)
        if bad:
            raise AetherValidationError(
                f"input writes undeclared conduit(s) {', '.join(map(repr, bad))}; "
                f"declared: {', '.join(sorted(self._conduits)) or '(none)'}",
                keys=bad,
            )

    def validate_updates(self, updates: Mapping[str, Any]) -> None:
        """Check that resumption ``updates`` only name declared Conduits.

        Raises:
            AetherValidationError: If ``updates`` contains undeclared keys.
        """
        bad = self._undeclared(updates)
        if bad:
            raise AetherValidationError(
                f"updates write undeclared conduit(s) {', '.join(map(repr, bad))}; "
                f"declared: {', '.join(sorted(self._conduits)) or '(none)'}",
                keys=bad,
            )

    def apply_delta(
        self, aether: Mapping[str, Any], delta: Mapping[str, Any], *, sigil: str
    ) -> Aether:
        """Merge one Sigil's delta into the Aether through the Conduits.

        Each delta key must name a declared Conduit; its value merges via the Conduit's
        reducer, or is set directly when the key is not yet present. Returns a new dict;
        ``aether`` is not mutated.

        Args:
            aether: Current state.
            delta: Partial update returned by the Sigil.
            sigil: Name of the Sigil that produced the delta, for error attribution.

        Raises:
            AetherValidationError: If the delta writes to a key not declared in the
                schema; the message names the Sigil.
        """
        new = dict(aether)
        self._merge_into(new, delta, sigil)
        return new

    def apply_deltas(
        self, aether: Mapping[str, Any], deltas: Iterable[tuple[str, Mapping[str, Any]]]
    ) -> Aether:
        """Merge one superstep's deltas into the Aether, deterministically.

        Deltas are applied strictly in the order given as ``(sigil_name, delta)`` pairs;
        the engine passes them in Sigil insertion order, so concurrent writes to the same
        Conduit fold in a fixed order. Returns a new dict; ``aether`` is not mutated.

        Raises:
            AetherValidationError: If any delta writes an undeclared key.
        """
        new = dict(aether)
        for sigil, delta in deltas:
            self._merge_into(new, delta, sigil)
        return new

    def _merge_into(self, target: dict[str, Any], delta: Mapping[str, Any], sigil: str) -> None:
        reducers = self._reducers
        for key, value in delta.items():
            reducer = reducers.get(key)
            if reducer is None:
                bad = self._undeclared(delta)
                raise AetherValidationError(
                    f"sigil {sigil!r} wrote undeclared conduit(s) "
                    f"{', '.join(map(repr, bad))}; declared: "
                    f"{', '.join(sorted(self._conduits)) or '(none)'}",
                    sigil=sigil,
                    keys=bad,
                )
            if key in target and reducer is not overwrite:
                target[key] = reducer(target[key], value)
            else:
                target[key] = value
