"""Weathering the imperfect speech of small local models.

Robust spell-calling. Local 7-14B models fumble tool calls (Spell calls) in known ways:
malformed JSON, prose mixed with the payload, single quotes, unbalanced braces, or no
native tool support at all. This module treats those as first-class inputs, not
errors: :func:`extract_json` recovers objects from messy text (used by the repair
layer in :mod:`sanctum.grimoire.repair`), and :class:`PromptedSpellCalling` wraps any
Oracle (LLM adapter) to emulate tool calling through the prompt — schemas are injected
into the system prompt with a delimited invocation format, and the answer's text is
parsed back into SpellCalls.

Everything here reads untrusted model output: every function finishes in time linear
in the size of its input and never raises on any string.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal

from sanctum.errors import OracleResponseError
from sanctum.oracle._http import is_tool_rejection
from sanctum.oracle._mend import (
    FENCE_JSON,
    TOOL_CALL_CLOSE,
    TOOL_CALL_OPEN,
    candidates,
    json_repair_tier,
    loads,
    normalise,
    simple_mends,
)
from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall

__all__ = [
    "MAX_MODEL_OUTPUT_CHARS",
    "SPELL_CALL_CLOSE",
    "SPELL_CALL_OPEN",
    "PromptedSpellCalling",
    "call_from_object",
    "extract_json",
    "extract_json_with_mend",
    "inject_spell_prompt",
    "is_tool_rejection",
    "parse_spell_blocks",
    "render_spell_prompt",
]

MAX_MODEL_OUTPUT_CHARS = 2 * 1024 * 1024
"""Model output longer than this (characters) is not searched for JSON at all."""

SPELL_CALL_OPEN = "<spell_call>"
SPELL_CALL_CLOSE = "</spell_call>"

_MAX_BLOCKS = 32
_NAME_HINT = re.compile(
    r"""["']?(?:spell|name)["']?[ \t]*:[ \t]*["']([A-Za-z0-9_.\-]{1,128})["']"""
)
_CALL_ARG_KEYS = ("arguments", "args", "parameters", "input")
_CALL_EXTRA_KEYS = frozenset({"call_id", "id", "type"})

# --------------------------------------------------------------------------- extract_json


def extract_json_with_mend(text: str) -> tuple[dict[str, Any] | None, str]:
    """Tolerantly extract one JSON object, and say how it was mended.

    Same search as :func:`extract_json`; the second item describes where the object
    was found and which mend made it parse (``""`` when nothing was found), for the
    ``detail`` of a SpellCallRepaired Omen.

    Args:
        text: Model output of any shape; longer than :data:`MAX_MODEL_OUTPUT_CHARS`
            characters yields ``(None, "")``.

    Returns:
        ``(object, description)`` or ``(None, "")``.
    """
    given: object = text
    if not isinstance(given, str) or not text or len(text) > MAX_MODEL_OUTPUT_CHARS:
        return None, ""
    found = candidates(text)
    # The specification's tiers first, for every candidate in its order ...
    for candidate, where in found:
        value = loads(candidate)
        if isinstance(value, dict):
            return value, f"parsed {where}"
        if isinstance(value, str) and "{" in value and len(value) < len(candidate):
            inner, how = extract_json_with_mend(value)
            if inner is not None:
                return inner, f"decoded a JSON object double-encoded as a string; {how}"
        for mended, how in simple_mends(candidate):
            value = loads(mended)
            if isinstance(value, dict):
                return value, f"{how} in {where}"
    # ... then the tolerant tiers that help small models.
    for candidate, where in found:
        normal = normalise(candidate)
        if normal is None:
            continue
        value = loads(normal[0], strict=False)
        if isinstance(value, dict):
            return value, f"rewrote {where} as strict JSON (quotes, literals, commas, brackets)"
    for candidate, where in found:
        value = json_repair_tier(candidate)
        if isinstance(value, dict) and value:
            return value, f"repaired {where} with json_repair"
    return None, ""


def extract_json(text: str) -> dict[str, Any] | None:
    """Tolerantly extract one JSON object from model output.

    Tries, in order: the first fenced ```json block, the outermost brace region, and
    the raw text. Each candidate is parsed as-is, then with simple mends — appending
    missing closing braces, and swapping single quotes for double quotes when the
    candidate contains no double quotes. When none of those parse, tolerant tiers
    follow (a ``<tool_call>`` tag's body; a string-aware rewrite of single quotes,
    Python literals, bare keys, trailing commas and unclosed brackets; finally the
    json_repair library on small inputs). Linear in ``len(text)``; never raises.

    Args:
        text: Model output of any shape.

    Returns:
        The first dict found, or ``None`` when nothing parses.
    """
    return extract_json_with_mend(text)[0]


# --------------------------------------------------------------------------- prompted calls


def render_spell_prompt(spells: Sequence[Mapping[str, Any]]) -> str:
    """Write the system-prompt section teaching the delimited call format.

    Lists every Spell (tool) with its JSON schema and shows the exact block the model
    must produce to cast one.

    Args:
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.

    Returns:
        The prompt section (plain text, newline-separated).
    """
    lines = [
        "# Spells",
        "You can cast these spells (tools). Each is listed with the JSON Schema of its arguments.",
        "",
    ]
    for schema in spells:
        name = str(schema.get("name", ""))
        description = str(schema.get("description", "") or "")
        parameters = schema.get("parameters") or {"type": "object", "properties": {}}
        lines.append(f"## {name}")
        if description:
            lines.append(description)
        lines.append("Arguments schema: " + json.dumps(parameters, ensure_ascii=False))
        lines.append("")
    example = spells[0].get("name", "spell_name") if spells else "spell_name"
    lines += [
        "To cast a spell, answer with exactly this block and nothing else inside it:",
        SPELL_CALL_OPEN,
        '{"spell": "SPELL_NAME", "arguments": {"ARGUMENT": "VALUE"}}',
        SPELL_CALL_CLOSE,
        "",
        "Rules:",
        "- Inside the block write one JSON object with double quotes: the spell name and "
        "its arguments.",
        "- Use one block per spell call. You may write several blocks to cast several spells.",
        "- Use only the spells listed above and only the arguments their schema names.",
        "- The results come back in the next message. When you have what you need, answer "
        "normally, without any block.",
        "",
        "Example:",
        SPELL_CALL_OPEN,
        json.dumps({"spell": example, "arguments": {}}),
        SPELL_CALL_CLOSE,
    ]
    return "\n".join(lines)


def inject_spell_prompt(
    messages: Sequence[Message], spells: Sequence[Mapping[str, Any]]
) -> list[Message]:
    """Fold the Spell section into the transcript's system prompt.

    Appends to the existing leading system message, or prepends a new one.

    Args:
        messages: The transcript; not mutated.
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.

    Returns:
        A new list (the leading system message is a new dict; the others are shared).
    """
    section = render_spell_prompt(spells)
    result = list(messages)
    if result and result[0].get("role") == "system":
        first = dict(result[0])
        content = str(first.get("content") or "")
        first["content"] = f"{content}\n\n{section}" if content else section
        result[0] = first
    else:
        result.insert(0, {"role": "system", "content": section})
    return result


def _spell_name(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def call_from_object(obj: Mapping[str, Any]) -> SpellCall | None:
    """Read a full call object (``{"spell": ..., "arguments": {...}}``) into a SpellCall.

    Accepts the shapes small models produce: ``spell`` or ``name`` (``name`` only with
    an arguments key, so a plain argument called ``name`` is not mistaken for a call),
    ``arguments``/``args``/``parameters``/``input``, and OpenAI's nested
    ``{"function": {"name", "arguments"}}``. Arguments that are not an object (for
    instance double-encoded as a JSON string) are kept as
    ``{"__malformed_json__": text}`` for the repair layer.

    Args:
        obj: A parsed JSON object.

    Returns:
        The call, or ``None`` when ``obj`` does not look like a call.
    """
    function = obj.get("function")
    if isinstance(function, Mapping) and _spell_name(function.get("name")):
        return call_from_object({"name": function["name"], **_arguments_of(function)})
    arg_keys = [k for k in _CALL_ARG_KEYS if k in obj]
    name = _spell_name(obj.get("spell"))
    if name is None and arg_keys:
        name = _spell_name(obj.get("name")) or _spell_name(obj.get("tool"))
    if name is None:
        return None
    raw_id = obj.get("call_id", obj.get("id"))
    call_id = str(raw_id) if isinstance(raw_id, str | int) and raw_id != "" else None
    arguments: Any
    if arg_keys:
        arguments = obj[arg_keys[0]]
    else:  # {"spell": "x", "city": "Paris"}: the arguments were flattened into the call
        arguments = {k: v for k, v in obj.items() if k != "spell" and k not in _CALL_EXTRA_KEYS}
    if arguments is None:
        arguments = {}
    if isinstance(arguments, Mapping):
        return SpellCall(spell=name, arguments=dict(arguments), call_id=call_id)
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return SpellCall(spell=name, arguments={"__malformed_json__": raw}, call_id=call_id)


def _arguments_of(function: Mapping[str, Any]) -> dict[str, Any]:
    for key in _CALL_ARG_KEYS:
        if key in function:
            return {"arguments": function[key]}
    return {}


def _block_call(raw: str) -> SpellCall:
    """One delimited block -> a SpellCall (flagged malformed when it does not parse)."""
    obj = extract_json(raw)
    if obj is not None:
        call = call_from_object(obj)
        if call is not None:
            return call
    hint = _NAME_HINT.search(raw[:4096])
    name = hint.group(1) if hint else ""
    return SpellCall(spell=name, arguments={"__malformed_json__": raw.strip()})


def _split_blocks(text: str) -> tuple[str, list[str]]:
    """Cut ``<spell_call>``/``<tool_call>`` blocks out of ``text``; return prose and bodies."""
    prose: list[str] = []
    bodies: list[str] = []
    pos = 0
    n = len(text)
    while pos < n and len(bodies) < _MAX_BLOCKS:
        a = text.find(SPELL_CALL_OPEN, pos)
        b = text.find(TOOL_CALL_OPEN, pos)
        if a < 0 and b < 0:
            break
        if b < 0 or (0 <= a < b):
            start, open_tag, close_tag = a, SPELL_CALL_OPEN, SPELL_CALL_CLOSE
        else:
            start, open_tag, close_tag = b, TOOL_CALL_OPEN, TOOL_CALL_CLOSE
        prose.append(text[pos:start])
        body_start = start + len(open_tag)
        end = text.find(close_tag, body_start)
        if end < 0:
            bodies.append(text[body_start:])
            pos = n
        else:
            bodies.append(text[body_start:end])
            pos = end + len(close_tag)
    prose.append(text[pos:])
    return "".join(prose), bodies


def _top_level_objects(text: str, limit: int) -> list[tuple[int, int]]:
    """Spans of balanced top-level ``{...}`` regions, string-aware, in one pass."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start = -1
    quote = ""
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch == '"' and depth:
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
                if len(spans) >= limit:
                    break
    return spans


def _bare_calls(text: str) -> tuple[str, list[SpellCall]]:
    """Calls written as bare JSON (no delimiters), routed as malformed for the repair layer."""
    spans = _top_level_objects(text, _MAX_BLOCKS)
    calls: list[SpellCall] = []
    kept: list[tuple[int, int]] = []
    if len(spans) > 1:
        for start, end in spans:
            chunk = text[start:end]
            obj = extract_json(chunk)
            call = call_from_object(obj) if obj is not None else None
            if call is not None:
                calls.append(SpellCall(call.spell, {"__malformed_json__": chunk}, call.call_id))
                kept.append((start, end))
    if not calls:
        obj = extract_json(text)
        call = call_from_object(obj) if obj is not None else None
        if call is None:
            return text, []
        calls.append(SpellCall(call.spell, {"__malformed_json__": text.strip()}, call.call_id))
        first = text.find("{")
        last = text.rfind("}")
        kept = [(first, len(text) if last < first else last + 1)]
    prose: list[str] = []
    pos = 0
    for start, end in kept:
        prose.append(text[pos:start])
        pos = end
    prose.append(text[pos:])
    pieces = (FENCE_JSON.sub("", piece).replace("```", "").strip() for piece in prose)
    return " ".join(piece for piece in pieces if piece), calls


def parse_spell_blocks(text: str) -> tuple[str, list[SpellCall]]:
    """Split a prompted answer into prose and SpellCalls.

    Every ``<spell_call>...</spell_call>`` block (and, for models trained on it, every
    ``<tool_call>...</tool_call>`` block) is parsed with :func:`extract_json`; blocks
    that still refuse to parse become SpellCalls flagged ``"__malformed_json__"``, so
    the repair layer treats prompted failures exactly like native ones. An unclosed
    block runs to the end of the text. The prose outside the blocks is returned as the
    response text.

    When no blocks are present but the answer holds JSON objects carrying a ``"spell"``
    name (small models often ignore the delimiters), each is routed through the repair
    layer as a malformed call — validated, executed, and surfaced as a
    SpellCallRepaired Omen. Linear in ``len(text)``; never raises.

    Args:
        text: The model's answer.

    Returns:
        ``(prose, calls)``: the text outside the blocks (stripped) and the calls in
        order (at most 32). Text over :data:`MAX_MODEL_OUTPUT_CHARS` yields
        ``(text, [])``.
    """
    given: object = text
    if not isinstance(given, str):  # untrusted callers may hand anything
        return "", []
    if len(text) > MAX_MODEL_OUTPUT_CHARS:
        return text, []
    prose, bodies = _split_blocks(text)
    if bodies:
        return prose.strip(), [_block_call(body) for body in bodies]
    return _bare_calls(text)


# --------------------------------------------------------------------------- the wrapper


def _textualise(messages: Sequence[Message]) -> list[Message]:
    """Rewrite native tool traffic as plain text for an endpoint without tools."""
    result: list[Message] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("spell_calls"):
            blocks = []
            for call in message["spell_calls"]:
                payload = {"spell": call.get("spell"), "arguments": call.get("arguments", {})}
                blocks.append(f"{SPELL_CALL_OPEN}\n{json.dumps(payload)}\n{SPELL_CALL_CLOSE}")
            content = str(message.get("content") or "")
            text = "\n".join([content, *blocks]) if content else "\n".join(blocks)
            result.append({"role": "assistant", "content": text})
        elif role == "spell":
            name = message.get("name") or "spell"
            result.append(
                {
                    "role": "user",
                    "content": f"Result of spell {name}:\n{message.get('content', '')}",
                }
            )
        else:
            result.append(message)
    return result


class PromptedSpellCalling(Oracle):
    """A voice taught to cast Spells by instruction, not by wiring.

    Oracle (LLM adapter) wrapper emulating tool calling for models or endpoints without
    native support. With ``mode="always"`` (default) every generate that carries Spell
    schemas is rewritten: schemas go into the system prompt (:func:`inject_spell_prompt`),
    earlier calls and results are written back as text, and the answer's text is parsed
    back into SpellCalls (:func:`parse_spell_blocks`). With ``mode="auto"`` native tool
    calling is tried first, and the wrapper falls back — and stays — on prompted calling
    the first time the endpoint rejects tools (:func:`is_tool_rejection`: Ollama's 400
    "does not support tools", llama-server's 500 "tools param requires --jinja flag",
    vLLM's 400 about ``--enable-auto-tool-choice`` — not any other 4xx/5xx).

    ``stream_generate`` passes chunks through with the prompt injected; delimited blocks
    appear verbatim in the stream (parsing needs the full text), so prefer ``generate``
    inside spell-calling loops.

    Args:
        inner: The Oracle to wrap.
        mode: ``"always"`` or ``"auto"``.

    Raises:
        ValueError: If ``mode`` is neither ``"always"`` nor ``"auto"``.
    """

    def __init__(self, inner: Oracle, mode: Literal["always", "auto"] = "always") -> None:
        if mode not in ("always", "auto"):
            raise ValueError(f"PromptedSpellCalling mode must be 'always' or 'auto', not {mode!r}")
        self.inner = inner
        self.mode: Literal["always", "auto"] = mode
        self.arcana = inner.arcana
        self._prompted = mode == "always"

    @property
    def prompted(self) -> bool:
        """Whether calls are currently emulated through the prompt."""
        return self._prompted

    def __repr__(self) -> str:
        return f"PromptedSpellCalling({self.inner!r}, mode={self.mode!r})"

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer the transcript, emulating tool calls when needed.

        Raises:
            OracleError: What the inner Oracle raises (except, in ``"auto"`` mode, the
                first tool rejection, which switches to prompted calling).
        """
        if not spells:
            return await self.inner.generate(messages, spells)
        if not self._prompted:
            try:
                response = await self.inner.generate(messages, spells)
            except OracleResponseError as error:
                if not is_tool_rejection(error):
                    raise
                self._prompted = True
            else:
                if not response.spell_calls and response.text:
                    prose, calls = parse_spell_blocks(response.text)
                    if calls:
                        return OracleResponse(prose, calls, dict(response.usage))
                return response
        prompted = inject_spell_prompt(_textualise(messages), spells)
        response = await self.inner.generate(prompted, None)
        prose, calls = parse_spell_blocks(response.text)
        return OracleResponse(prose, [*response.spell_calls, *calls], dict(response.usage))

    async def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        """Stream the inner Oracle with the Spell prompt injected.

        Raises:
            OracleError: What the inner Oracle raises (a tool rejection before the first
                chunk, in ``"auto"`` mode, switches to prompted calling instead).
        """
        if spells and not self._prompted:
            started = False
            try:
                async for chunk in self.inner.stream_generate(messages, spells):
                    started = True
                    yield chunk
                return
            except OracleResponseError as error:
                if started or not is_tool_rejection(error):
                    raise
                self._prompted = True
        if spells:
            messages = inject_spell_prompt(_textualise(messages), spells)
        async for chunk in self.inner.stream_generate(messages, None):
            yield chunk

    async def aclose(self) -> None:
        """Release the inner Oracle's connections."""
        await self.inner.aclose()
