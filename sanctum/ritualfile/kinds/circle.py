"""The ``circle`` sigil: mount another ritual file as a sub-graph (a Circle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import Field

from sanctum.ritual import circle
from sanctum.ritualfile._common import SigilBase
from sanctum.ritualfile.kinds.base import SigilKind, register

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder

__all__ = ["CircleKind", "CircleSigil"]


class CircleSigil(SigilBase):
    """Mount another ritual file as a sub-graph (a Circle)."""

    circle: str = Field(description="Path of the ritual file, relative to this one.")


class CircleKind(SigilKind):
    """``circle:`` — its file is loaded and checked by ``load_ritual`` (it needs the
    chain of files, to refuse cycles), so this kind has no checks of its own."""

    key = "circle"
    model = CircleSigil
    label = "circle"

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        return circle(name, builder.circle_rite(name))


KIND = register(CircleKind())
