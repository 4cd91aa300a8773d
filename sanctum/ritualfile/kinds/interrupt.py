"""The ``interrupt`` sigil: pause for a person until a condition holds."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from pydantic import Field

from sanctum.ritual.kinds import interrupt_sigil
from sanctum.ritualfile._common import Expression, SigilBase, Template
from sanctum.ritualfile.kinds.base import SigilKind, register

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker

__all__ = ["InterruptKind", "InterruptSigil"]


class InterruptSigil(SigilBase):
    """Pause for a person until a condition holds."""

    interrupt: Template
    until: Expression = Field(
        description="Boolean expression; when it holds the sigil lets the run pass "
        "(resume with updates that make it true)."
    )


class InterruptKind(SigilKind):
    """``interrupt:`` — a question shown to a person, and the condition to pass."""

    key = "interrupt"
    model = InterruptSigil
    label = "interrupt"

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        checker.template(self.path(name, "interrupt"), sigil.interrupt, name, known)
        checker.expression(self.path(name, "until"), sigil.until, name, known)

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        return interrupt_sigil(
            builder.text(sigil.interrupt, name, "interrupt"),
            builder.cond(sigil.until, name, "until", self.path(name, "until")),
        )


KIND = register(InterruptKind())
