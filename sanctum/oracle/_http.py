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
import base64
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import unquote, urljoin, urlsplit

from sanctum.errors import (
    OracleConnectionError,
    OracleOutputError,
    OracleResponseError,
    OracleTimeoutError,
)
from sanctum.oracle._verdicts import (
    error_message_of,
    error_status_of,
    extract_error_message,
    is_model_output_failure,
    is_schema_rejection,
    is_tool_rejection,
    model_output_tail,
    normalise_base_url,
    redact,
    safe_url,
)
from sanctum.oracle.classify import classify_oracle_fault
from sanctum.wards.redact import clip

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
    "is_schema_rejection",
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
        secrets: Values masked in every message (API keys); a password in
            ``base_url``'s user information is masked too, as written and as the
            ``Basic`` token sent for it (a server may echo the header).
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
        self._secrets = tuple(s for s in (*secrets, *_basic_credentials(self.base_url)) if s)
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

    def broken_stream_error(
        self, url: str, exc: BaseException, call: _Call
    ) -> OracleConnectionError:
        """An OracleConnectionError for an answer cut off after part of it arrived.

        The server was reached and had answered (HTTP ``call.status``,
        ``call.received`` bytes): the message says so instead of asking whether it runs.
        """
        endpoint = safe_url(url)
        reason = self._redact(str(exc) or type(exc).__name__)
        return OracleConnectionError(
            f"{self.server} at {endpoint} broke off its answer after {call.received} bytes "
            f"(HTTP {call.status}; {reason}), {time.monotonic() - call.started:.1f} s into "
            f"the call (model {self.model!r}). Likely fix: check the server's log; the "
            "model may have crashed or run out of memory mid-answer.",
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
        """An OracleResponseError with the status, a body snippet and a likely fix.

        The fix is :func:`~sanctum.oracle.classify.classify_oracle_fault`'s for the
        same status and body (with the model's name filled in), so the message and
        the ``hint:`` line printed under it never name different causes.
        """
        endpoint = safe_url(url)
        body = self._redact(body)
        snippet = clip(body, SNIPPET_CHARS)  # masked before it is cut, the cut marked
        what = detail or extract_error_message(body) or _unread(body)
        status_text = f"HTTP {status}" if status is not None else "an error"
        lead = (
            f"{self.server} at {endpoint} answered {status_text} for model "
            f"{self.model!r}: {clip(self._redact(what), SNIPPET_CHARS).rstrip('.')}."
        )
        output = model_output_tail(what)
        kind = OracleResponseError if output is None else OracleOutputError
        probe = kind(lead, endpoint=endpoint, status=status, body=snippet)
        hint = classify_oracle_fault(probe).fix_for(self.model)
        message = f"{lead} Likely fix: {hint}. Body: {snippet!r}"
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
            if call.received:
                raise self.broken_stream_error(url, exc, call) from exc
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


def _unread(body: str) -> str:
    """What an error body without an error message is, in words."""
    if not body.strip():
        return "an empty body"
    return "an HTML page" if body.lstrip().startswith("<") else "a body that is not JSON"


def _basic_credentials(url: str) -> list[str]:
    """A URL's password, and the ``Basic`` token of its user information (or nothing)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    if not password:
        return []
    user, password = unquote(parts.username or ""), unquote(password)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return [password, token]


def _same_origin(a: str, b: str) -> bool:
    left, right = urlsplit(a), urlsplit(b)
    return (left.scheme, left.hostname, left.port) == (right.scheme, right.hostname, right.port)
