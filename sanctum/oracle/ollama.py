"""The Oracle that speaks Ollama's native tongue.

OllamaOracle — an LLM adapter for Ollama's native ``/api/chat`` endpoint: tools
(tool-call arguments travel as JSON objects), one-piece answers (``stream=false``) and
streaming NDJSON, usage counters, ``options`` and ``keep_alive`` passthrough. httpx is
imported lazily, on the first request.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

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
    "DEFAULT_OLLAMA_URL",
    "OllamaOracle",
    "build_payload",
    "format_messages",
    "parse_chat_response",
    "to_ollama_messages",
    "to_ollama_tools",
]

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
"""Where ``ollama serve`` listens by default."""

_CHAT_PATH = "/api/chat"

# Ollama's counters (nanoseconds for durations) copied into OracleResponse.usage.
_USAGE_KEYS = (
    "prompt_eval_count",
    "prompt_eval_cached_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)


def to_ollama_tools(spells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Translate Spell schemas into Ollama's ``tools`` list.

    Args:
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.

    Returns:
        ``[{"type": "function", "function": {...}}, ...]`` in the same order.
    """
    return function_tools(spells)


def to_ollama_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Translate a sanctum transcript into Ollama's native message list.

    Assistant ``spell_calls`` become ``tool_calls`` whose ``arguments`` are JSON
    objects (Ollama answers a string with HTTP 400); ``role: "spell"`` results become
    ``role: "tool"`` messages carrying ``tool_name`` (and ``name`` for older servers,
    ``tool_call_id`` when known).
    Keys Ollama does not know (``usage``) are dropped.

    Args:
        messages: The transcript (``list[Message]``).

    Returns:
        The ``messages`` field of an ``/api/chat`` request.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = str(message.get("role", "user"))
        if role == "spell":
            entry: dict[str, Any] = {
                "role": "tool",
                "content": message_text(message.get("content")),
                "tool_name": str(message.get("name", "")),
                "name": str(message.get("name", "")),  # what Ollama before 0.9 read
            }
            if message.get("call_id"):
                entry["tool_call_id"] = str(message["call_id"])
            wire.append(entry)
            continue
        entry = {"role": role, "content": message_text(message.get("content"))}
        if message.get("images"):
            entry["images"] = list(message["images"])
        calls = message.get("spell_calls") or []
        if role == "assistant" and calls:
            tool_calls = []
            for call in calls:
                arguments = call.get("arguments")
                function: dict[str, Any] = {
                    "name": str(call.get("spell", "")),
                    "arguments": dict(arguments) if isinstance(arguments, Mapping) else {},
                }
                tool_call: dict[str, Any] = {"function": function}
                if call.get("call_id"):
                    tool_call["id"] = str(call["call_id"])
                tool_calls.append(tool_call)
            entry["tool_calls"] = tool_calls
        wire.append(entry)
    return wire


format_messages = to_ollama_messages
"""``format_messages(messages) -> list[dict]``: :func:`to_ollama_messages` under the
original engine's name (an alias, not a copy)."""

_ARCANA_PREFIX = "ollama:"


def build_payload(
    arcana: str,
    messages: Sequence[Message],
    spells: Sequence[Mapping[str, Any]] | None,
    *,
    stream: bool,
    keep_alive: str | float | None = None,
    options: Mapping[str, Any] | None = None,
    truncate: bool | None = None,
) -> dict[str, Any]:
    """The ``/api/chat`` request body for a transcript (a pure function).

    Args:
        arcana: The model: an Ollama model name (``"qwen2.5:7b"``) or an OllamaOracle's
            arcana (``"ollama:qwen2.5:7b"``, whose prefix is dropped).
        messages: The transcript (``list[Message]``).
        spells: Spell schemas offered as tools; ``None`` or empty offers none.
        stream: Whether Ollama should stream NDJSON lines.
        keep_alive: How long Ollama keeps the model loaded (``"5m"``, seconds, ``-1``).
        options: Model options passed through verbatim (``temperature``, ``num_ctx``...).
        truncate: ``False`` asks Ollama to answer an error when the prompt exceeds
            ``num_ctx`` instead of silently dropping the oldest messages; ``None``
            leaves the key out (Ollama's default, which truncates).

    Returns:
        A JSON-serialisable dict: ``model``, ``messages``, ``stream`` and, when given,
        ``tools``, ``options``, ``keep_alive`` and ``truncate``. OllamaOracle sends
        exactly this.
    """
    model = arcana[len(_ARCANA_PREFIX) :] if arcana.startswith(_ARCANA_PREFIX) else arcana
    payload: dict[str, Any] = {
        "model": model,
        "messages": to_ollama_messages(messages),
        "stream": stream,
    }
    if spells:
        payload["tools"] = to_ollama_tools(spells)
    if options:
        payload["options"] = dict(options)
    if keep_alive is not None:
        payload["keep_alive"] = keep_alive
    if truncate is not None:
        payload["truncate"] = truncate
    return payload


def _parse_arguments(raw: Any) -> dict[str, Any]:
    """Arguments as a dict; anything unusable is flagged ``__malformed_json__``."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            return {"__malformed_json__": raw}
        if isinstance(parsed, dict):
            return parsed
    return {"__malformed_json__": raw if isinstance(raw, str) else json.dumps(raw)}


def _spell_calls(raw_calls: Any) -> list[SpellCall]:
    calls: list[SpellCall] = []
    if not isinstance(raw_calls, list):
        return calls
    for raw in raw_calls:
        if not isinstance(raw, dict):
            continue
        function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
        assert isinstance(function, dict)
        call_id = raw.get("id") or f"call_{uuid.uuid4().hex[:12]}"
        calls.append(
            SpellCall(
                spell=str(function.get("name") or ""),
                arguments=_parse_arguments(function.get("arguments")),
                call_id=str(call_id),
            )
        )
    return calls


def _usage(data: Mapping[str, Any]) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    for key in _USAGE_KEYS:
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            usage[key] = value
    if "prompt_eval_count" in usage:
        usage["prompt_tokens"] = usage["prompt_eval_count"]
    if "eval_count" in usage:
        usage["completion_tokens"] = usage["eval_count"]
    if "prompt_eval_cached_count" in usage:  # builds that report prefix-cache hits count
        cached = usage["prompt_eval_cached_count"]  # them apart from prompt_eval_count
        usage["cached_tokens"] = cached
        usage["prompt_tokens"] = usage.get("prompt_eval_count", 0) + cached
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return usage


def parse_chat_response(data: Any) -> OracleResponse:
    """Read one non-streamed ``/api/chat`` answer (a pure function).

    Args:
        data: The decoded JSON body, ``{"message": {"content", "tool_calls"?}, ...}``
            with Ollama's counters (``prompt_eval_count``, ``eval_count``, durations in
            nanoseconds) beside it.

    Returns:
        The OracleResponse: ``text`` the message content, ``spell_calls`` one SpellCall
        per tool call (arguments as dicts; text that does not parse is kept under
        ``"__malformed_json__"`` for the repair layer; a missing id becomes
        ``call_<hex>``), ``usage`` Ollama's counters plus ``prompt_tokens``,
        ``completion_tokens`` and ``total_tokens``; ``cached_tokens`` (prompt tokens
        the prefix cache held) when the server reports ``prompt_eval_cached_count``.
        Older servers report only the tokens they evaluated (``prompt_eval_count``,
        absent when the whole prompt was cached), so there ``prompt_tokens`` may be less
        than the prompt.

    Raises:
        OracleResponseError: If ``data`` is an error answer (``{"error": ...}``) or holds
            no ``message`` object.
    """
    message = error_message_of(data)
    if message is not None:
        raise OracleResponseError(
            f"Ollama answered with an error: {message}",
            status=error_status_of(data, None),
            body=json.dumps(data, ensure_ascii=False, default=str)[:1000],
        )
    if not isinstance(data, Mapping) or not isinstance(data.get("message"), Mapping):
        raise OracleResponseError(
            "Ollama sent an answer without a 'message' object",
            body=json.dumps(data, ensure_ascii=False, default=str)[:1000],
        )
    reply = data["message"]
    return OracleResponse(
        text=message_text(reply.get("content")),
        spell_calls=_spell_calls(reply.get("tool_calls")),
        usage=_usage(data),
    )


class OllamaOracle(ServedOracle):
    """The voice of a model kept by a local Ollama server.

    Oracle — an LLM adapter — for Ollama's native ``/api/chat``. ``arcana`` is
    ``"ollama:<model>"``.

    Args:
        model: The Ollama model name, e.g. ``"qwen2.5:7b"``.
        base_url: Where Ollama listens.
        options: Model options passed through verbatim (``temperature``, ``num_ctx``...).
        keep_alive: How long Ollama keeps the model loaded (``"5m"``, seconds, ``-1``).
        timeout: The deadline of each call in seconds, for the whole call
            (connecting, the answer, the whole stream); must be > 0.
        transport: An ``httpx.AsyncBaseTransport`` instead of the network.
        max_response_bytes: Largest accepted body or stream, in bytes (16 MiB).
        truncate: ``False`` makes a prompt over ``num_ctx`` an error (classified
            ``context_overflow``, so compaction can act) instead of Ollama silently
            dropping the oldest messages; ritual files send ``False``. ``None`` (the
            default) sends nothing, as the original engine did.

    Raises:
        ValueError: If ``timeout`` or ``max_response_bytes`` is not positive.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_OLLAMA_URL,
        options: Mapping[str, Any] | None = None,
        keep_alive: str | float | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        truncate: bool | None = None,
    ) -> None:
        self.model = model
        self.truncate = truncate
        self.arcana = f"ollama:{model}"
        self.options = dict(options) if options else None
        self.keep_alive = keep_alive
        self._http = HttpOracleClient(
            base_url,
            model=model,
            server="Ollama",
            start_hint=f"Start it with `ollama serve` (then `ollama pull {model}`).",
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"OllamaOracle(model={self.model!r}, base_url={safe_url(self.base_url)!r})"

    def build_request(
        self,
        messages: Sequence[Message],
        spells: Sequence[Mapping[str, Any]] | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """The ``/api/chat`` request body for a transcript.

        Returns:
            A JSON-serialisable dict: ``model``, ``messages``, ``stream`` and, when set,
            ``tools``, ``options`` and ``keep_alive``.
        """
        return build_payload(
            self.model,
            messages,
            spells,
            stream=stream,
            keep_alive=self.keep_alive,
            options=self.options,
            truncate=self.truncate,
        )

    def _check_error(self, data: Any, status: int) -> None:
        message = error_message_of(data)
        if message is not None:
            raise self._http.response_error(
                self._http.url(_CHAT_PATH),
                error_status_of(data, status),
                json.dumps(data, ensure_ascii=False),
                detail=message,
            )

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer the transcript in one piece (``stream: false``).

        Args:
            messages: The transcript (``list[Message]``).
            spells: Spell schemas offered as tools, or ``None``.

        Returns:
            The answer, its spell calls (arguments as dicts) and usage counters.

        Raises:
            OracleConnectionError: Ollama is not running at ``base_url``.
            OracleTimeoutError: The whole answer had not arrived ``timeout`` seconds
                after the call began.
            OracleResponseError: An error status (unknown model: pull it; a model
                without tool support: see ``is_tool_rejection``), an oversized or
                non-JSON body.
        """
        payload = self.build_request(messages, spells, stream=False)
        try:
            data = await self._http.post_json(_CHAT_PATH, payload)
        except OracleOutputError as err:
            if err.output:
                return OracleResponse(text=err.output, usage={"oracle_output_errors": 1})
            raise
        self._check_error(data, 200)
        if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
            raise self._http.response_error(
                self._http.url(_CHAT_PATH),
                200,
                json.dumps(data)[:1000],
                detail="an answer without a 'message' object",
            )
        return parse_chat_response(data)

    constrains_output = True

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """Answer with JSON valid against ``schema`` (Ollama's ``format: <schema>``).

        Args:
            messages: The transcript (``list[Message]``).
            schema: The JSON Schema (``dict``) of the whole answer.

        Returns:
            The answer, its JSON in ``text``, and the usage counters.

        Raises:
            OracleConnectionError: Ollama is not running at ``base_url``.
            OracleTimeoutError: The answer had not arrived in ``timeout`` seconds.
            OracleResponseError: An error status (an Ollama too old for schemas in
                ``format`` answers 400) or a malformed body.
        """
        payload = self.build_request(messages, None, stream=False)
        payload["format"] = dict(schema)
        data = await self._http.post_json(_CHAT_PATH, payload)
        self._check_error(data, 200)
        return parse_chat_response(data)

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream the answer: text chunks as they arrive, then the whole response.

        Every item but the last is a non-empty ``str``; the last is the
        :class:`OracleResponse` with the full text, the spell calls (Ollama sends them
        whole, in a chunk of their own) and the usage counters of the final ``done``
        line.

        Raises:
            OracleConnectionError: Ollama is not running, or the stream broke.
            OracleTimeoutError: The stream had not ended ``timeout`` seconds after
                the call began (chunks already yielded stay yielded).
            OracleResponseError: An error status or error line, an oversized stream,
                a line that is not JSON, or a stream that ended before ``done``.
        """
        payload = self.build_request(messages, spells, stream=True)
        url = self._http.url(_CHAT_PATH)
        parts: list[str] = []
        calls: list[SpellCall] = []
        usage: dict[str, Any] = {}
        done = False
        try:
            async with aclosing(self._http.stream_lines(_CHAT_PATH, payload)) as lines:
                async for line in lines:
                    if not line.strip():
                        continue
                    try:
                        data = json.loads(line)
                    except (ValueError, RecursionError) as exc:
                        raise self._http.response_error(
                            url, 200, line, detail="a stream line that is not JSON"
                        ) from exc
                    self._check_error(data, 200)
                    if not isinstance(data, dict):
                        continue
                    message = data.get("message")
                    if isinstance(message, dict):
                        chunk = message_text(message.get("content"))
                        if chunk:
                            parts.append(chunk)
                            yield chunk
                        calls.extend(_spell_calls(message.get("tool_calls")))
                    if data.get("done"):
                        usage = _usage(data)
                        done = True
                        break
        except OracleOutputError as err:
            if not err.output:
                raise
            text = "".join(parts)
            if err.output not in text:
                yield err.output
                text += err.output
            yield OracleResponse(text=text, spell_calls=calls, usage={"oracle_output_errors": 1})
            return
        if not done:
            raise self._http.response_error(
                url,
                200,
                "".join(parts)[-500:],
                detail="the stream ended before its final 'done' line",
            )
        yield OracleResponse(text="".join(parts), spell_calls=calls, usage=usage)
