"""Pieces every ritual-file model shares: strict models, expression and target fields,
policies, routes, and the keys every sigil has.

Private to :mod:`sanctum.ritualfile`; the public names are re-exported by
:mod:`sanctum.ritualfile.models`. The sigil kinds (:mod:`sanctum.ritualfile.kinds`)
build their models on :class:`SigilBase`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BackoffSpec",
    "Expression",
    "Next",
    "PolicyRef",
    "PolicySpec",
    "Route",
    "SigilBase",
    "Strict",
    "Target",
    "Template",
    "ValueType",
]

ValueType = Literal["string", "integer", "number", "boolean", "array", "object"]
Expression = Annotated[
    str,
    Field(
        description="A bare expression (Jinja2 syntax, no braces) evaluated against the "
        "Aether: conduit and input names, e.g. \"category == 'billing'\"."
    ),
]
Template = Annotated[
    str,
    Field(
        description="A text template: literal text with {{ expression }} parts "
        "evaluated against the Aether (Jinja2, sandboxed)."
    ),
]
Target = Annotated[
    str, Field(description="A sigil name, or END to finish the ritual on this path.")
]
Next = Annotated[
    str | list[str] | None,
    Field(
        description="Where to go after this sigil: one sigil name, a list (fan-out: all "
        "run in the next superstep), or END."
    ),
]


class Strict(BaseModel):
    """A model that forbids unknown keys, validates strictly and is frozen."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, defer_build=True, allow_inf_nan=False
    )


# --------------------------------------------------------------------------- policies


class BackoffSpec(Strict):
    """Exponential backoff between retries: min(cap, base * 2**(n-1)) seconds."""

    base: float = Field(0.1, ge=0, description="First delay in seconds.")
    cap: float = Field(5.0, ge=0, description="Longest delay in seconds.")
    jitter: bool = Field(True, description="Scale each delay by a random factor in [0.5, 1].")


class PolicySpec(Strict):
    """A SigilPolicy — timeout, retries with backoff, and an on_error fallback."""

    timeout: float | None = Field(None, gt=0, description="Bound on each attempt, in seconds.")
    retries: int = Field(0, ge=0, le=100, description="Extra attempts after a failure.")
    backoff: BackoffSpec | None = Field(None, description="Delay between retries.")
    retry_on: list[str] | None = Field(
        None,
        description="Exception class names worth retrying (builtins or sanctum.errors), "
        "e.g. [OracleTimeoutError]; default: any exception.",
    )
    on_error: str | None = Field(
        None, description="Sigil to jump to once the attempts are exhausted."
    )


PolicyRef = Annotated[
    PolicySpec | str | None,
    Field(description="A policy, or the name of one under `policies:`."),
]


# --------------------------------------------------------------------------- sigils


class Route(Strict):
    """One conditional edge: go `to` when `when` holds (omit `when` for the default)."""

    when: Expression | None = Field(
        None, description="A boolean expression; omit it on the final, default route."
    )
    to: Target


class SigilBase(Strict):
    """The keys every sigil has, whatever its kind (a kind's model adds its own)."""

    description: str = Field("", description="What this sigil does.")
    next: Next = None
    routes: list[Route] | None = Field(
        None,
        description="Conditional edges, checked in order (first match wins); the last "
        "route has no `when`.",
    )
    join: Literal["any", "all"] = Field(
        "any",
        description="all: wait until every static predecessor has run (a barrier).",
    )
    policy: PolicyRef = None
