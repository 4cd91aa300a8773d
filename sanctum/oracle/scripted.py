"""An Oracle that reads from a prepared script.

ScriptedOracle — a deterministic test double of an LLM adapter: answers are handed
over in order from a fixed script, never touching a real model. Every call is recorded
for assertions.
"""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall

__all__ = ["ScriptedOracle"]

_WORDS = re.compile(r"\S+\s*|\s+")


def _split_words(text: str) -> list[str]:
    """Cut text into word chunks that concatenate back to exactly ``text``."""
    return _WORDS.findall(text)


class ScriptedOracle(Oracle):
    """The voice that only ever says what was written for it.

    Oracle — an LLM adapter — for tests. ``script`` is a sequence of
    :class:`OracleResponse` (or plain strings, shorthand for a text-only response)
    returned one per call, in order. Exhausting the script raises ``RuntimeError`` — a
    scripted test asked one question too many. Every call is recorded in :attr:`calls`
    as ``(messages, spells)`` deep copies, so later mutation of the transcript does not
    rewrite history.

    Args:
        script: The answers, in the order they are given.
        arcana: The model identifier reported by this Oracle.

    Raises:
        TypeError: If an entry of ``script`` is neither a string nor an OracleResponse.
    """

    def __init__(self, script: Sequence[OracleResponse | str], *, arcana: str = "scripted") -> None:
        responses: list[OracleResponse] = []
        for position, entry in enumerate(script):
            if isinstance(entry, str):
                responses.append(OracleResponse(text=entry))
            elif isinstance(entry, OracleResponse):
                responses.append(entry)
            else:
                raise TypeError(
                    f"ScriptedOracle script entry {position} is {type(entry).__name__}; "
                    "give an OracleResponse or a str"
                )
        self.arcana = arcana
        self.script: list[OracleResponse] = responses
        self.calls: list[tuple[list[Message], list[dict[str, Any]] | None]] = []
        self._position = 0

    @property
    def remaining(self) -> int:
        """How many scripted answers are still unread."""
        return len(self.script) - self._position

    def _next(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None
    ) -> OracleResponse:
        self.calls.append(
            (
                copy.deepcopy(list(messages)),
                None if spells is None else copy.deepcopy(list(spells)),
            )
        )
        if self._position >= len(self.script):
            raise RuntimeError(
                f"ScriptedOracle script exhausted after {len(self.script)} response(s): "
                "the code under test consulted the Oracle once more than scripted; "
                "add a response to the script"
            )
        response = self.script[self._position]
        self._position += 1
        return OracleResponse(
            text=response.text,
            spell_calls=[
                SpellCall(c.spell, copy.deepcopy(c.arguments), c.call_id)
                for c in response.spell_calls
            ],
            usage=copy.deepcopy(response.usage),
        )

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Return the script's next response, recording the call.

        Args:
            messages: The transcript so far (``list[Message]``).
            spells: JSON schemas of the Spells (tools) on offer, or ``None``.

        Returns:
            A copy of the next scripted response.

        Raises:
            RuntimeError: If the script is exhausted.
        """
        return self._next(messages, spells)

    async def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        """Yield the script's next response word by word.

        Chunks keep their trailing whitespace, so ``"".join(chunks)`` equals the text.

        Raises:
            RuntimeError: If the script is exhausted.
        """
        response = self._next(messages, spells)
        for chunk in _split_words(response.text):
            yield chunk

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Yield the next response's text word by word, then the response.

        Mirrors the tool-aware streaming of the production adapters, so streaming code
        paths stay testable without a model: every item but the last is a ``str``; the
        last is the whole :class:`OracleResponse` (with its spell calls and usage).

        Raises:
            RuntimeError: If the script is exhausted.
        """
        response = self._next(messages, spells)
        for chunk in _split_words(response.text):
            yield chunk
        yield response
