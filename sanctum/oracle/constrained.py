"""Holding a small voice to the shape of a spell: constrained spell calling.

ConstrainedSpellCalling wraps an Oracle (LLM adapter) and asks it for output
constrained to one JSON Schema (:func:`spell_call_schema`) that admits exactly a
final answer ``{"answer": text}`` or one call ``{"spell": name, "arguments": {...}}``
of a Spell (tool) of the Tome, with arguments valid for that Spell's parameters.
Each backend enforces it with its own mechanism (llama-cpp-python's grammar,
``response_format`` on OpenAI-compatible servers, Ollama's ``format``), so even a
135M-parameter model cannot write a malformed call or name a Spell that does not
exist. A backend that cannot or will not constrain its output makes the wrapper fall
back to prompted calling, once and for good, leaving a notice
(:meth:`ConstrainedSpellCalling.take_notice`) that ``summon`` turns into an Omen.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal

from sanctum.errors import OracleResponseError
from sanctum.oracle._mend import loads
from sanctum.oracle._prompt import constrained_transcript, inject_section, render_constrained_prompt
from sanctum.oracle._verdicts import is_schema_rejection
from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall
from sanctum.oracle.robust import PromptedSpellCalling, extract_json, parse_spell_blocks

__all__ = ["SPELL_CHOICES", "ConstrainedSpellCalling", "read_constrained", "spell_call_schema"]

SPELL_CHOICES = ("auto", "required")
"""``auto``: the model answers or casts; ``required``: its first turn must cast."""


def _arguments_schema(parameters: Any) -> dict[str, Any]:
    """A Spell's parameters as the call's ``arguments``: an object, closed to extras."""
    schema = dict(parameters) if isinstance(parameters, Mapping) else {}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.setdefault("additionalProperties", False)
    return schema


def spell_call_schema(
    spells: Sequence[Mapping[str, Any]], *, require_spell: bool = False
) -> dict[str, Any]:
    """The JSON Schema of one constrained turn: a final answer or one valid spell call.

    Args:
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.
        require_spell: Leave the answer out, so the turn must cast a Spell.

    Returns:
        ``{"oneOf": [answer, call of spell 1, ...]}`` — the answer is ``{"answer":
        string}``; each call is ``{"spell": {"const": name}, "arguments":
        parameters}`` (``additionalProperties: false`` unless the Spell says
        otherwise). A single alternative is returned bare.
    """
    branches: list[dict[str, Any]] = []
    if not require_spell or not spells:
        branches.append(
            {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
                "additionalProperties": False,
            }
        )
    for spell in spells:
        branches.append(
            {
                "type": "object",
                "properties": {
                    "spell": {"const": str(spell.get("name", ""))},
                    "arguments": _arguments_schema(spell.get("parameters")),
                },
                "required": ["spell", "arguments"],
                "additionalProperties": False,
            }
        )
    return branches[0] if len(branches) == 1 else {"oneOf": branches}


def read_constrained(response: OracleResponse) -> OracleResponse:
    """Turn a constrained answer's JSON text into the answer text or one SpellCall.

    The text is parsed strictly first; text cut short by a token limit goes through
    the tolerant :func:`~sanctum.oracle.robust.extract_json`, and text that still
    holds no answer or call through :func:`~sanctum.oracle.robust.parse_spell_blocks`
    (so a call becomes ``__malformed_json__`` for the repair layer, never lost).

    Args:
        response: What the Oracle answered to a constrained request.

    Returns:
        A new OracleResponse with the same usage.
    """
    usage = dict(response.usage)
    if response.spell_calls:
        return OracleResponse(response.text, list(response.spell_calls), usage)
    text = response.text or ""
    value = loads(text.strip())
    if not isinstance(value, dict):  # cut short inside the answer's string?
        value = loads(text.strip() + '"}')
    if not isinstance(value, dict):
        value = extract_json(text)
    if isinstance(value, dict):
        name = value.get("spell")
        if isinstance(name, str) and name:
            arguments = value.get("arguments")
            if not isinstance(arguments, dict):
                arguments = {"__malformed_json__": text}
            call = SpellCall(name, arguments, f"call_{uuid.uuid4().hex[:12]}")
            return OracleResponse("", [call], usage)
        answer = value.get("answer")
        if isinstance(answer, str):
            return OracleResponse(answer, [], usage)
    prose, calls = parse_spell_blocks(text)
    return OracleResponse(prose if calls else text, calls, usage)


class ConstrainedSpellCalling(Oracle):
    """A voice whose every word must fit the shape of an answer or a spell call.

    Oracle (LLM adapter) wrapper for constrained spell calling: with Spells, each
    :meth:`generate` sends the transcript (earlier calls and answers written as their
    JSON, the Spells described in the system prompt) to the inner Oracle's
    :meth:`~sanctum.oracle.base.Oracle.generate_constrained` with
    :func:`spell_call_schema`, and reads the JSON back (:func:`read_constrained`).
    Without Spells it passes straight through.

    When the inner Oracle cannot constrain its output
    (:attr:`~sanctum.oracle.base.Oracle.constrains_output` is false) or the backend
    rejects the schema (:func:`sanctum.oracle._http.is_schema_rejection`), the wrapper
    falls back to prompted calling (:class:`PromptedSpellCalling`), once and for the
    rest of its life, and keeps a notice saying why for :meth:`take_notice`.

    Args:
        inner: The Oracle to wrap.
        spell_choice: ``"auto"`` (answer or cast) or ``"required"`` (a turn before any
            spell result must cast a Spell).

    Raises:
        ValueError: If ``spell_choice`` is not one of :data:`SPELL_CHOICES`.
    """

    def __init__(self, inner: Oracle, spell_choice: Literal["auto", "required"] = "auto") -> None:
        if spell_choice not in SPELL_CHOICES:
            raise ValueError(
                f"spell_choice must be one of {', '.join(map(repr, SPELL_CHOICES))}, "
                f"not {spell_choice!r}"
            )
        self.inner = inner
        self.spell_choice = spell_choice
        self.arcana = inner.arcana
        self._fallback: PromptedSpellCalling | None = None
        self._notice: str | None = None

    @property
    def prompted(self) -> bool:
        """Whether the wrapper has fallen back to prompted calling."""
        return self._fallback is not None

    def __repr__(self) -> str:
        return f"ConstrainedSpellCalling({self.inner!r}, spell_choice={self.spell_choice!r})"

    def take_notice(self) -> str | None:
        """Why the wrapper fell back to prompted calling, once; ``None`` otherwise."""
        notice, self._notice = self._notice, None
        return notice

    def _fall_back(self, reason: str) -> PromptedSpellCalling:
        self._fallback = PromptedSpellCalling(self.inner, mode="always")
        self._notice = (
            f"constrained spell calling is not available with {self.arcana}: {reason}; "
            "falling back to prompted spell calling for the rest of this run"
        )
        return self._fallback

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer the transcript with a constrained answer or spell call.

        Returns:
            The answer text, or one SpellCall (``text`` empty), with the usage.

        Raises:
            OracleError: What the inner Oracle raises, except a rejection of the schema
                (which switches to prompted calling).
        """
        if not spells:
            return await self.inner.generate(messages, spells)
        if self._fallback is not None:
            return await self._fallback.generate(messages, spells)
        if not self.inner.constrains_output:
            reason = f"{type(self.inner).__name__} has no constrained decoding"
            return await self._fall_back(reason).generate(messages, spells)
        required = self.spell_choice == "required" and not any(
            message.get("role") == "spell" for message in messages
        )
        schema = spell_call_schema(spells, require_spell=required)
        section = render_constrained_prompt(spells, required=required)
        sent = inject_section(constrained_transcript(messages), section)
        try:
            response = await self.inner.generate_constrained(sent, schema)
        except OracleResponseError as error:
            if not is_schema_rejection(error):
                raise
            return await self._fall_back(_first_line(error)).generate(messages, spells)
        return read_constrained(response)

    async def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        """Answer as a stream: with Spells, the constrained answer's text in one chunk.

        Constrained output is JSON until it is read, so nothing is streamed before the
        whole answer is known; without Spells the inner stream passes through.

        Raises:
            OracleError: As :meth:`generate`.
        """
        if not spells:
            async for chunk in self.inner.stream_generate(messages, spells):
                yield chunk
            return
        response = await self.generate(messages, spells)
        if response.text:
            yield response.text

    async def aclose(self) -> None:
        """Release the inner Oracle's connections."""
        await self.inner.aclose()


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:300] if text else type(error).__name__
