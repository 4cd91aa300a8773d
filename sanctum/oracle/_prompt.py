"""What a model is told about the Spells when the wire cannot tell it: prompt sections.

Private: :func:`render_spell_prompt`, :func:`inject_spell_prompt` and
:data:`SPELL_CALL_OPEN` / :data:`SPELL_CALL_CLOSE` are public through
:mod:`sanctum.oracle.robust`; :func:`render_constrained_prompt` and
:func:`constrained_transcript` serve :mod:`sanctum.oracle.constrained`.

Small models copy what the prompt shows them, so every example here is a call that
the Spell's own schema accepts (:func:`example_arguments`), with the Spell's real name
and no placeholders such as ``NAME`` or ``VALUE``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sanctum.oracle.base import Message

__all__ = [
    "SPELL_CALL_CLOSE",
    "SPELL_CALL_OPEN",
    "constrained_transcript",
    "example_arguments",
    "inject_section",
    "inject_spell_prompt",
    "render_constrained_prompt",
    "render_spell_prompt",
    "textualise",
]

SPELL_CALL_OPEN = "<spell_call>"
SPELL_CALL_CLOSE = "</spell_call>"

_MAX_DEPTH = 4
_FORMATS = {
    "date": "2024-05-17",
    "date-time": "2024-05-17T09:30:00Z",
    "time": "09:30:00",
    "email": "ada@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}


def example_value(schema: Any, name: str = "value", depth: int = 0) -> Any:
    """A value the JSON Schema ``schema`` accepts, for an example in a prompt.

    Uses, in order: ``const``, the first of ``examples`` or ``enum``, ``default``,
    then a value of the (first non-null) ``type`` within ``minimum``/``maximum``,
    ``minLength``/``maxLength`` and ``minItems``. Strings are the property's name in
    words (``"city"`` → ``"example city"``), never an upper-case placeholder.

    Args:
        schema: A JSON Schema (``dict``); anything else counts as ``{}``.
        name: The property name, used for strings.
        depth: Nesting depth (objects deeper than 4 levels are left empty).

    Returns:
        A JSON-serialisable value.
    """
    if not isinstance(schema, Mapping):
        return f"example {name}"
    if "const" in schema:
        return schema["const"]
    for key in ("examples", "enum"):
        listed = schema.get(key)
        if isinstance(listed, list) and listed:
            return listed[0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            usable = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
            if usable:
                return example_value(usable[0], name, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return example_arguments(schema, depth + 1) if depth < _MAX_DEPTH else {}
    if kind == "array":
        item = example_value(schema.get("items"), name, depth + 1)
        count = max(_int(schema.get("minItems"), 1), 1)
        return [item] * count
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema, name)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    low, high = schema.get("minimum"), schema.get("maximum")
    value: int | float = 3 if integer else 2.5
    if isinstance(low, int | float) and not isinstance(low, bool):
        value = max(value, low)
    if isinstance(high, int | float) and not isinstance(high, bool):
        value = min(value, high)
    return int(value) if integer else value


def _string(schema: Mapping[str, Any], name: str) -> str:
    text = _FORMATS.get(str(schema.get("format", "")), "")
    if not text:
        text = "example " + name.replace("_", " ")
    low = _int(schema.get("minLength"), 0)
    high = _int(schema.get("maxLength"), len(text))
    if len(text) < low:
        text = text + "x" * (low - len(text))
    return text[: max(high, low)]


def example_arguments(parameters: Any, depth: int = 0) -> dict[str, Any]:
    """Arguments an object schema accepts: every required property (else the first).

    Args:
        parameters: A Spell's ``parameters`` schema (``{"type": "object", ...}``).
        depth: Nesting depth, for nested objects.

    Returns:
        ``dict[str, Any]``; ``{}`` for a schema without properties.
    """
    if not isinstance(parameters, Mapping):
        return {}
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return {}
    required = parameters.get("required")
    names = [n for n in required if n in properties] if isinstance(required, list) else []
    if not names:
        names = [next(iter(properties))]
    return {str(n): example_value(properties[n], str(n), depth) for n in names}


def _call_json(name: str, arguments: Any) -> str:
    return json.dumps({"spell": name, "arguments": arguments}, ensure_ascii=False)


def _spell_sections(spells: Sequence[Mapping[str, Any]]) -> list[str]:
    lines: list[str] = []
    for schema in spells:
        name = str(schema.get("name", ""))
        description = str(schema.get("description", "") or "")
        parameters = schema.get("parameters") or {"type": "object", "properties": {}}
        lines.append(f"## {name}")
        if description:
            lines.append(description)
        lines.append("Arguments schema: " + json.dumps(parameters, ensure_ascii=False))
        lines.append("")
    return lines


def _first_example(spells: Sequence[Mapping[str, Any]]) -> str:
    first = spells[0] if spells else {"name": "spell"}
    return _call_json(str(first.get("name", "")), example_arguments(first.get("parameters")))


def render_spell_prompt(spells: Sequence[Mapping[str, Any]]) -> str:
    """Write the system-prompt section teaching the delimited call format.

    Lists every Spell (tool) with its JSON schema and shows the block the model must
    produce to cast one, with an example call that the first Spell's schema accepts.

    Args:
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.

    Returns:
        The prompt section (plain text, newline-separated).
    """
    example = _first_example(spells)
    lines = [
        "# Spells",
        "You can cast these spells (tools). Each is listed with the JSON Schema of its arguments.",
        "",
        *_spell_sections(spells),
        "To cast a spell, answer with a block like this one (the spell's name, then its "
        "arguments filled in from the conversation):",
        SPELL_CALL_OPEN,
        example,
        SPELL_CALL_CLOSE,
        "",
        "Rules:",
        "- Inside the block write one JSON object with double quotes: the spell name and "
        "its arguments.",
        "- Use one block per spell call. You may write several blocks to cast several spells.",
        "- Use only the spells listed above and only the arguments their schema names.",
        "- The results come back in the next message. When you have what you need, answer "
        "normally, without any block.",
    ]
    return "\n".join(lines)


def render_constrained_prompt(spells: Sequence[Mapping[str, Any]], *, required: bool) -> str:
    """Write the system-prompt section for constrained spell calling.

    The output itself is held to the schema by the backend; the prompt tells the model
    what the two shapes mean, lists the Spells and shows a schema-valid example.

    Args:
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.
        required: This turn must cast a spell (no answer shape is offered).

    Returns:
        The prompt section (plain text, newline-separated).
    """
    lines = [
        "# Spells",
        "You can cast these spells (tools). Each is listed with the JSON Schema of its arguments.",
        "",
        *_spell_sections(spells),
        "Reply with one JSON object and nothing else.",
        "To cast a spell, fill its arguments in from the conversation, for example:",
        _first_example(spells),
    ]
    if required:
        lines.append("Cast a spell now.")
    else:
        lines += [
            'When a spell result already gives what the user asked for, reply {"answer": '
            "followed by your answer to the user as a string}.",
        ]
    return "\n".join(lines)


def inject_section(messages: Sequence[Message], section: str) -> list[Message]:
    """Append ``section`` to the transcript's leading system message, or prepend one.

    Returns:
        A new list (the leading system message is a new dict; the others are shared).
    """
    result = list(messages)
    if result and result[0].get("role") == "system":
        first = dict(result[0])
        content = str(first.get("content") or "")
        first["content"] = f"{content}\n\n{section}" if content else section
        result[0] = first
    else:
        result.insert(0, {"role": "system", "content": section})
    return result


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
    return inject_section(messages, render_spell_prompt(spells))


def textualise(messages: Sequence[Message], *, blocks: bool = True) -> list[Message]:
    """Rewrite native tool traffic as plain text for an endpoint without tools.

    Args:
        messages: The transcript; not mutated.
        blocks: Write earlier calls as ``<spell_call>`` blocks (prompted mode);
            ``False`` writes each as its bare JSON object (constrained mode).

    Returns:
        A new list: assistant calls as text, spell results as user messages.
    """
    result: list[Message] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("spell_calls"):
            written = []
            for call in message["spell_calls"]:
                payload = _call_json(str(call.get("spell")), call.get("arguments", {}))
                written.append(
                    f"{SPELL_CALL_OPEN}\n{payload}\n{SPELL_CALL_CLOSE}" if blocks else payload
                )
            content = str(message.get("content") or "")
            text = "\n".join([content, *written]) if content else "\n".join(written)
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


def constrained_transcript(messages: Sequence[Message]) -> list[Message]:
    """The transcript as a constrained model sees it: earlier turns as their JSON.

    Earlier calls become their ``{"spell", "arguments"}`` objects (one per line, any
    prose beside them dropped) and earlier final answers ``{"answer": text}``, so
    every assistant turn shows a shape the schema admits; spell results become user
    messages as in :func:`textualise`, the last one followed by a reminder to answer
    (small models otherwise cast the same spell again and again).
    """
    result: list[Message] = []
    for original, message in zip(messages, textualise(messages, blocks=False), strict=True):
        if original.get("role") != "assistant":
            result.append(message)
            continue
        calls = original.get("spell_calls") or []
        if calls:
            text = "\n".join(
                _call_json(str(call.get("spell")), call.get("arguments", {})) for call in calls
            )
        else:
            text = json.dumps({"answer": str(original.get("content") or "")}, ensure_ascii=False)
        result.append({"role": "assistant", "content": text})
    if messages and messages[-1].get("role") == "spell":
        last = dict(result[-1])
        last["content"] = f"{last.get('content', '')}\n\n{_AFTER_RESULT}"
        result[-1] = last
    return result


_AFTER_RESULT = (
    'Now reply with an answer object, {"answer": your answer as a string}, telling the '
    "user what this result means for their question, unless you need another spell."
)
