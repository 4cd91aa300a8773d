"""The voice consulted during the invocation, and the shape of its answers.

Oracle — an LLM adapter. An Oracle receives a message transcript (dicts with ``role``
and ``content``) plus the JSON schemas of the Spells (tools) it may request, and
answers with an :class:`OracleResponse`: free text, zero or more :class:`SpellCall`
requests, and usage counters. ``arcana`` identifies the concrete model. All
implementations are local-first — the core never assumes proprietary APIs.

Transcript conventions (translated to each wire format by the adapters):

* ``{"role": "system" | "user", "content": str}``
* ``{"role": "assistant", "content": str, "spell_calls": [{"spell", "arguments",
  "call_id"}], "usage": {...}}`` — ``spell_calls`` and ``usage`` only when present.
* ``{"role": "spell", "name": str, "call_id": str | None, "content": str}`` — the
  result (or error text) of casting a Spell, sent back as a tool message.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sanctum.errors import OracleResponseError

__all__ = ["Message", "Oracle", "OracleResponse", "SpellCall", "StreamingOracle"]

Message = dict[str, Any]
"""One entry of the transcript: at least ``role`` and ``content``."""


@dataclass(slots=True)
class SpellCall:
    """The Oracle's request to cast one Spell.

    ``spell`` names the Spell, ``arguments`` matches its JSON schema (or holds
    ``{"__malformed_json__": raw_text}`` when the model's arguments did not parse), and
    ``call_id`` correlates the request with the result message injected back into the
    transcript.
    """

    spell: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None

    def to_message(self) -> dict[str, Any]:
        """The call as stored in an assistant message's ``spell_calls`` list."""
        return {"spell": self.spell, "arguments": dict(self.arguments), "call_id": self.call_id}


@dataclass(slots=True)
class OracleResponse:
    """One full answer from the Oracle.

    ``text`` is the assistant's message; ``spell_calls`` the Spells it wants cast before
    continuing (empty means the answer is final); ``usage`` free-form counters (e.g.
    ``prompt_tokens``, ``completion_tokens``).
    """

    text: str = ""
    spell_calls: list[SpellCall] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)


class Oracle(ABC):
    """The abstract voice every Entity consults.

    Implementations set ``arcana`` (the concrete model identifier) and provide both a
    complete-answer path (:meth:`generate`) and a token stream
    (:meth:`stream_generate`). Implementations: ScriptedOracle (deterministic, for
    tests), OllamaOracle (``sanctum.oracle.ollama``), OpenAICompatibleOracle
    (``sanctum.oracle.openai_compat``), LlamaCppOracle (``sanctum.oracle.llamacpp``)
    and TransformersOracle (``sanctum.oracle.transformers``).
    """

    arcana: str = "unknown"
    """Identifier of the concrete model behind this Oracle."""

    @abstractmethod
    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer the transcript in one piece.

        ``messages`` is the conversation so far; ``spells`` the JSON schemas (name,
        description, parameters) of the Spells the Oracle may request via spell_calls.

        Raises:
            OracleError: A subclass naming the endpoint and the likely fix.
        """

    @abstractmethod
    def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        """Answer the transcript as an async stream of text chunks.

        Yields incremental text; pair it with a Sigil's writer to push tokens through
        ``astream``.
        """

    constrains_output: bool = False
    """Whether :meth:`generate_constrained` can hold the model to a JSON Schema."""

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """Answer the transcript with text that is one JSON value valid against ``schema``.

        Constrained decoding (a grammar, ``response_format``, Ollama's ``format``): the
        backend samples only tokens that keep the output valid. No tools are sent; the
        answer's ``text`` is the JSON text and ``spell_calls`` is empty. Oracles that
        can do it set :attr:`constrains_output` and override this method.

        Args:
            messages: The transcript (``list[Message]``).
            schema: A JSON Schema (``dict``) the whole answer must satisfy.

        Returns:
            The answer; ``text`` holds the JSON (cut short only by a token limit).

        Raises:
            OracleResponseError: The backend cannot or will not constrain its output
                (the default: this Oracle has no such mechanism).
        """
        raise OracleResponseError(
            f"the Oracle {self.arcana!r} ({type(self).__name__}) cannot constrain its "
            "output to a JSON Schema; use spell_calling='prompted' or 'native'",
            endpoint=None,
            status=None,
            body="",
        )

    async def aclose(self) -> None:
        """Release connections held by the Oracle. The default does nothing."""


class StreamingOracle(Oracle):
    """An Oracle that streams whole responses: text chunks, then the OracleResponse.

    Subclasses implement :meth:`stream_response`; ``stream_generate`` is derived from
    it (its text chunks). The production adapters are StreamingOracles, as is the
    contract :class:`~sanctum.oracle.scripted.ScriptedOracle` mirrors.
    """

    @abstractmethod
    def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream the answer: non-empty text chunks, then one :class:`OracleResponse`.

        Raises:
            OracleError: A subclass naming the endpoint and the likely fix.
        """

    async def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        """Answer the transcript as a stream of text chunks (:meth:`stream_response`'s).

        Raises:
            OracleError: As :meth:`stream_response`.
        """
        async for item in self.stream_response(messages, spells):
            if isinstance(item, str):
                yield item
