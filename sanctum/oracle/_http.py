"""Shared plumbing of the HTTP Oracles: client, bounded reads, actionable errors.

Private to ``sanctum.oracle.ollama`` and ``sanctum.oracle.openai_compat``. This module
imports only the standard library at import time; ``httpx`` is imported lazily the
first time a request is made, so ``sanctum.oracle.robust`` may import
:func:`is_tool_rejection` without pulling in third-party packages.

Guards (hostile input, issue 8):

* every call has a deadline (``timeout`` seconds, default 120; never unbounded) for
  the whole call — connecting, each redirect hop, waiting for the answer and reading
  all of it, streamed or not — so a server trickling one byte a second is cut at the
  deadline, not kept alive by each byte;
* a response body or stream larger than ``max_response_bytes`` (default 16 MiB) is
  cut with :class:`OracleResponseError`;
* redirects are never followed to another scheme, host or port, and same-origin
  redirects only for 307/308 (which keep the method and body), at most 3 hops;
* API keys never appear in error messages or bodies quoted in them.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urljoin, urlsplit, urlunsplit

from sanctum.errors import (
    OracleConnectionError,
    OracleOutputError,
    OracleResponseError,
    OracleTimeoutError,
)
from sanctum.wards.redact import mask_secrets

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_TIMEOUT",
    "HttpOracleClient",
    "OracleOutputError",
    "error_message_of",
    "error_status_of",
    "extract_error_message",
    "is_model_output_failure",
    "is_tool_rejection",
    "model_output_tail",
    "normalise_base_url",
    "redact",
    "safe_url",
]

DEFAULT_TIMEOUT = 120.0
"""Seconds one call may take in all (connect, send, answer, whole stream) before
OracleTimeoutError: a deadline, not a bound on each read."""

DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""Largest response body or stream accepted from a model server, in bytes (16 MiB)."""

SNIPPET_CHARS = 500
"""How much of an error body is quoted in an OracleResponseError message."""

_MAX_REDIRECTS = 3

_T = TypeVar("_T")


@dataclass(slots=True)
class _Call:
    """Where one call stands against its deadline (for the timeout message).

    ``deadline`` is on the event loop's clock; ``started`` on ``time.monotonic``;
    ``connected`` is True once a connection to the server was open (known through
    httpx's trace hook; stays False with a custom transport); ``status`` the HTTP status
    once the headers arrived; ``received`` the body bytes read so far.
    """

    deadline: float
    started: float
    connected: bool = False
    status: int | None = None
    received: int = 0

    def what_arrived(self) -> str:
        """What the server had sent when the deadline passed, in words."""
        if self.status is None:
            if self.connected:
                return "the connection was open but no answer (not even its headers) arrived"
            return "nothing arrived (no connection or no answer headers)"
        return f"HTTP {self.status} and {self.received} bytes of its body arrived"


# What real servers say when a model or endpoint refuses native tool calling.
_TOOL_REJECTIONS: tuple[re.Pattern[str], ...] = (
    re.compile(r"does not support tools", re.IGNORECASE),  # Ollama (native and /v1)
    re.compile(r"tools param requires --jinja", re.IGNORECASE),  # llama-server
    re.compile(r"enable-auto-tool-choice", re.IGNORECASE),  # vLLM
    re.compile(r"tool[ _]?(?:use|calling|calls?)\b.{0,40}\bnot supported", re.IGNORECASE),
    re.compile(r"does not support (?:function|tool)[ _-]?call", re.IGNORECASE),
)

_TOOLS = r"(?:\btools?\b|\btool[ _-]?call(?:ing|s)?\b|\bfunction[ _-]?call(?:ing|s)?\b)"
_REFUSED = (
    r"(?:not supported|unsupported|does(?:n't| not) support|not available|unavailable|"
    r"not enabled|disabled|requires|unknown (?:field|parameter|argument)|unrecogni[sz]ed|"
    r"unexpected (?:field|parameter|keyword)|not allowed|not permitted|cannot render)"
)
_TOOLS_REFUSED = re.compile(
    rf"{_TOOLS}[^\n]{{0,60}}?{_REFUSED}|{_REFUSED}[^\n]{{0,60}}?{_TOOLS}", re.IGNORECASE
)
"""Any other answer saying tools are refused ("tools are not supported", "unsupported
parameter 'tools'"): the specification's "an OracleResponseError mentioning tools",
short of a complaint about one call ("invalid tool call arguments" is not a refusal)."""

# llama-server's answer when its own parser chokes on the model's output.
_MODEL_OUTPUT_FAILURE = re.compile(r"Failed to parse input at pos (\d+)(?::\s?(.*))?", re.DOTALL)


def normalise_base_url(base_url: str) -> str:
    """Return ``base_url`` with a scheme and without a trailing slash.

    Accepts what users write for local servers: ``127.0.0.1:11434`` or ``localhost``
    (the form ``OLLAMA_HOST`` often takes) become ``http://127.0.0.1:11434`` and
    ``http://localhost``.

    Raises:
        ValueError: If the address is empty or uses a scheme other than http or https.
    """
    text = base_url.strip()
    if not text:
        raise ValueError(
            "base_url is empty; give the server's address, e.g. http://127.0.0.1:11434"
        )
    if "://" not in text:
        text = f"http://{text}"
    scheme = text.split("://", 1)[0].lower()
    if scheme not in ("http", "https"):
        raise ValueError(
            f"base_url {safe_url(text)!r} uses the scheme {scheme!r}; an Oracle speaks HTTP: "
            "use http://host:port or https://host:port"
        )
    return text.rstrip("/")


def redact(text: str, secrets: Sequence[str]) -> str:
    """Replace every secret (API key) in ``text`` with ``***``.

    The rule is :func:`sanctum.wards.redact.secret_pattern`'s: a secret of 8 characters
    or more is masked wherever it occurs; a shorter one (a placeholder such as ``"x"``
    for a local server) only as a whole token, so messages are never garbled.

    Args:
        text: Any text that may quote a request or an error.
        secrets: Values that must never be shown; empty strings are skipped.

    Returns:
        ``text`` with each secret masked.
    """
    return mask_secrets(text, secrets, "***")


def safe_url(url: str) -> str:
    """The URL without user information (``user:password@``), fit for messages."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _error_text(err: OracleResponseError) -> str:
    return f"{err.body}\n{err.args[0] if err.args else ''}"


def is_tool_rejection(err: BaseException) -> bool:
    """Whether an Oracle error says the endpoint or model refuses native tool calling.

    Recognises Ollama's 400 ``"<model> does not support tools"``, llama-server's 500
    ``"tools param requires --jinja flag"``, vLLM's 400 about
    ``--enable-auto-tool-choice``, and any other answer where tools (tool or function
    calling) are said to be refused — not supported, unavailable, disabled, an unknown
    parameter, a chat template that cannot render them. A complaint about one call
    ("invalid tool call arguments") and other 4xx/5xx answers are not tool rejections.
    Used by ``PromptedSpellCalling(mode="auto")`` to fall back on prompted spell calling.

    Args:
        err: Any exception; only :class:`OracleResponseError` can qualify.

    Returns:
        ``True`` for a recognised tool rejection.
    """
    if not isinstance(err, OracleResponseError) or is_model_output_failure(err):
        return False
    text = _error_text(err)
    return any(pattern.search(text) for pattern in _TOOL_REJECTIONS) or bool(
        _TOOLS_REFUSED.search(text)
    )


def model_output_tail(text: str) -> str | None:
    """The model output quoted in llama-server's "Failed to parse input at pos N" error.

    Args:
        text: An error message or body.

    Returns:
        The quoted model output from position N on (possibly ``""``), or ``None`` when
        ``text`` is not such an error.
    """
    match = _MODEL_OUTPUT_FAILURE.search(text)
    if match is None:
        return None
    return match.group(2) or ""


def is_model_output_failure(err: BaseException) -> bool:
    """Whether an Oracle error is the model's fault rather than the transport's.

    llama-server answers a 500 ``"Failed to parse input at pos N: ..."`` when the model
    wrote a tool call its parser could not read. The adapters turn a recoverable one
    into an :class:`~sanctum.oracle.base.OracleResponse` carrying the raw text; when
    nothing is recoverable the :class:`OracleResponseError` is raised and this helper
    tells a retry policy it is worth asking the model again.

    Args:
        err: Any exception.

    Returns:
        ``True`` for a model-output failure reported by the server.
    """
    if not isinstance(err, OracleResponseError):
        return False
    return _MODEL_OUTPUT_FAILURE.search(_error_text(err)) is not None


def _hint_for(status: int | None, text: str, *, model: str, server: str) -> str:
    """The most likely fix for an error status and body."""
    lowered = text.lower()
    if _MODEL_OUTPUT_FAILURE.search(text):
        return (
            "the server could not parse the model's own output (a malformed tool call); "
            "retry the request or use spell_calling='prompted'"
        )
    if any(pattern.search(text) for pattern in _TOOL_REJECTIONS):
        if "--jinja" in lowered:
            return (
                "restart llama-server with --jinja to enable tool calling, or use "
                "spell_calling='prompted' (or 'auto')"
            )
        if "enable-auto-tool-choice" in lowered:
            return (
                "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>, or "
                "use spell_calling='prompted' (or 'auto')"
            )
        return (
            f"model {model!r} has no native tool support: use spell_calling='prompted' "
            "(or 'auto'), or pick a tool-capable model"
        )
    if status == 404 and "not found" in lowered and "pull" in lowered:
        return f"pull the model first: `ollama pull {model}`"
    if status == 404 and "model" in lowered:
        return f"check the model name {model!r}: the server does not know it"
    if status == 404:
        return f"check base_url: {server} has no such endpoint"
    if status in (401, 403):
        return "check the API key (api_key= or api_key_env=)"
    if "context" in lowered and ("exceed" in lowered or "too long" in lowered):
        return "the prompt exceeds the model's context window: raise it or shorten the transcript"
    if status is not None and status >= 500:
        return "the model server failed; check its log (out of memory? model crashed?)"
    return "check the request parameters (model, options, messages)"


class HttpOracleClient:
    """A guarded HTTP client for one model server.

    Owns an ``httpx.AsyncClient`` per event loop (re-created when the loop changes, so
    repeated ``asyncio.run`` calls work), applies the timeout, the size limit and the
    redirect policy, and maps every failure to the OracleError tree with an actionable
    message naming the endpoint.

    Args:
        base_url: The server's address, e.g. ``http://127.0.0.1:11434``.
        model: The model name, quoted in hints.
        server: A human name for the server ("Ollama", "the OpenAI-compatible server").
        start_hint: How to start that server, quoted when nobody answers.
        timeout: The deadline of each call, in seconds, for the whole call: connecting,
            sending, every redirect hop, waiting for the answer and reading all of it
            (the whole stream, for a streamed answer); must be > 0.
        max_response_bytes: Largest accepted body or stream, in bytes; must be > 0.
        headers: Extra request headers (e.g. ``Authorization``).
        secrets: Values masked in every message (API keys).
        transport: An ``httpx.AsyncBaseTransport`` to use instead of the network.

    Raises:
        ValueError: If ``timeout`` or ``max_response_bytes`` is not positive.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        server: str,
        start_hint: str,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str] = (),
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(
                f"timeout must be a positive number of seconds, got {timeout!r}: every "
                "Oracle request is bounded"
            )
        if not isinstance(max_response_bytes, int) or max_response_bytes <= 0:
            raise ValueError(
                f"max_response_bytes must be a positive int, got {max_response_bytes!r}"
            )
        self.base_url = normalise_base_url(base_url)
        self.model = model
        self.server = server
        self.start_hint = start_hint
        self.timeout = float(timeout)
        self.max_response_bytes = max_response_bytes
        self._headers = dict(headers or {})
        self._secrets = tuple(s for s in secrets if s)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return (
            f"HttpOracleClient(base_url={safe_url(self.base_url)!r}, model={self.model!r}, "
            f"timeout={self.timeout!r})"
        )

    # ----------------------------------------------------------------- client
    def _get_client(self) -> httpx.AsyncClient:
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                follow_redirects=False,
                headers=self._headers,
                transport=self._transport,
                trust_env=False,
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the pooled connections of the current event loop's client."""
        client, self._client, self._loop = self._client, None, None
        if client is not None and not client.is_closed:
            try:
                await client.aclose()
            except RuntimeError:  # pragma: no cover - the client's loop is gone
                pass

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this server."""
        return f"{self.base_url}/{path.lstrip('/')}"

    def endpoint(self, path: str) -> str:
        """The URL of ``path`` as shown in messages (no user information)."""
        return safe_url(self.url(path))

    # ----------------------------------------------------------------- errors
    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def connection_error(self, url: str, exc: BaseException) -> OracleConnectionError:
        """An OracleConnectionError naming the endpoint and how to start the server."""
        endpoint = safe_url(url)
        reason = self._redact(str(exc) or type(exc).__name__)
        return OracleConnectionError(
            f"Could not reach {self.server} at {endpoint} ({reason}). Is it running? "
            f"{self.start_hint}",
            endpoint=endpoint,
        )

    def timeout_error(self, url: str, call: _Call | None = None) -> OracleTimeoutError:
        """An OracleTimeoutError naming the endpoint, the deadline and what arrived.

        Args:
            url: The URL the call was for.
            call: The call's progress (what had arrived by the deadline), when known.
        """
        endpoint = safe_url(url)
        if call is None or call.status is None:
            if call is None:
                arrived = ""
            else:
                arrived = f"; {call.what_arrived()} in {time.monotonic() - call.started:.1f} s"
            hint = (
                "The first request often waits while the weights load: raise timeout= or "
                "warm the model up."
            )
        else:
            arrived = f"; {call.what_arrived()} in {time.monotonic() - call.started:.1f} s"
            hint = (
                "The server answered too slowly for the deadline, which bounds the whole "
                "answer (every chunk of a stream), not each read: raise timeout= for long "
                "answers, or lower the model's max tokens."
            )
        return OracleTimeoutError(
            f"{self.server} at {endpoint} did not finish answering within the "
            f"{self.timeout:g} s deadline (timeout={self.timeout:g}, for the whole call; "
            f"model {self.model!r}){arrived}. {hint}",
            endpoint=endpoint,
            timeout=self.timeout,
        )

    def response_error(
        self, url: str, status: int | None, body: str, *, detail: str | None = None
    ) -> OracleResponseError:
        """An OracleResponseError with the status, a body snippet and a likely fix."""
        endpoint = safe_url(url)
        body = self._redact(body)
        snippet = body if len(body) <= SNIPPET_CHARS else body[:SNIPPET_CHARS] + "…"
        what = detail or extract_error_message(body) or "an error"
        hint = _hint_for(status, body, model=self.model, server=endpoint)
        status_text = f"HTTP {status}" if status is not None else "an error"
        message = (
            f"{self.server} at {endpoint} answered {status_text} for model "
            f"{self.model!r}: {self._redact(_shorten(what))}. Likely fix: {hint}. "
            f"Body: {snippet!r}"
        )
        output = model_output_tail(what)
        if output is not None:
            return OracleOutputError(
                message, endpoint=endpoint, status=status, body=snippet, output=output
            )
        return OracleResponseError(message, endpoint=endpoint, status=status, body=snippet)

    def too_large_error(self, url: str, status: int) -> OracleResponseError:
        """An OracleResponseError for a body or stream over ``max_response_bytes``."""
        endpoint = safe_url(url)
        return OracleResponseError(
            f"{self.server} at {endpoint} sent more than {self.max_response_bytes} bytes "
            f"(max_response_bytes); the response was cut. Likely fix: lower the "
            "model's max tokens, or raise max_response_bytes if this is expected.",
            endpoint=endpoint,
            status=status,
            body="",
        )

    # ----------------------------------------------------------------- requests
    def _begin(self) -> _Call:
        """Start a call's clock: its deadline is ``timeout`` seconds from now."""
        loop = asyncio.get_running_loop()
        return _Call(deadline=loop.time() + self.timeout, started=time.monotonic())

    async def _within(self, url: str, call: _Call, awaitable: Awaitable[_T]) -> _T:
        """Await ``awaitable`` unless the call's deadline passes first.

        Raises:
            OracleTimeoutError: The deadline passed (the awaitable is cancelled).
        """
        try:
            async with asyncio.timeout_at(call.deadline):
                return await awaitable
        except TimeoutError:
            raise self.timeout_error(url, call) from None

    async def _send(self, url: str, payload: Any, call: _Call) -> httpx.Response:
        """POST ``payload`` as JSON and return the streamed response (not yet read)."""
        import httpx

        client = self._get_client()
        content = json.dumps(payload, ensure_ascii=False).encode("utf-8")

        async def trace(event: str, info: Mapping[str, Any]) -> None:
            if event.startswith("connection.") and event.endswith(".complete"):
                call.connected = True

        current = url
        for _ in range(_MAX_REDIRECTS + 1):
            request = client.build_request(
                "POST",
                current,
                content=content,
                headers={"Content-Type": "application/json"},
                extensions={"trace": trace},
            )
            try:
                response = await self._within(current, call, client.send(request, stream=True))
            except httpx.TimeoutException as exc:
                raise self.timeout_error(current, call) from exc
            except httpx.TransportError as exc:
                raise self.connection_error(current, exc) from exc
            call.status = response.status_code
            if not response.is_redirect:
                return response
            call.status = None
            location = response.headers.get("location", "")
            await response.aclose()
            target = urljoin(current, location)
            if not _same_origin(current, target) or response.status_code not in (307, 308):
                endpoint = safe_url(current)
                raise OracleResponseError(
                    f"{self.server} at {endpoint} redirected (HTTP {response.status_code}) "
                    f"to {safe_url(target)!r}; Oracle requests never follow redirects to "
                    "another host or that change the method. Likely fix: set base_url to "
                    "the final address.",
                    endpoint=endpoint,
                    status=response.status_code,
                    body="",
                )
            current = target
        endpoint = safe_url(url)
        raise OracleResponseError(
            f"{self.server} at {endpoint} redirected more than {_MAX_REDIRECTS} times. "
            "Likely fix: set base_url to the final address.",
            endpoint=endpoint,
            status=None,
            body="",
        )

    async def _chunks(
        self, url: str, response: httpx.Response, call: _Call
    ) -> AsyncGenerator[bytes, None]:
        """The body's chunks as they arrive, each read bounded by the call's deadline.

        Closes the response when done, abandoned or failed.

        Raises:
            OracleTimeoutError: The deadline passed before the body ended.
            OracleConnectionError: The connection broke.
            OracleResponseError: The body grew past ``max_response_bytes``.
        """
        import httpx

        try:
            body = cast("AsyncGenerator[bytes, None]", response.aiter_bytes())
            async with aclosing(body) as chunks:
                while True:
                    chunk = await self._within(url, call, _next_or_none(chunks))
                    if chunk is None:
                        return
                    call.received += len(chunk)
                    if call.received > self.max_response_bytes:
                        raise self.too_large_error(url, response.status_code)
                    yield chunk
        except httpx.TimeoutException as exc:
            raise self.timeout_error(url, call) from exc
        except httpx.TransportError as exc:
            raise self.connection_error(url, exc) from exc
        finally:
            await response.aclose()

    async def _read_all(self, url: str, response: httpx.Response, call: _Call) -> bytes:
        data = bytearray()
        async with aclosing(self._chunks(url, response, call)) as chunks:
            async for chunk in chunks:
                data += chunk
        return bytes(data)

    async def _raise_for_status(self, url: str, response: httpx.Response, call: _Call) -> None:
        if response.status_code < 400:
            return
        body = await self._read_all(url, response, call)
        raise self.response_error(url, response.status_code, body.decode("utf-8", "replace"))

    async def post_json(self, path: str, payload: Any) -> Any:
        """POST a JSON payload and return the parsed JSON answer.

        Args:
            path: The endpoint path below ``base_url`` (e.g. ``/api/chat``).
            payload: A JSON-serialisable request body.

        Returns:
            The decoded JSON body.

        Raises:
            OracleConnectionError: Nobody answered at the address.
            OracleTimeoutError: The whole answer had not arrived ``timeout`` seconds
                after the call began (connecting and redirects included); the message
                says what had arrived.
            OracleResponseError: An error status, a redirect, a body over
                ``max_response_bytes``, or a body that is not JSON.
        """
        url = self.url(path)
        call = self._begin()
        response = await self._send(url, payload, call)
        await self._raise_for_status(url, response, call)
        body = await self._read_all(url, response, call)
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            text = body.decode("utf-8", "replace")
            raise self.response_error(
                url, response.status_code, text, detail="a body that is not JSON"
            ) from exc

    async def stream_lines(self, path: str, payload: Any) -> AsyncGenerator[str, None]:
        """POST a JSON payload and yield the answer line by line (NDJSON or SSE).

        Lines are decoded as UTF-8 with the line ending stripped; empty lines are
        yielded too (SSE uses them to end events). The deadline (``timeout`` seconds)
        starts when the first line is asked for and bounds the whole stream: the time
        the caller spends between lines counts too, and a read that would end past the
        deadline is cut.

        Raises:
            OracleConnectionError: Nobody answered, or the connection broke mid-stream.
            OracleTimeoutError: The stream had not ended ``timeout`` seconds after the
                call began; the message says how much had arrived.
            OracleResponseError: An error status, a redirect, or a stream over
                ``max_response_bytes``.
        """
        url = self.url(path)
        call = self._begin()
        response = await self._send(url, payload, call)
        await self._raise_for_status(url, response, call)
        buffer = bytearray()
        async with aclosing(self._chunks(url, response, call)) as chunks:
            async for chunk in chunks:
                buffer += chunk
                while True:
                    cut = buffer.find(b"\n")
                    if cut < 0:
                        break
                    line = bytes(buffer[:cut])
                    del buffer[: cut + 1]
                    yield line.rstrip(b"\r").decode("utf-8", "replace")
        if buffer:
            yield bytes(buffer).rstrip(b"\r").decode("utf-8", "replace")


async def _next_or_none(iterator: AsyncIterator[_T]) -> _T | None:
    """The iterator's next item, or None when it is exhausted."""
    try:
        return await anext(iterator)
    except StopAsyncIteration:
        return None


def _shorten(text: str) -> str:
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "…"


def _same_origin(a: str, b: str) -> bool:
    left, right = urlsplit(a), urlsplit(b)
    return (left.scheme, left.hostname, left.port) == (right.scheme, right.hostname, right.port)


def extract_error_message(body: str) -> str | None:
    """The human message inside a server's JSON error body, if any.

    Understands Ollama's ``{"error": "..."}``, the OpenAI shape
    ``{"error": {"message": ...}}`` (llama-server, LM Studio, Ollama's /v1) and vLLM's
    ``{"object": "error", "message": ...}``.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return error_message_of(data)


def error_message_of(data: Any) -> str | None:
    """The message of an already-decoded error object, or ``None`` if it is not one."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message is not None else json.dumps(error)
    if data.get("object") == "error" and "message" in data:
        return str(data["message"])
    return None


def error_status_of(data: Any, default: int | None) -> int | None:
    """The status code carried inside a decoded error object, else ``default``."""
    if isinstance(data, dict):
        error = data.get("error")
        code = error.get("code") if isinstance(error, dict) else data.get("code")
        if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
            return code
    return default
