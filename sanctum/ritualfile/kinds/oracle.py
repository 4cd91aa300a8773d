"""The ``oracle`` sigil: consult an oracle (LLM adapter) once with a templated prompt."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from pydantic import Field

from sanctum.ritualfile._common import SigilBase, Template
from sanctum.ritualfile.kinds.base import SigilKind, placeholder, register

if TYPE_CHECKING:
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker
    from sanctum.ritualfile.loader import YamlPath

__all__ = ["OracleKind", "OracleSigil", "check_oracle_use"]


class OracleSigil(SigilBase):
    """Consult an oracle once with a templated prompt."""

    oracle: str = Field(description="Name of an oracle under `oracles:`.")
    prompt: Template
    output: str = Field(description="Conduit that receives the answer's text.")
    system: Template | None = Field(None, description="System prompt template.")
    messages: str | None = Field(
        None,
        description="Conduit (append) that also receives the assistant message with "
        "its usage counters, for UsageWard.",
    )
    stream: bool = Field(True, description="Stream tokens as TokenEmitted omens.")


def check_oracle_use(
    checker: Checker, base: YamlPath, name: str, sigil: Any, known: Collection[str]
) -> None:
    """Check an oracle consultation: the oracle exists, its templates compile.

    Shared by the ``oracle`` sigil and a scatter's inline oracle.

    Args:
        checker: The file's Checker.
        base: The document path of the mapping holding ``oracle``/``prompt``/``system``.
        name: The sigil's name (for messages).
        sigil: A model with ``oracle``, ``prompt`` and ``system``.
        known: Names the templates may use.
    """
    checker.ref(
        (*base, "oracle"), sigil.oracle, checker.oracles, "oracle", "; define it under `oracles:`"
    )
    checker.template((*base, "prompt"), sigil.prompt, name, known)
    if sigil.system is not None:
        checker.template((*base, "system"), sigil.system, name, known)


class OracleKind(SigilKind):
    """``oracle:`` + ``prompt:`` — one model call, its text written to ``output``."""

    key = "oracle"
    model = OracleSigil
    label = "oracle"

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        check_oracle_use(checker, self.path(name), name, sigil, known)
        checker.conduit(self.path(name, "output"), sigil.output, name)
        if sigil.messages is not None:
            checker.conduit(self.path(name, "messages"), sigil.messages, name)

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        oracle = builder.oracle(sigil.oracle, name)
        if oracle is None:
            return placeholder
        from sanctum.grimoire.sigils import oracle_sigil  # only rituals that consult one

        return oracle_sigil(
            oracle,
            builder.text(sigil.prompt, name, "prompt"),
            sigil.output,
            system=None if sigil.system is None else builder.text(sigil.system, name, "system"),
            stream_tokens=sigil.stream,
            messages=sigil.messages,
            append_output=builder.reducers.get(sigil.output) == "append",
            scrub=builder.secrets.mask if builder.secrets else None,
            secrets=builder.secrets or None,
        )


KIND = register(OracleKind())
