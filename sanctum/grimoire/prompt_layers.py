"""Prompt layers: an Entity's system prompt, inscribed once and never redrawn.

A system prompt assembled from layers — the prompt-caching pattern of agent runtimes.
Local servers reuse the key/value cache of the longest common token prefix of two
requests (llama-server per slot, Ollama per loaded model, llama-cpp-python in
process), so a prompt that is byte-identical from one consultation to the next is
evaluated once. :class:`PromptLayers` splits the system prompt (``summon(role=)``) in
three:

* ``stable`` — the persona and the rules (a literal; a ritual file may read it from
  a file such as ``SOUL.md``);
* ``context`` — text or a function of the Aether, rendered **once**, at the first
  consultation, then frozen with ``stable`` in the ``system_prompt`` Conduit
  (:data:`SYSTEM_PROMPT`), so Seals carry the exact bytes and a resumed or
  time-travelled run sends them again, whatever the function would say now;
* ``volatile`` — text or a function of the Aether, rendered at **each** consultation
  and appended to the last message of the request only; it is never stored.

So every message of a request but its last is sent again unchanged at the next
consultation, and the reusable prefix grows turn by turn. No second or trailing
system message is ever written (many local chat templates reject one).

A Rite with a masking policy (:class:`~sanctum.wards.secrets.Secrets`) masks every
delta, so the Conduit holds the prompt with ``[REDACTED]`` where a secret stood (a
``${API_TOKEN}`` in ``stable``). The model must still be sent the very bytes of the
first consultation: when the frozen text holds a mask, the layers are rendered again
and that fresh text is sent if, masked, it is the frozen text — it differs only where
the frozen text has the mask. Otherwise (the ``context`` renders otherwise now) the
frozen text is sent, as always.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sanctum.oracle.base import Message
from sanctum.wards.redact import DEFAULT_MASK
from sanctum.wards.secrets import Secrets

__all__ = [
    "SYSTEM_PROMPT",
    "LayerText",
    "PromptLayers",
    "attach_volatile",
    "frozen_prompt",
    "volatile_text",
]

SYSTEM_PROMPT = "system_prompt"
"""The Conduit (``str``) holding the frozen ``stable`` + ``context`` text."""

LayerText = str | Callable[[Mapping[str, Any]], str]
"""A layer: literal text, or a function of the Aether (``Mapping[str, Any]``) rendering it."""


def _render(layer: LayerText | None, aether: Mapping[str, Any], name: str) -> str:
    if layer is None:
        return ""
    text = layer(aether) if callable(layer) else layer
    if not isinstance(text, str):
        raise TypeError(f"the {name} layer must render a str, not {type(text).__name__}")
    return text.rstrip()


@dataclass(frozen=True, slots=True)
class PromptLayers:
    """An Entity's system prompt in three layers (``summon(role=PromptLayers(...))``).

    The system prompt of an agent, split so an LLM server's prefix cache keeps
    working. The frozen prompt is ``stable`` and the rendered ``context`` joined by a
    blank line (an empty layer is left out; trailing whitespace of each is dropped).

    Args:
        stable: The persona and rules, sent as written on every consultation.
        context: Text, or a function of the Aether returning it, rendered once at the
            first consultation and frozen in the ``system_prompt`` Conduit.
        volatile: Text, or a function of the Aether returning it, rendered at each
            consultation and appended (after a blank line) to the last message of the
            request; never stored.

    Raises:
        TypeError: If ``stable`` is not a str, or ``context`` / ``volatile`` is
            neither a str, a callable nor None.
    """

    stable: str = ""
    context: LayerText | None = None
    volatile: LayerText | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.stable, str):
            raise TypeError(f"PromptLayers stable must be a str, not {type(self.stable).__name__}")
        for name in ("context", "volatile"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str) and not callable(value):
                raise TypeError(
                    f"PromptLayers {name} must be a str, a function of the Aether or None, "
                    f"not {type(value).__name__}"
                )

    def assemble(self, aether: Mapping[str, Any]) -> str:
        """The system prompt to freeze: ``stable``, a blank line, the rendered ``context``.

        Args:
            aether: The Aether of the first consultation (``Mapping[str, Any]``).

        Returns:
            The text; ``""`` when both layers are empty (no system message is sent).

        Raises:
            TypeError: If the ``context`` function returns something else than a str.
        """
        parts = (self.stable.rstrip(), _render(self.context, aether, "context"))
        return "\n\n".join(part for part in parts if part)


def frozen_prompt(
    role: str | PromptLayers, aether: Mapping[str, Any], secrets: Secrets | None = None
) -> tuple[str, dict[str, str]]:
    """The system prompt of a consultation, and the delta that freezes it.

    Args:
        role: ``summon``'s ``role``: a plain string (sent as is, nothing frozen) or
            :class:`PromptLayers`.
        aether: The Aether of the consultation.
        secrets: The Rite's masking policy (``writer.secrets``), which masked the frozen
            text; None when unknown (then ``[REDACTED]`` is taken for the mask).

    Returns:
        ``(text, delta)``: the prompt, and ``{SYSTEM_PROMPT: text}`` when the layers
        were assembled now (the first consultation), else ``{}`` (the Conduit's bytes
        are reused — or, where they hold the mask of a secret, the layers rendered
        again, when they differ from the Conduit's bytes only there).

    Raises:
        TypeError: If ``role`` is neither a str nor PromptLayers, or a layer function
            returns something else than a str.
    """
    if isinstance(role, str):
        return role, {}
    if not isinstance(role, PromptLayers):
        raise TypeError(f"role must be a str or PromptLayers, not {type(role).__name__}")
    frozen = aether.get(SYSTEM_PROMPT)
    if isinstance(frozen, str):
        return _unmasked(role, aether, frozen, secrets), {}
    text = role.assemble(aether)
    return text, {SYSTEM_PROMPT: text}


def _unmasked(
    role: PromptLayers, aether: Mapping[str, Any], frozen: str, secrets: Secrets | None
) -> str:
    """The prompt first sent, when ``frozen`` is that prompt with its secrets masked."""
    masks = secrets.masks if secrets else frozenset({DEFAULT_MASK})
    if not any(mask and mask in frozen for mask in masks):
        return frozen
    fresh = role.assemble(aether)
    if fresh == frozen:
        return frozen
    if secrets:
        return fresh if secrets.mask_text(fresh) == frozen else frozen
    return fresh if _masked_from(fresh, frozen.split(DEFAULT_MASK)) else frozen


def _masked_from(fresh: str, kept: list[str]) -> bool:
    """Whether ``fresh`` is the text whose masking left the pieces ``kept``: it holds them
    in order, at its start and its end, with some text where each mask stood."""
    if not fresh.startswith(kept[0]) or not fresh.endswith(kept[-1]):
        return False
    at, end = len(kept[0]), len(fresh) - len(kept[-1])
    for piece in kept[1:-1]:
        found = fresh.find(piece, at + 1, end)
        if found < 0:
            return False
        at = found + len(piece)
    return at < end


def volatile_text(role: str | PromptLayers, aether: Mapping[str, Any]) -> str:
    """The ``volatile`` layer rendered for this consultation (``""`` for a plain role).

    Raises:
        TypeError: If the ``volatile`` function returns something else than a str.
    """
    if not isinstance(role, PromptLayers):
        return ""
    return _render(role.volatile, aether, "volatile")


def attach_volatile(messages: list[Message], text: str) -> list[Message]:
    """The request with ``text`` appended to its last message (a copy; nothing stored).

    Args:
        messages: The request as it would be sent (``list[Message]``); not mutated.
        text: The rendered ``volatile`` layer.

    Returns:
        ``messages`` itself when ``text`` or ``messages`` is empty; else a new list
        whose last message is a new dict with ``"<content>\\n\\n<text>"`` as content.
    """
    if not text or not messages:
        return messages
    last = dict(messages[-1])
    content = str(last.get("content") or "")
    last["content"] = f"{content}\n\n{text}" if content else text
    return [*messages[:-1], last]
