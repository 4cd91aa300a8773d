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
    top_level_objects,
)
from sanctum.oracle._prompt import (
    SPELL_CALL_CLOSE,
    SPELL_CALL_OPEN,
    inject_spell_prompt,
    render_spell_prompt,
    textualise,
)
from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall
from sanctum.wards.redact import clip

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

_MAX_BLOCKS = 64
_NAME_HINT = re.compile(
    r"""["']?(?:spell|name)["']?[ \t]*:[ \t]*["']([A-Za-z0-9_.\-]{1,128})["']"""
)
_CALL_ARG_KEYS = ("arguments", "args", "parameters", "input", "tool_input")
_CALL_NAME_KEYS = ("name", "tool", "tool_name", "function")

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


def _spell_name(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def call_from_object(obj: Mapping[str, Any], *, delimited: bool = False) -> SpellCall | None:
    """Read a full call object (``{"spell": ..., "arguments": {...}}``) into a SpellCall.

    Accepts the shapes small models produce: ``spell`` or ``name`` (also ``tool``,
    ``tool_name`` or ``function`` as a string; these only with an arguments key, or
    inside a delimited block, so that a plain argument called ``name`` is not mistaken
    for a call), ``arguments``/``args``/``parameters``/``input``/``tool_input``, and
    OpenAI's nested ``{"function": {"name", "arguments"}}``. Arguments flattened into
    the call (``{"spell": "x", "city": "Paris"}``) are gathered, ``id`` and ``type``
    included (only ``call_id``, or ``"type": "function"``, is taken as call metadata
    there). ``args``/``parameters``/``input``/``tool_input`` holding a plain value
    rather than an object are an argument of that name, flattened. Arguments that are
    not an object (for instance double-encoded as a JSON string) are kept as
    ``{"__malformed_json__": text}`` for the repair layer.

    Args:
        obj: A parsed JSON object.
        delimited: The object came from a delimited block (``<spell_call>``,
            ``<tool_call>``): any of the name keys names the spell.

    Returns:
        The call, or ``None`` when ``obj`` does not look like a call.
    """
    function = obj.get("function")
    if isinstance(function, Mapping) and _spell_name(function.get("name")):
        return call_from_object(
            {"name": function["name"], **_arguments_of(function)}, delimited=True
        )
    container = next((k for k in _CALL_ARG_KEYS if k in obj and _holds_arguments(k, obj[k])), None)
    name_key = "spell" if _spell_name(obj.get("spell")) else None
    if name_key is None and (container is not None or delimited):
        name_key = next((k for k in _CALL_NAME_KEYS if _spell_name(obj.get(k))), None)
    if name_key is None:
        return None
    name = _spell_name(obj[name_key])
    assert name is not None
    arguments: Any
    if container is not None:
        raw_id = obj.get("call_id", obj.get("id"))
        arguments = obj[container]
    else:  # {"spell": "x", "city": "Paris"}: the arguments were flattened into the call
        raw_id = obj.get("call_id")
        arguments = {
            k: v
            for k, v in obj.items()
            if k not in (name_key, "call_id") and not (k == "type" and v == "function")
        }
    call_id = str(raw_id) if isinstance(raw_id, str | int) and raw_id != "" else None
    if arguments is None:
        arguments = {}
    if isinstance(arguments, Mapping):
        return SpellCall(spell=name, arguments=dict(arguments), call_id=call_id)
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return SpellCall(spell=name, arguments={"__malformed_json__": raw}, call_id=call_id)


def _holds_arguments(key: str, value: Any) -> bool:
    """Whether ``obj[key]`` is the call's arguments rather than one flattened argument."""
    if key == "arguments" or value is None or isinstance(value, Mapping | list):
        return True
    if isinstance(value, str):
        head = value.strip()[:1]
        return head in ("{", "[") or value.strip() in ("", "null")
    return False


def calls_in_object(obj: Mapping[str, Any], *, delimited: bool = False) -> list[SpellCall]:
    """Every call an object holds: itself, or each of a ``{"tool_calls": [...]}`` list."""
    wrapped = obj.get("tool_calls")
    if isinstance(wrapped, list) and "spell" not in obj and "name" not in obj:
        calls = [
            call
            for item in wrapped[:_MAX_BLOCKS]
            if isinstance(item, Mapping)
            and (call := call_from_object(item, delimited=True)) is not None
        ]
        return calls
    call = call_from_object(obj, delimited=delimited)
    return [] if call is None else [call]


def _arguments_of(function: Mapping[str, Any]) -> dict[str, Any]:
    for key in _CALL_ARG_KEYS:
        if key in function:
            return {"arguments": function[key]}
    return {}


def _block_calls(raw: str, name: str | None = None) -> list[SpellCall]:
    """One delimited block -> its SpellCalls (one flagged malformed when nothing parses).

    A block may hold one call object, a JSON array of them, several objects one after
    another, or a ``{"tool_calls": [...]}`` wrapper; a block opened by a tag naming the
    spell (``<function=NAME>``, ``[TOOL_CALLS]NAME[ARGS]``) holds its arguments.
    """
    body = raw.strip()
    if name is not None:
        obj = extract_json(body) if body else {}
        if obj is not None:
            return [SpellCall(spell=name, arguments=obj)]
        return [SpellCall(spell=name, arguments={"__malformed_json__": body})]
    whole = loads(body)
    if isinstance(whole, list) and whole and all(isinstance(item, Mapping) for item in whole):
        listed = [c for item in whole[:_MAX_BLOCKS] for c in calls_in_object(item, delimited=True)]
        if listed:
            return listed
    spans = top_level_objects(body, _MAX_BLOCKS)
    if len(spans) > 1:
        several = []
        for start, end in spans:
            obj = extract_json(body[start:end])
            several.extend(calls_in_object(obj, delimited=True) if obj is not None else [])
        if len(several) > 1:
            return several
    obj = extract_json(body)
    if obj is not None:
        calls = calls_in_object(obj, delimited=True)
        if calls:
            return calls
    hint = _NAME_HINT.search(body[:4096])
    return [SpellCall(spell=hint.group(1) if hint else "", arguments={"__malformed_json__": body})]


_THINKING = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
"""A reasoning section (to its end, or to the end of the text when never closed)."""

_THINKING_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)

_BLOCK_OPEN = re.compile(
    r"<spell_call>|<tool_call>|<function=([A-Za-z0-9_.\-]{1,128})>"
    r"|\[TOOL_CALLS\][ \t]*([A-Za-z0-9_.\-]{1,128})[ \t]*\[ARGS\]"
    r"|\[TOOL_CALLS\](?=\s*[\[{])"
)
"""Where a delimited call begins: the two block tags, then openers that name the spell
(Llama 3.1's ``<function=NAME>``, Mistral's ``[TOOL_CALLS]NAME[ARGS]``), then
Mistral's older ``[TOOL_CALLS] [{"name": ..., "arguments": ...}]`` (a JSON list or
object after the tag)."""

_BLOCK_CLOSE = {SPELL_CALL_OPEN: SPELL_CALL_CLOSE, TOOL_CALL_OPEN: TOOL_CALL_CLOSE}


def _mask_thinking(text: str) -> str:
    """``text`` with every reasoning section blanked out (same length, same offsets).

    What a model drafts while thinking aloud is not a call: only the answer is parsed.
    A closing tag with no opening one (the template opened the reasoning in the prompt)
    blanks everything before it.
    """
    if "<" not in text:
        return text
    masked = _THINKING.sub(lambda match: " " * len(match.group(0)), text)
    # A chat template may open the reasoning in the prompt (Qwen3, DeepSeek-R1): the
    # answer then starts inside it and only the closing tag shows.
    orphan = None
    for closing in _THINKING_CLOSE.finditer(masked):
        orphan = closing
    if orphan is not None:
        masked = " " * orphan.end() + masked[orphan.end() :]
    return masked


def _split_blocks(text: str, masked: str) -> tuple[str, list[tuple[str, str | None]]]:
    """Cut delimited blocks out of ``text``; return the prose and ``(body, name)`` pairs.

    Blocks are found in ``masked`` (reasoning blanked out) and cut from ``text``. A
    block ends at its closing tag, or where the next block opens, or at the end. At
    most 64 blocks: the rest of the text stays prose.
    """
    prose: list[str] = []
    bodies: list[tuple[str, str | None]] = []
    pos = 0
    n = len(text)
    opened = _BLOCK_OPEN.search(masked, pos)
    while opened is not None and len(bodies) < _MAX_BLOCKS:
        prose.append(text[pos : opened.start()])
        body_start = opened.end()
        following = _BLOCK_OPEN.search(masked, body_start)
        limit = following.start() if following is not None else n
        tag = opened.group(0)
        close = _BLOCK_CLOSE.get(tag, "</function>" if opened.group(1) else "")
        if close:
            end = masked.find(close, body_start, limit)
        else:  # Mistral's openers have no closing tag: the call ends with its JSON
            end = _json_value_end(masked, body_start, limit)
        name = opened.group(1) or opened.group(2)
        if end < 0:
            bodies.append((text[body_start:limit], name))
            pos = limit
        else:
            bodies.append((text[body_start:end], name))
            pos = end + len(close)
        opened = following  # a block never runs past the next opener
    prose.append(text[pos:])
    return "".join(prose), bodies


def _json_value_end(text: str, start: int, limit: int) -> int:
    """Where the JSON object or array starting at ``text[start:]`` ends, else -1.

    Leading whitespace is skipped; brackets inside strings are ignored. Returns the
    index just past the closing bracket, or -1 when no balanced value ends before
    ``limit``. Linear in ``limit - start``.
    """
    pos = start
    while pos < limit and text[pos].isspace():
        pos += 1
    if pos >= limit or text[pos] not in "{[":
        return -1
    depth = 0
    in_string = escaped = False
    for index in range(pos, limit):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return -1


def _bare_calls(text: str, masked: str) -> tuple[str, list[SpellCall]]:
    """Calls written as bare JSON (no delimiters), routed as malformed for the repair layer.

    Objects are looked for in ``masked`` (reasoning blanked out). Each call keeps the
    text it came from as its ``__malformed_json__`` value (a call from a
    ``{"tool_calls": [...]}`` wrapper, its own object as JSON), so the repair layer
    recovers it and reports the mend.
    """
    spans = top_level_objects(masked, _MAX_BLOCKS)
    calls: list[SpellCall] = []
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        chunk = text[start:end]
        obj = extract_json(chunk)
        found = calls_in_object(obj) if obj is not None else []
        if not found:
            continue
        wrapped = obj is not None and len(found) >= 1 and "tool_calls" in obj
        for call in found:
            raw = _dumps_call(call) if wrapped else chunk
            calls.append(SpellCall(call.spell, {"__malformed_json__": raw}, call.call_id))
        kept.append((start, end))
    if not calls:
        obj = extract_json(masked)
        found = calls_in_object(obj) if obj is not None else []
        if not found:
            return text, []
        first = masked.find("{")
        last = masked.rfind("}")
        kept = [(first, len(text) if last < first else last + 1)]
        chunk = text[kept[0][0] : kept[0][1]].strip()
        wrapped = obj is not None and "tool_calls" in obj
        for call in found:
            raw = _dumps_call(call) if wrapped else chunk
            calls.append(SpellCall(call.spell, {"__malformed_json__": raw}, call.call_id))
    prose: list[str] = []
    pos = 0
    for start, end in kept:
        prose.append(text[pos:start])
        pos = end
    prose.append(text[pos:])
    pieces = (FENCE_JSON.sub("", piece).replace("```", "").strip() for piece in prose)
    return " ".join(piece for piece in pieces if piece), calls


def _dumps_call(call: SpellCall) -> str:
    return json.dumps({"spell": call.spell, "arguments": call.arguments}, ensure_ascii=False)


def parse_spell_blocks(text: str) -> tuple[str, list[SpellCall]]:
    """Split a prompted answer into prose and SpellCalls.

    Every ``<spell_call>...</spell_call>`` block (and, for models trained on them,
    every ``<tool_call>...</tool_call>``, ``<function=NAME>...</function>`` and
    ``[TOOL_CALLS]NAME[ARGS]{...}`` block) is parsed with :func:`extract_json`; blocks
    that still refuse to parse become SpellCalls flagged ``"__malformed_json__"``, so
    the repair layer treats prompted failures exactly like native ones. A block may
    hold several calls (a JSON array, objects one after another, a ``tool_calls``
    list). An unclosed block runs to the next block or the end of the text. Reasoning
    sections (``<think>...</think>``) are never searched for calls. The prose outside
    the blocks is returned as the response text.

    When no blocks are present but the answer holds JSON objects carrying a ``"spell"``
    name (small models often ignore the delimiters), each is routed through the repair
    layer as a malformed call — validated, executed, and surfaced as a
    SpellCallRepaired Omen. Linear in ``len(text)``; never raises.

    Args:
        text: The model's answer.

    Returns:
        ``(prose, calls)``: the text outside the blocks (stripped) and the calls in
        order (at most 64). Text over :data:`MAX_MODEL_OUTPUT_CHARS` yields
        ``(text, [])``.
    """
    given: object = text
    if not isinstance(given, str):  # untrusted callers may hand anything
        return "", []
    if len(text) > MAX_MODEL_OUTPUT_CHARS:
        return text, []
    masked = _mask_thinking(text)
    prose, bodies = _split_blocks(text, masked)
    if bodies:
        calls = [call for body, name in bodies for call in _block_calls(body, name)]
        return prose.strip(), calls[:_MAX_BLOCKS]
    return _bare_calls(text, masked)


# --------------------------------------------------------------------------- the wrapper


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
        self._notice: str | None = None

    @property
    def prompted(self) -> bool:
        """Whether calls are currently emulated through the prompt."""
        return self._prompted

    def take_notice(self) -> str | None:
        """Why ``"auto"`` mode fell back to prompted calling, once; ``None`` otherwise."""
        notice, self._notice = self._notice, None
        return notice

    def _fall_back(self, error: BaseException) -> None:
        self._prompted = True
        lines = str(error).strip().splitlines()
        reason = clip(lines[0], 300) if lines else type(error).__name__
        self._notice = (
            f"native spell calling was refused by {self.arcana}: {reason}; falling back to "
            "prompted spell calling for the rest of this run"
        )

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
                self._fall_back(error)
            else:
                if not response.spell_calls and response.text:
                    prose, calls = parse_spell_blocks(response.text)
                    if calls:
                        return OracleResponse(prose, calls, dict(response.usage))
                return response
        prompted = inject_spell_prompt(textualise(messages), spells)
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
                self._fall_back(error)
        if spells:
            messages = inject_spell_prompt(textualise(messages), spells)
        async for chunk in self.inner.stream_generate(messages, None):
            yield chunk

    async def aclose(self) -> None:
        """Release the inner Oracle's connections."""
        await self.inner.aclose()
