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
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
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
    is_schema_rejection,
    safe_url,
)
from sanctum.oracle._openai_wire import (
    ToolCallAssembler,
    build_payload,
    choice_delta,
    first_message,
    format_messages,
    note_ignored_tools,
    parse_arguments,
    parse_chat_completion,
    parse_openai_message,
    parse_sse_delta,
    parse_sse_line,
    to_openai_messages,
    to_openai_tools,
    usage_from,
)
from sanctum.oracle._served import ServedOracle
from sanctum.oracle.base import Message, OracleResponse

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
        self._dialect = ""  # the response_format form this server accepted
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
            and ``tool_choice: "auto"`` when Spells are offered, ``stream_options``
            when streaming, and ``extra_body`` merged last.
        """
        payload = build_payload(self.model, messages, spells, stream=stream)
        if spells:  # without it llama-cpp-python's server drops the tools, answering 200
            payload["tool_choice"] = "auto"
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
        if first_message(data) is None:
            raise self._malformed(data, "a choice without a message")
        return note_ignored_tools(parse_chat_completion(data), spells, data)

    constrains_output = True

    def constrained_request(
        self, messages: Sequence[Message], schema: Mapping[str, Any], *, dialect: str
    ) -> dict[str, Any]:
        """The request body asking for output constrained to ``schema``.

        Args:
            messages: The transcript (``list[Message]``).
            schema: The JSON Schema of the whole answer.
            dialect: ``"json_schema"`` — OpenAI's ``response_format: {"type":
                "json_schema", "json_schema": {"name", "schema", "strict"}}``, which
                llama-server, vLLM, LM Studio and Ollama's ``/v1`` read; or
                ``"json_object"`` — ``{"type": "json_object", "schema": ...}``, the only
                form llama-cpp-python's server accepts.

        Returns:
            The body: no tools, ``response_format`` set, ``extra_body`` merged last.
        """
        payload = build_payload(self.model, messages, None, stream=False)
        if dialect == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": dict(schema), "strict": True},
            }
        else:
            payload["response_format"] = {"type": "json_object", "schema": dict(schema)}
        payload.update(self.extra_body)
        return payload

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """Answer with JSON valid against ``schema`` (the server's constrained decoding).

        Asks with ``response_format`` type ``json_schema`` first; a server that refuses
        that form (llama-cpp-python's answers 422) is asked once with type
        ``json_object`` plus ``schema``, and the form that worked is kept.

        Args:
            messages: The transcript (``list[Message]``).
            schema: The JSON Schema (``dict``) of the whole answer.

        Returns:
            The answer, its JSON in ``text``, and the usage counters.

        Raises:
            OracleConnectionError: Nobody listens at ``base_url``.
            OracleTimeoutError: The answer had not arrived in ``timeout`` seconds.
            OracleResponseError: An error status for both forms (recognised by
                ``sanctum.oracle._http.is_schema_rejection`` when it refuses the
                schema), or a malformed body.
        """
        dialects = [self._dialect] if self._dialect else ["json_schema", "json_object"]
        for position, dialect in enumerate(dialects):
            payload = self.constrained_request(messages, schema, dialect=dialect)
            try:
                data = await self._http.post_json(self._path, payload)
                self._check_error(data, 200)
            except OracleResponseError as err:
                if position + 1 < len(dialects) and is_schema_rejection(err):
                    continue
                raise
            self._dialect = dialect
            if first_message(data) is None:
                raise self._malformed(data, "an answer without choices[0].message")
            return parse_chat_completion(data)
        raise AssertionError("unreachable: the last dialect returns or raises")

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
                delta = choice_delta(data)
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
            raise self._http.response_error(
                url,
                200,
                "".join(parts)[-500:],
                detail="the stream ended without a finish_reason or [DONE]",
            )
        yield OracleResponse(text="".join(parts), spell_calls=assembler.calls(), usage=usage)
