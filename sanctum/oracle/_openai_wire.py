"""The OpenAI-compatible wire format: messages, tools, answers and stream chunks.

Private: the names here are public through :mod:`sanctum.oracle.openai_compat` (and
shared with :mod:`sanctum.oracle.llamacpp`). Pure functions over JSON-shaped data;
standard library only.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from sanctum.errors import OracleResponseError
from sanctum.oracle._served import function_tools, message_text
from sanctum.oracle._verdicts import error_message_of, error_status_of
from sanctum.oracle.base import Message, OracleResponse, SpellCall

__all__ = [
    "TOOLS_IGNORED",
    "ToolCallAssembler",
    "build_payload",
    "choice_delta",
    "first_message",
    "format_messages",
    "note_ignored_tools",
    "parse_arguments",
    "parse_chat_completion",
    "parse_openai_message",
    "parse_sse_delta",
    "parse_sse_line",
    "to_openai_messages",
    "to_openai_tools",
    "usage_from",
]


def to_openai_tools(spells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Translate Spell schemas into the OpenAI ``tools`` list.

    Args:
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.

    Returns:
        ``[{"type": "function", "function": {...}}, ...]`` in the same order.
    """
    return function_tools(spells)


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Translate a sanctum transcript into OpenAI chat messages.

    Assistant ``spell_calls`` become ``tool_calls`` whose ``arguments`` are JSON
    strings (always valid JSON: llama-server refuses a history with unparseable ones);
    ``role: "spell"`` results become ``role: "tool"`` messages with ``tool_call_id``.
    Calls without an id get a stable one (``call_<message>_<position>``) and the
    following results without an id are matched to them by Spell name, in order.

    Args:
        messages: The transcript (``list[Message]``).

    Returns:
        The ``messages`` field of a ``/v1/chat/completions`` request.
    """
    wire: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (spell name, call id) awaiting a result
    for position, message in enumerate(messages):
        role = str(message.get("role", "user"))
        if role == "spell":
            name = str(message.get("name", ""))
            call_id = message.get("call_id")
            if call_id:
                pending[:] = [p for p in pending if p[1] != call_id]
            else:
                match = next((p for p in pending if p[0] == name), None)
                match = match or (pending[0] if pending else None)
                if match is not None:
                    pending.remove(match)
                    call_id = match[1]
                else:
                    call_id = f"call_{position}"
            wire.append(
                {
                    "role": "tool",
                    "tool_call_id": str(call_id),
                    "content": message_text(message.get("content")),
                }
            )
            continue
        entry: dict[str, Any] = {"role": role, "content": message_text(message.get("content"))}
        calls = message.get("spell_calls") or []
        if role == "assistant" and calls:
            tool_calls = []
            for index, call in enumerate(calls):
                call_id = str(call.get("call_id") or f"call_{position}_{index}")
                pending.append((str(call.get("spell", "")), call_id))
                arguments = call.get("arguments")
                tool_calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": str(call.get("spell", "")),
                            "arguments": json.dumps(
                                dict(arguments) if isinstance(arguments, Mapping) else {},
                                ensure_ascii=False,
                                default=str,
                            ),
                        },
                    }
                )
            entry["tool_calls"] = tool_calls
        wire.append(entry)
    return wire


format_messages = to_openai_messages
"""``format_messages(messages) -> list[dict]``: :func:`to_openai_messages` under the
original engine's name (an alias, not a copy)."""

_ARCANA_PREFIX = "openai-compatible:"


def build_payload(
    arcana: str,
    messages: Sequence[Message],
    spells: Sequence[Mapping[str, Any]] | None,
    *,
    stream: bool,
    extra_body: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``/chat/completions`` request body for a transcript (a pure function).

    Args:
        arcana: The model name the server expects, or an OpenAICompatibleOracle's
            arcana (``"openai-compatible:<model>"``, whose prefix is dropped).
        messages: The transcript (``list[Message]``).
        spells: Spell schemas offered as tools; ``None`` or empty offers none.
        stream: Whether the server should answer with SSE events.
        extra_body: Extra request fields (``temperature``, ``max_tokens``...), merged
            last so they win over the fields above.

    Returns:
        A JSON-serialisable dict: ``model``, ``messages``, ``stream``, ``tools`` when
        Spells are offered, then ``extra_body`` (the original engine's shape).
        OpenAICompatibleOracle adds ``tool_choice: "auto"`` beside the tools and
        ``stream_options`` when it streams, before its own ``extra_body``.
    """
    model = arcana[len(_ARCANA_PREFIX) :] if arcana.startswith(_ARCANA_PREFIX) else arcana
    payload: dict[str, Any] = {
        "model": model,
        "messages": to_openai_messages(messages),
        "stream": stream,
    }
    if spells:
        payload["tools"] = to_openai_tools(spells)
    if extra_body:
        payload.update(extra_body)
    return payload


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Decode tool-call arguments sent as a JSON string.

    Args:
        raw: The ``function.arguments`` value (normally a JSON string; some servers
            send an object).

    Returns:
        The arguments as a dict; ``{}`` for an empty string; ``{"__malformed_json__":
        raw}`` when the text does not parse to an object, for the repair layer.
    """
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    if not isinstance(raw, str):
        return {"__malformed_json__": json.dumps(raw, default=str)}
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return {"__malformed_json__": raw}
    if isinstance(parsed, dict):
        return parsed
    return {"__malformed_json__": raw}


def parse_openai_message(message: Mapping[str, Any]) -> tuple[str, list[SpellCall]]:
    """The text and spell calls of a non-streamed ``choices[0].message``.

    A server whose own parser failed leaves the call as text in ``content`` with no
    ``tool_calls``; that text is returned untouched for the grimoire's parser.
    """
    calls: list[SpellCall] = []
    raw_calls = message.get("tool_calls")
    if isinstance(raw_calls, list):
        for raw in raw_calls:
            if not isinstance(raw, dict):
                continue
            function = raw.get("function")
            function = function if isinstance(function, dict) else {}
            calls.append(
                SpellCall(
                    spell=str(function.get("name") or ""),
                    arguments=parse_arguments(function.get("arguments")),
                    call_id=str(raw.get("id") or f"call_{uuid.uuid4().hex[:12]}"),
                )
            )
    return message_text(message.get("content")), calls


def usage_from(data: Mapping[str, Any]) -> dict[str, Any]:
    """The numeric token counters of a response's ``usage`` object, and its cache hits.

    A chunk without ``usage`` but with llama.cpp's ``timings`` (``prompt_n``,
    ``predicted_n``: the final chunk of llama-server's stream) gives
    ``prompt_tokens``, ``completion_tokens`` and ``total_tokens`` from those;
    ``prompt_tokens`` is the whole prompt, the tokens evaluated (``prompt_n``) plus
    those taken from the server's prefix cache (``cache_n``).

    ``cached_tokens`` is the number of prompt tokens the server did not evaluate again
    because its prefix cache held them: OpenAI's ``usage.prompt_tokens_details.
    cached_tokens`` (vLLM, newer llama-server), else llama-server's ``timings.cache_n``.
    It is absent when the server does not say.

    Returns:
        ``dict[str, int | float]``; empty when the data carries no counters.
    """
    usage = data.get("usage")
    timings = data.get("timings")
    timings = timings if isinstance(timings, dict) else {}
    cache_n = timings.get("cache_n")
    if not isinstance(usage, dict):
        prompt, predicted = timings.get("prompt_n"), timings.get("predicted_n")
        if not (_is_token_count(prompt) and _is_token_count(predicted)):
            return {}
        whole = prompt + cache_n if _is_token_count(cache_n) else prompt
        usage = {
            "prompt_tokens": whole,
            "completion_tokens": predicted,
            "total_tokens": whole + predicted,
        }
    counters = {key: value for key, value in usage.items() if _is_count(value)}
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if _is_token_count(cached):
        counters["cached_tokens"] = cached
    elif _is_token_count(cache_n):
        counters["cached_tokens"] = cache_n
    return counters


def _is_token_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def first_message(data: Any) -> Mapping[str, Any] | None:
    """``choices[0].message`` of a non-streamed completion, or None when absent."""
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, Mapping) else None


def parse_chat_completion(data: Any) -> OracleResponse:
    """Read one non-streamed ``/chat/completions`` answer (a pure function).

    Args:
        data: The decoded JSON body, ``{"choices": [{"message": {...}}], "usage": {...}}``.

    Returns:
        The OracleResponse: ``text`` the message content, ``spell_calls`` one SpellCall
        per ``tool_calls`` entry (JSON-string arguments decoded; text that does not
        parse is kept under ``"__malformed_json__"`` for the repair layer), ``usage``
        the numeric counters of ``usage``.

    Raises:
        OracleResponseError: If ``data`` is an error answer (``{"error": ...}``) or has
            no ``choices[0].message``.
    """
    body = json.dumps(data, ensure_ascii=False, default=str)[:1000]
    problem = error_message_of(data)
    if problem is not None:
        raise OracleResponseError(
            f"the OpenAI-compatible server answered with an error: {problem}",
            status=error_status_of(data, None),
            body=body,
        )
    message = first_message(data)
    if message is None:
        raise OracleResponseError(
            "the OpenAI-compatible server sent an answer without choices[0].message",
            body=body,
        )
    text, calls = parse_openai_message(message)
    return OracleResponse(text=text, spell_calls=calls, usage=usage_from(data))


def _sse_data(line: str) -> str | None:
    """The payload of one SSE ``data:`` line (surrounding whitespace dropped), else None."""
    line = line.strip()
    if not line.startswith("data:"):
        return None
    return line[5:].strip()


def parse_sse_delta(line: str) -> Mapping[str, Any] | None:
    """The ``choices[0].delta`` of one streamed SSE line (a pure function).

    Args:
        line: One line of the event stream, e.g.
            ``'data: {"choices": [{"delta": {"content": "Hi"}}]}'``.

    Returns:
        The delta mapping (``content``, ``role``, ``tool_calls`` fragments...), or
        None for anything else: blank lines, comments, ``event:`` lines, ``[DONE]``,
        text that is not a JSON object, and chunks without a delta (the final usage
        chunk).
    """
    raw = _sse_data(line)
    if raw is None or raw.strip() in ("", "[DONE]"):
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return choice_delta(data)


def choice_delta(data: Any) -> Mapping[str, Any] | None:
    """``choices[0].delta`` of one decoded stream chunk, or None when absent."""
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    delta = choices[0].get("delta")
    return delta if isinstance(delta, Mapping) else None


def parse_sse_line(line: str) -> str | None:
    """The text one streamed SSE line adds to the answer (a pure function).

    Args:
        line: One line of the event stream.

    Returns:
        ``choices[0].delta.content`` when it is a non-empty string, else None (also
        for every line :func:`parse_sse_delta` answers None for).
    """
    delta = parse_sse_delta(line)
    content = delta.get("content") if delta is not None else None
    return content if isinstance(content, str) and content else None


@dataclass(slots=True)
class _PartialCall:
    call_id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Reassemble streamed tool-call fragments into whole SpellCalls.

    Fragments (``delta.tool_calls`` entries) are keyed by ``index``; a fragment whose
    ``id`` differs from the id already held at its index opens a new call (some
    servers reuse index 0 for parallel calls). A fragment without ``index`` continues
    the most recent call. Arguments are concatenated; a repeated full name is not
    duplicated.
    """

    def __init__(self) -> None:
        self._calls: list[_PartialCall] = []
        self._slot_of_index: dict[int, int] = {}

    def feed(self, fragment: Mapping[str, Any]) -> None:
        """Add one ``delta.tool_calls`` entry."""
        index = fragment.get("index")
        call_id = fragment.get("id") or None
        slot: int | None
        if isinstance(index, int) and not isinstance(index, bool):
            slot = self._slot_of_index.get(index)
            if slot is not None and call_id and self._calls[slot].call_id not in (None, call_id):
                slot = None  # a new id at a taken index: a new call
            if slot is None:
                self._calls.append(_PartialCall())
                slot = len(self._calls) - 1
                self._slot_of_index[index] = slot
        else:
            if not self._calls or (call_id and self._calls[-1].call_id not in (None, call_id)):
                self._calls.append(_PartialCall())
            slot = len(self._calls) - 1
        partial = self._calls[slot]
        if call_id and partial.call_id is None:
            partial.call_id = str(call_id)
        function = fragment.get("function")
        if isinstance(function, dict):
            name = function.get("name")
            if isinstance(name, str) and name and name != partial.name:
                partial.name = name if not partial.name else partial.name + name
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                partial.arguments.append(arguments)
            elif isinstance(arguments, dict):
                partial.arguments.append(json.dumps(arguments))

    def calls(self) -> list[SpellCall]:
        """The calls assembled so far, in the order they opened."""
        return [
            SpellCall(
                spell=partial.name,
                arguments=parse_arguments("".join(partial.arguments)),
                call_id=partial.call_id or f"call_{uuid.uuid4().hex[:12]}",
            )
            for partial in self._calls
        ]


TOOLS_IGNORED = "tools_ignored"
"""The usage counter set to 1 on an answer that ignored the tools it was offered."""

_LLAMA_CPP_PYTHON_ID = re.compile(
    r"chatcmpl-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def note_ignored_tools(
    response: OracleResponse,
    spells: Sequence[Mapping[str, Any]] | None,
    data: Any = None,
    *,
    known: bool = False,
) -> OracleResponse:
    """Mark an answer that ignored the tools, from a server known to drop them.

    llama-cpp-python (its server and in process) and llama.cpp answer HTTP 200 and
    leave the tools out when they cannot use them. When tools were offered, the
    answer holds no tool call and no call written as text, and the server is one of
    those (``known``, llama.cpp's ``timings`` in ``data``, or llama-cpp-python's
    ``chatcmpl-<uuid>`` id), ``usage["tools_ignored"]`` is set to 1, so the trace
    and a UsageWard show it.

    Returns:
        ``response``, its usage updated in place when the mark applies.
    """
    if not spells or response.spell_calls:
        return response
    if not known and isinstance(data, Mapping):
        known = "timings" in data or bool(_LLAMA_CPP_PYTHON_ID.fullmatch(str(data.get("id", ""))))
    if not known:
        return response
    from sanctum.oracle.robust import parse_spell_blocks  # the text parser, lazily

    if not parse_spell_blocks(response.text)[1]:
        response.usage[TOOLS_IGNORED] = 1
    return response
