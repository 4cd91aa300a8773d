"""The Oracle that speaks the OpenAI-compatible dialect of local servers.

OpenAICompatibleOracle — an LLM adapter for ``/v1/chat/completions`` as served by
llama-server (llama.cpp), vLLM, LM Studio, llama-cpp-python's server and Ollama's
``/v1``: tools whose arguments travel as JSON strings, SSE streaming with tool-call
fragments reassembled by ``index``, usage from the response. httpx is imported lazily.

The wire translation helpers here (:func:`to_openai_messages`, :func:`to_openai_tools`,
:func:`parse_openai_message`, :class:`ToolCallAssembler`) import only the standard
library and are shared with ``sanctum.oracle.llamacpp``. The original engine's pure
helpers keep their names: :func:`format_messages`, :func:`build_payload`,
:func:`parse_chat_completion`, :func:`parse_sse_delta` and :func:`parse_sse_line`
(for tests against recorded server answers).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sanctum.errors import OracleResponseError
from sanctum.oracle._http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    HttpOracleClient,
    OracleOutputError,
    error_message_of,
    error_status_of,
    safe_url,
)
from sanctum.oracle._served import ServedOracle, function_tools, message_text
from sanctum.oracle.base import Message, OracleResponse, SpellCall

if TYPE_CHECKING:
    import httpx

__all__ = [
    "OpenAICompatibleOracle",
    "ToolCallAssembler",
    "build_payload",
    "format_messages",
    "parse_arguments",
    "parse_chat_completion",
    "parse_openai_message",
    "parse_sse_delta",
    "parse_sse_line",
    "to_openai_messages",
    "to_openai_tools",
    "usage_from",
]


# --------------------------------------------------------------------------- wire


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
        Spells are offered, then ``extra_body``. (OpenAICompatibleOracle adds
        ``stream_options`` when it streams, before its own ``extra_body``.)
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
    """The numeric token counters of a response's ``usage`` object."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return {}
    return {
        key: value
        for key, value in usage.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def _first_message(data: Any) -> Mapping[str, Any] | None:
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
    message = _first_message(data)
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
    return _choice_delta(data)


def _choice_delta(data: Any) -> Mapping[str, Any] | None:
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


def _chat_url(base_url: str) -> tuple[str, str]:
    """Split a base URL into (server root, chat completions path).

    ``http://h:8080`` → ``/v1/chat/completions``; ``http://h:8080/v1`` (or any other
    path) → ``<path>/chat/completions``.
    """
    base = base_url.rstrip("/")
    if urlsplit(base).path in ("", "/"):
        return base, "/v1/chat/completions"
    return base, "/chat/completions"


# --------------------------------------------------------------------------- oracle


class OpenAICompatibleOracle(ServedOracle):
    """The voice of any local server that speaks OpenAI's chat completions.

    Oracle — an LLM adapter — for ``/v1/chat/completions``. ``arcana`` is
    ``"openai-compatible:<model>"``. The API key, when any, travels only in the
    ``Authorization`` header: it never appears in ``repr()``, error messages or the
    request body.

    Args:
        model: The model name the server expects (llama-server ignores it).
        base_url: The server address, with or without ``/v1``
            (``http://127.0.0.1:8080/v1``).
        api_key: A bearer token, if the server wants one.
        api_key_env: The name of an environment variable holding the key, read when
            the Oracle is created (used when ``api_key`` is not given).
        timeout: The deadline of each call in seconds, for the whole call
            (connecting, the answer, the whole stream); must be > 0.
        transport: An ``httpx.AsyncBaseTransport`` instead of the network.
        extra_body: Extra request fields merged into every request (``temperature``,
            ``max_tokens``, ``chat_template_kwargs``...).
        max_response_bytes: Largest accepted body or stream, in bytes (16 MiB).
        stream_usage: Ask for a final usage chunk when streaming
            (``stream_options.include_usage``).

    Raises:
        ValueError: If ``api_key_env`` names an unset variable, or ``timeout`` /
            ``max_response_bytes`` is not positive.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        stream_usage: bool = True,
    ) -> None:
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env)
            if not api_key:
                raise ValueError(
                    f"environment variable {api_key_env} (api_key_env) is not set or empty: "
                    "export it, or drop api_key_env for a server without keys"
                )
        self.model = model
        self.arcana = f"openai-compatible:{model}"
        self.extra_body = dict(extra_body) if extra_body else {}
        self.stream_usage = stream_usage
        root, self._path = _chat_url(base_url)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._has_key = bool(api_key)
        self._http = HttpOracleClient(
            root,
            model=model,
            server="OpenAI-compatible server",
            start_hint=(
                "Start one there, e.g. `llama-server -m model.gguf --jinja --port 8080` or "
                "`vllm serve <model>`, and check base_url."
            ),
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            headers=headers,
            secrets=(api_key,) if api_key else (),
            transport=transport,
        )

    def __repr__(self) -> str:
        key = ", api_key='***'" if self._has_key else ""
        return (
            f"OpenAICompatibleOracle(model={self.model!r}, "
            f"base_url={safe_url(self.base_url)!r}{key})"
        )

    def build_request(
        self,
        messages: Sequence[Message],
        spells: Sequence[Mapping[str, Any]] | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """The ``/chat/completions`` request body for a transcript.

        Returns:
            A JSON-serialisable dict: ``model``, ``messages``, ``stream``, ``tools``
            when Spells are offered, ``stream_options`` when streaming, and
            ``extra_body`` merged last.
        """
        payload = build_payload(self.model, messages, spells, stream=stream)
        if stream and self.stream_usage:
            payload["stream_options"] = {"include_usage": True}
        payload.update(self.extra_body)
        return payload

    def _check_error(self, data: Any, status: int) -> None:
        message = error_message_of(data)
        if message is not None:
            raise self._http.response_error(
                self._http.url(self._path),
                error_status_of(data, status),
                json.dumps(data, ensure_ascii=False),
                detail=message,
            )

    def _malformed(self, data: Any, what: str) -> OracleResponseError:
        return self._http.response_error(
            self._http.url(self._path), 200, json.dumps(data, default=str)[:1000], detail=what
        )

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer the transcript in one piece.

        A llama-server 500 ``"Failed to parse input at pos N: <output>"`` (the model
        wrote a tool call the server could not parse) is not a transport failure: it
        is answered as an OracleResponse whose text is the quoted output, with no spell
        calls and ``usage["oracle_output_errors"] == 1``, so the grimoire's text parser
        and repair layer get their chance.

        Args:
            messages: The transcript (``list[Message]``).
            spells: Spell schemas offered as tools, or ``None``.

        Returns:
            The answer, its spell calls and the server's usage counters.

        Raises:
            OracleConnectionError: Nobody listens at ``base_url``.
            OracleTimeoutError: The whole answer had not arrived ``timeout`` seconds
                after the call began.
            OracleResponseError: An error status (tool rejections are recognised by
                ``sanctum.oracle._http.is_tool_rejection``), a redirect, an oversized or
                malformed body.
        """
        payload = self.build_request(messages, spells, stream=False)
        try:
            data = await self._http.post_json(self._path, payload)
        except OracleOutputError as err:
            if err.output:
                return OracleResponse(text=err.output, usage={"oracle_output_errors": 1})
            raise
        self._check_error(data, 200)
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed(data, "an answer without choices")
        if _first_message(data) is None:
            raise self._malformed(data, "a choice without a message")
        return parse_chat_completion(data)

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream the answer over SSE: text chunks, then the whole response.

        Every item but the last is a non-empty ``str``; the last is the
        :class:`OracleResponse` with the full text, the tool calls reassembled from
        their fragments, and the usage of the final usage chunk.

        Raises:
            OracleConnectionError: Nobody listens, or the stream broke.
            OracleTimeoutError: The stream had not ended ``timeout`` seconds after
                the call began (chunks already yielded stay yielded).
            OracleResponseError: An error status or error event, an oversized stream,
                an event that is not JSON, or a stream that ended without
                ``finish_reason`` or ``[DONE]``.
        """
        payload = self.build_request(messages, spells, stream=True)
        url = self._http.url(self._path)
        parts: list[str] = []
        assembler = ToolCallAssembler()
        usage: dict[str, Any] = {}
        finished = False
        saw_done = False
        event_data: list[str] = []
        event_name = ""

        def handle(name: str, raw: str) -> list[str]:
            nonlocal usage, finished, saw_done
            if raw.strip() == "[DONE]":
                finished = saw_done = True
                return []
            try:
                data = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                raise self._http.response_error(
                    url, 200, raw, detail="a stream event that is not JSON"
                ) from exc
            if name == "error" and isinstance(data, dict) and "error" not in data:
                data = {"error": data}
            self._check_error(data, 200)
            if not isinstance(data, dict):
                return []
            usage = usage_from(data) or usage
            chunks: list[str] = []
            choices = data.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                choice = choices[0]
                delta = _choice_delta(data)
                if delta is not None:
                    content = delta.get("content")
                    if isinstance(content, str) and content:
                        chunks.append(content)
                    fragments = delta.get("tool_calls")
                    if isinstance(fragments, list):
                        for fragment in fragments:
                            if isinstance(fragment, dict):
                                assembler.feed(fragment)
                if choice.get("finish_reason"):
                    finished = True
            return chunks

        try:
            async with aclosing(self._http.stream_lines(self._path, payload)) as lines:
                async for line in lines:
                    if line == "":
                        if event_data:
                            for chunk in handle(event_name, "\n".join(event_data)):
                                parts.append(chunk)
                                yield chunk
                        event_data, event_name = [], ""
                        if saw_done:
                            break
                        continue
                    if line.startswith(":"):
                        continue
                    field_name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field_name == "data":
                        event_data.append(value)
                    elif field_name == "error":
                        event_name = "error"
                        event_data.append(value)
                    elif field_name == "event":
                        event_name = value
                if event_data:
                    for chunk in handle(event_name, "\n".join(event_data)):
                        parts.append(chunk)
                        yield chunk
        except OracleOutputError as err:
            if not err.output:
                raise
            text = "".join(parts)
            if err.output not in text:
                yield err.output
                text += err.output
            yield OracleResponse(text=text, usage={"oracle_output_errors": 1})
            return
        if not finished:
            endpoint = self._http.endpoint(self._path)
            raise OracleResponseError(
                f"The OpenAI-compatible server at {endpoint} ended the stream without a "
                f"finish_reason or [DONE] (model {self.model!r}). Likely fix: check the "
                "server log; the model may have crashed or run out of memory.",
                endpoint=endpoint,
                status=200,
                body="".join(parts)[-500:],
            )
        yield OracleResponse(text="".join(parts), spell_calls=assembler.calls(), usage=usage)
