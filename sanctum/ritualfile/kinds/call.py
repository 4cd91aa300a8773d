"""The ``call`` sigil: run a Python callable ``module:function`` on the Aether."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from pydantic import Field

from sanctum.ritualfile._common import SigilBase
from sanctum.ritualfile.kinds.base import SigilKind, register

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker

__all__ = ["CallKind", "CallSigil"]


class CallSigil(SigilBase):
    """Run a Python callable ``module:function`` (sync or async) on the Aether."""

    call: str = Field(
        description="'module:function', the module found next to the ritual file; the "
        "function takes the Aether (and optionally a writer) and returns a delta."
    )


class CallKind(SigilKind):
    """``call:`` — user code; imported only when the caller resolves (never by validate)."""

    key = "call"
    model = CallSigil
    label = "call"

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        if not checker.is_reference(sigil.call):
            checker.problems.add(
                self.path(name, "call"),
                f"`call` must be 'module:function' (a module next to the ritual file), "
                f"got {sigil.call!r}",
            )

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        return builder.call(self.path(name, "call"), sigil.call)


KIND = register(CallKind())
