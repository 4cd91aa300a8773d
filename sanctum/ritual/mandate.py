"""The Mandate: who a run acts for, given by the host and never by the model.

Mandate — the run context (tool context) of one Invocation: the principal the run acts
for, their roles, the record being worked on and any further attributes. It is an
argument of each run (``rite.ainvoke(..., mandate=...)``, fresh or resumed), held in a
:class:`contextvars.ContextVar` while the run lasts: asyncio tasks and
``asyncio.to_thread`` copy context variables, so every Sigil, Circle and Spell of a run
sees the Mandate of its own run, even when two Invocations run concurrently in one
process. A Mandate is never written to the Aether, to Seals or to traces; only its
principal goes into Seal metadata (``mandate_principal``), to record who started or
resumed a run.

The module also holds the pause that keeps part of a Sigil's work: an Interrupt whose
``keep`` delta is merged into the Aether of the Seal it leaves, so the Sigil resumes
from where it paused instead of from scratch (the summon loop's approval gate uses it
when it runs inside a Circle).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NoReturn

from sanctum.errors import Interrupt

__all__ = [
    "PRINCIPAL_KEY",
    "KeepingInterrupt",
    "Mandate",
    "current_mandate",
    "interrupt_keeping",
    "using_mandate",
]

PRINCIPAL_KEY = "mandate_principal"
"""The Seal metadata key that records the principal a run acted for."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _EMPTY if not value else MappingProxyType(dict(value))


@dataclass(frozen=True, slots=True)
class Mandate:
    """Who a run acts for, as the host (never the model) says.

    Mandate — run context. Immutable; compared by value.

    Attributes:
        principal: The signed-in person or service the run acts for (a non-empty id).
        roles: The roles they hold (a role-restricted Spell needs one of them).
        subject: The record being worked on (``{"ticket": "T-7"}``), read-only.
        attrs: Anything else the host's Spells need (tenant, locale), read-only.

    Raises:
        ValueError: If ``principal`` is empty or not a string, or a role is not a
            non-empty string.
    """

    principal: str
    roles: frozenset[str] = frozenset()
    subject: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    attrs: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        if not isinstance(self.principal, str) or not self.principal.strip():
            raise ValueError(f"a Mandate needs a non-empty principal id, not {self.principal!r}")
        given: Any = self.roles  # a bare string is one role, not its letters
        roles = frozenset([given] if isinstance(given, str) else given)
        bad = [r for r in roles if not isinstance(r, str) or not r.strip()]
        if bad:
            raise ValueError(f"Mandate roles must be non-empty strings, not {bad[0]!r}")
        object.__setattr__(self, "roles", roles)
        object.__setattr__(self, "subject", _frozen(self.subject))
        object.__setattr__(self, "attrs", _frozen(self.attrs))

    def __repr__(self) -> str:
        # The subject and attrs may hold personal data: a repr in a log names only who.
        return f"Mandate(principal={self.principal!r}, roles={sorted(self.roles)!r})"

    def holds(self, roles: Iterable[str] | None) -> bool:
        """Whether this Mandate may use something restricted to ``roles``.

        Args:
            roles: The allowed roles; ``None`` means anyone.

        Returns:
            True when ``roles`` is None or shares at least one role with the Mandate.
        """
        return roles is None or not self.roles.isdisjoint(roles)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Mandate:
        """Build a Mandate from a JSON object (a ``--mandate-file``).

        Args:
            data: ``{"principal": str, "roles": [str], "subject": {...}, "attrs": {...}}``;
                only ``principal`` is required.

        Returns:
            The Mandate.

        Raises:
            ValueError: If a field has the wrong type or an unknown key is present.
        """
        unknown = sorted(set(data) - {"principal", "roles", "subject", "attrs"})
        if unknown:
            raise ValueError(
                f"unknown mandate field {unknown[0]!r}; use principal, roles, subject, attrs"
            )
        roles = data.get("roles") or []
        if not isinstance(roles, list):
            raise ValueError("mandate field 'roles' must be a list of strings")
        for key in ("subject", "attrs"):
            if data.get(key) is not None and not isinstance(data[key], Mapping):
                raise ValueError(f"mandate field {key!r} must be an object")
        return cls(
            principal=data.get("principal", ""),
            roles=frozenset(roles),
            subject=data.get("subject") or {},
            attrs=data.get("attrs") or {},
        )


_CURRENT: contextvars.ContextVar[Mandate | None] = contextvars.ContextVar(
    "sanctum_mandate", default=None
)


def current_mandate() -> Mandate | None:
    """The Mandate of the run the caller belongs to, or None when none was given.

    Call it from a ``call`` Sigil or any code a Sigil or Spell runs; it sees its own
    run's Mandate even when several Invocations run concurrently.
    """
    return _CURRENT.get()


@contextmanager
def using_mandate(mandate: Mandate | None) -> Iterator[None]:
    """Make ``mandate`` the current one for the block (None: leave the current one).

    Args:
        mandate: The Mandate of the run about to be performed.

    Raises:
        TypeError: If ``mandate`` is neither a Mandate nor None.
    """
    if mandate is None:
        yield
        return
    if not isinstance(mandate, Mandate):
        raise TypeError(f"mandate= needs a sanctum Mandate, got {type(mandate).__name__}")
    token = _CURRENT.set(mandate)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class KeepingInterrupt(Interrupt):
    """An Interrupt that keeps part of the pausing Sigil's delta in its Seal.

    ``keep`` is merged (through the Conduit reducers) into the Aether the pause Seal
    stores, so the Sigil, run again on resume, finds the work it did before pausing.
    """

    def __init__(self, reason: str, keep: Mapping[str, Any]) -> None:
        super().__init__(reason)
        self.keep: dict[str, Any] = dict(keep)


def interrupt_keeping(reason: str, keep: Mapping[str, Any]) -> NoReturn:
    """Pause the Invocation, keeping ``keep`` in the Aether of the pause Seal.

    Args:
        reason: The question put to a person.
        keep: A delta (``{conduit: value}``) to keep; it must fit the Rite's Conduits.

    Raises:
        KeepingInterrupt: Always.
    """
    raise KeepingInterrupt(str(reason), keep)
