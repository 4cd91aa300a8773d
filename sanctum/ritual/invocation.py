"""Where a Sigil stands: the Invocation and the superstep it runs in.

A Sigil whose signature declares a parameter named ``invocation`` receives an
:class:`InvocationContext` for every activation (``def fn(aether, invocation)``,
``async def fn(aether, writer, invocation)``, ``def fn(aether, *, invocation)``); a
keyword-only parameter named ``writer`` receives the writer
(``async def fn(aether, *, writer)``).
Invocation — one run, keyed by ``invocation_id``. The context is how a Sigil derives
stable ids from the run it belongs to (a child run's id, an idempotency key for an
outside call) without reading them from the Aether.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["INVOCATION_PARAMETER", "InvocationContext", "invocation_call"]

INVOCATION_PARAMETER = "invocation"
"""The parameter name that asks for an :class:`InvocationContext`."""


@dataclass(frozen=True, slots=True)
class InvocationContext:
    """The Invocation a Sigil activation belongs to.

    Immutable. ``invocation_id`` is the run's id (the one Seals are filed under);
    ``superstep`` the 1-based number of the superstep running the Sigil, counted
    across resumptions as Seals count them (a resumed run continues the count);
    ``sigil`` the running Sigil's name ("" when built by hand).
    """

    invocation_id: str
    superstep: int
    sigil: str = field(default="", compare=False)  # 0.x programs compare the two fields

    @property
    def idempotency_key(self) -> str:
        """``"invocation_id:superstep:sigil"`` — the same for every attempt of this
        activation, and for the re-run of an unfinished superstep after a crash or a
        worker's takeover, so a side effect outside sanctum (a payment, a mail) can be
        deduplicated by the system that receives it (idempotency key)."""
        return f"{self.invocation_id}:{self.superstep}:{self.sigil}"


SigilCall = Callable[[dict[str, Any], Any, InvocationContext], Any]
"""``call(aether, writer, invocation)``: a Sigil function adapted to one call shape."""


def invocation_call(fn: Callable[..., Any], takes_writer: bool) -> SigilCall | None:
    """Adapt a Sigil function that asks for its context or its writer by name.

    The Aether goes to the first parameter. The context goes to the parameter named
    ``invocation`` (by keyword, or by position when it is positional-only). The writer
    goes, when ``takes_writer`` is true, to the parameter ``detect_writer`` counted
    (the first other positional one without a default, or one named ``writer``) — by
    keyword when it can be named, so its place before or after ``invocation`` does not
    matter — and otherwise to a keyword-only parameter named ``writer``, if any
    (``async def fn(aether, *, writer)``).

    Args:
        fn: The Sigil function (a function, bound method, partial or callable object).
        takes_writer: Whether ``fn`` asked for a writer by position (``detect_writer``).

    Returns:
        ``call(aether, writer, invocation)``, or None when ``fn`` needs no adapting:
        it has no parameter named ``invocation`` after its first and no keyword-only
        ``writer`` (or no readable signature).
    """
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if len(parameters) < 2 or parameters[0].kind not in _POSITIONAL:
        return None
    later = parameters[1:]
    target = next(
        (p for p in later if p.name == INVOCATION_PARAMETER and p.kind not in _VARIADIC), None
    )
    if takes_writer:
        pen = next(
            (
                p
                for p in later
                if p is not target
                and p.kind in _POSITIONAL
                and (p.default is inspect.Parameter.empty or p.name == "writer")
            ),
            None,
        )
    else:
        pen = next(
            (p for p in later if p.name == "writer" and p.kind is inspect.Parameter.KEYWORD_ONLY),
            None,
        )
        if target is None and pen is None:
            return None
    if target is None and takes_writer:
        return None  # a positional writer alone: the runner's plain call does it
    if target is not None and target.kind is inspect.Parameter.POSITIONAL_ONLY:
        # Positional-only: everything up to it goes by position, in signature order.
        order = later[: later.index(target) + 1]

        def by_position(aether: dict[str, Any], writer: Any, invocation: InvocationContext) -> Any:
            return fn(aether, *[invocation if p is target else writer for p in order])

        return by_position
    writer_by_position = pen is not None and pen.kind is inspect.Parameter.POSITIONAL_ONLY
    writer_name = pen.name if pen is not None and not writer_by_position else None
    wants_context = target is not None

    def call(aether: dict[str, Any], writer: Any, invocation: InvocationContext) -> Any:
        named: dict[str, Any] = {}
        if writer_name is not None:
            named[writer_name] = writer
        if wants_context:
            named[INVOCATION_PARAMETER] = invocation
        if writer_by_position:
            return fn(aether, writer, **named)
        return fn(aether, **named)

    return call


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
