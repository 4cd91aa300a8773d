"""Ready-made Sigils for common ritual steps: writing values, pausing, routing.

Public factories a library user can call as well as the YAML compiler does (the ritual
file is sugar over these): :func:`set_sigil` writes computed values, :func:`interrupt_sigil`
pauses the Invocation for a person until a condition holds, and :func:`first_match_router`
turns ordered ``(condition, target)`` pairs into a router for
``Ritual.add_conditional_edge``. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sanctum.ritual.interrupt import interrupt

__all__ = ["first_match_router", "interrupt_sigil", "set_sigil"]

AetherFn = Callable[[Mapping[str, Any]], Any]
"""A function of the Aether (the state dict)."""


def set_sigil(
    values: Mapping[str, Callable[[Mapping[str, Any]], Any]],
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """Build a Sigil that writes one computed value per Conduit.

    Sigil — a node. Every function receives the Aether as it was when the Sigil began
    (they do not see each other's results); the delta holds one key per entry.

    Args:
        values: Conduit name -> function of the Aether returning the value to write.

    Returns:
        A synchronous Sigil ``fn(aether) -> dict[str, Any]``.
    """
    computed = dict(values)

    def set_values(aether: Mapping[str, Any]) -> dict[str, Any]:
        return {key: fn(aether) for key, fn in computed.items()}

    return set_values


def interrupt_sigil(
    reason: str | Callable[[Mapping[str, Any]], str],
    until: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """Build a Sigil that pauses the Invocation until a condition holds.

    Interrupt — a human-in-the-loop pause. When ``until(aether)`` is true the Sigil lets
    the run pass (returning an empty delta); otherwise it calls ``interrupt()`` with the
    reason, so the caller resumes later with ``updates`` that make the condition true.
    Without ``until`` the Sigil pauses every time it runs.

    Args:
        reason: The question for the person, or a function of the Aether rendering it.
        until: Condition on the Aether that lets the resumed run pass.

    Returns:
        A synchronous Sigil ``fn(aether) -> dict[str, Any]``.
    """

    def pause(aether: Mapping[str, Any]) -> dict[str, Any]:
        if until is not None and until(aether):
            return {}
        interrupt(reason(aether) if callable(reason) else reason)

    return pause


def first_match_router(
    routes: Sequence[tuple[Callable[[Mapping[str, Any]], bool] | None, str]],
) -> Callable[[Mapping[str, Any]], str]:
    """Build a router that follows the first route whose condition holds.

    Args:
        routes: ``(condition, target)`` pairs checked in order; a ``None`` condition
            always matches (use it last, as the default). Targets are Sigil names or
            ``END``.

    Returns:
        A router ``fn(aether) -> target`` for ``Ritual.add_conditional_edge``.

    Raises:
        ValueError: If ``routes`` is empty. The router itself raises ``LookupError``
            when no condition holds and there is no default.
    """
    ordered = list(routes)
    if not ordered:
        raise ValueError("first_match_router needs at least one (condition, target) route")

    def route(aether: Mapping[str, Any]) -> str:
        for condition, target in ordered:
            if condition is None or condition(aether):
                return target
        raise LookupError(
            "no route matched and there is no default route; add a final route without a condition"
        )

    return route
