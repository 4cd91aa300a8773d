"""Real HTTP model servers on 127.0.0.1 for the Oracle tests.

:class:`ModelServer` is a threaded HTTP/1.1 server that answers each request with the
next scripted :class:`Reply` and records what it received. The builders below write
the bytes real servers send: Ollama (Go's ``encoding/json``: compact, ``<>&``
escaped, ``application/x-ndjson`` streams in chunked encoding) and OpenAI-compatible
servers (llama-server, vLLM, Ollama's ``/v1``: ``text/event-stream`` with
``data: {...}`` events and ``data: [DONE]``).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CREATED_AT = "2025-05-27T22:54:57.641643Z"
CREATED = 1748386497


# --------------------------------------------------------------------------- server


@dataclass
class Reply:
    """One scripted answer.

    ``body`` is sent with ``Content-Length``; ``chunks`` (when given) with
    ``Transfer-Encoding: chunked``, one HTTP chunk each. ``hang`` accepts the request
    and never answers (until the server stops). ``drop`` closes the connection after
    the chunks without the terminating zero-length chunk.
    """

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json; charset=utf-8"
    chunks: Sequence[bytes] | None = None
    headers: Sequence[tuple[str, str]] = ()
    hang: bool = False
    drop: bool = False


@dataclass
class Recorded:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


@dataclass
class ModelServer:
    """A threaded HTTP/1.1 server answering from a queue of Replies."""

    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    respond: Callable[[Recorded], Reply] | None = None
    """Builds each answer from the request instead (when set, ``replies`` is not read)."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _httpd: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reply(self, *replies: Reply) -> ModelServer:
        """Queue answers for the next requests, in order."""
        self.replies.extend(replies)
        return self

    def start(self) -> ModelServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Recorded(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                server.requests.append(request)
                if server.respond is not None:
                    reply = server.respond(request)
                elif server.replies:
                    reply = server.replies.popleft()
                else:
                    reply = Reply(500, b'{"error":"no scripted reply"}')
                if reply.hang:
                    server._stop.wait(10)
                    self.close_connection = True
                    return
                self.send_response_only(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Date", self.date_time_string())
                for name, value in reply.headers:
                    self.send_header(name, value)
                if reply.chunks is None:
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    self.wfile.flush()
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in reply.chunks:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    if reply.drop:
                        self.close_connection = True
                        return
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return  # clients that hang up early are expected in these tests

        self._httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


@contextmanager
def running_server() -> Iterator[ModelServer]:
    """A started ModelServer, stopped on exit."""
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()


def closed_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    time.sleep(0.01)
    return port


# --------------------------------------------------------------------------- Ollama


def go_json(value: Any) -> bytes:
    """JSON as Go's encoding/json writes it: compact, with <, > and & escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


def _ollama_usage() -> dict[str, Any]:
    return {
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 342546000,
        "eval_count": 282,
        "eval_duration": 4535599000,
    }


def ollama_tool_call(
    name: str, arguments: Any, *, call_id: str | None = None, index: int | None = None
) -> dict[str, Any]:
    """One entry of Ollama's ``message.tool_calls`` (newer servers add id and index)."""
    function: dict[str, Any] = {}
    if index is not None:
        function["index"] = index
    function["name"] = name
    function["arguments"] = arguments
    call: dict[str, Any] = {}
    if call_id is not None:
        call["id"] = call_id
    call["function"] = function
    return call


def ollama_chat(
    content: str = "",
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "qwen2.5:7b",
    done_reason: str = "stop",
) -> Reply:
    """A non-streamed ``/api/chat`` answer."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "model": model,
        "created_at": CREATED_AT,
        "message": message,
        "done_reason": done_reason,
        "done": True,
        **_ollama_usage(),
    }
    return Reply(200, go_json(body))


def ollama_stream(
    tokens: Sequence[str],
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "qwen2.5:7b",
    final: bool = True,
    error: str | None = None,
) -> Reply:
    """A streamed ``/api/chat`` answer: one NDJSON line per token, one HTTP chunk each.

    Tool calls arrive whole in a chunk of their own (Ollama >= 0.8); ``final`` writes
    the closing ``done`` line with the counters; ``error`` writes an error line.
    """
    lines: list[bytes] = []
    for token in tokens:
        lines.append(
            go_json(
                {
                    "model": model,
                    "created_at": CREATED_AT,
                    "message": {"role": "assistant", "content": token},
                    "done": False,
                }
            )
            + b"\n"
        )
    if tool_calls:
        lines.append(
            go_json(
                {
                    "model": model,
                    "created_at": CREATED_AT,
                    "message": {"role": "assistant", "content": "", "tool_calls": tool_calls},
                    "done": False,
                }
            )
            + b"\n"
        )
    if error is not None:
        lines.append(go_json({"error": error}) + b"\n")
    elif final:
        lines.append(
            go_json(
                {
                    "model": model,
                    "created_at": CREATED_AT,
                    "message": {"role": "assistant", "content": ""},
                    "done_reason": "stop",
                    "done": True,
                    **_ollama_usage(),
                }
            )
            + b"\n"
        )
    return Reply(200, chunks=lines, content_type="application/x-ndjson")


def ollama_error(status: int, message: str) -> Reply:
    """Ollama's native error answer: ``{"error": "..."}``."""
    return Reply(status, go_json({"error": message}))


# --------------------------------------------------------------------------- OpenAI


def oa_json(value: Any) -> bytes:
    """Compact JSON as llama-server and vLLM write it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def oa_tool_call(name: str, arguments: str, call_id: str = "call_abc123") -> dict[str, Any]:
    """One entry of ``choices[0].message.tool_calls`` (arguments as a JSON string)."""
    return {"type": "function", "function": {"name": name, "arguments": arguments}, "id": call_id}


def oa_completion(
    content: str | None = "",
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "local-model",
) -> Reply:
    """A non-streamed ``/v1/chat/completions`` answer (llama-server's field order)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "choices": [
            {
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "index": 0,
                "message": message,
            }
        ],
        "created": CREATED,
        "model": model,
        "system_fingerprint": "b5000-0123abcd",
        "object": "chat.completion",
        "usage": {"completion_tokens": 12, "prompt_tokens": 34, "total_tokens": 46},
        "id": "chatcmpl-Zb3xY0uKq1",
        "timings": {"prompt_n": 34, "prompt_ms": 81.2, "predicted_n": 12, "predicted_ms": 240.5},
    }
    return Reply(200, oa_json(body))


def _chunk(delta: dict[str, Any], finish: str | None = None, model: str = "m") -> dict[str, Any]:
    return {
        "id": "chatcmpl-7f3a",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def sse(events: Sequence[Any], *, done: bool = True) -> Reply:
    """An SSE answer: one ``data: {...}`` event per HTTP chunk, then ``data: [DONE]``."""
    chunks = [b"data: " + oa_json(event) + b"\n\n" for event in events]
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return Reply(200, chunks=chunks, content_type="text/event-stream")


def oa_stream_events(
    tokens: Sequence[str],
    fragments: Sequence[list[dict[str, Any]]] = (),
    *,
    usage: bool = True,
    finish: bool = True,
) -> list[dict[str, Any]]:
    """The chunk objects of a streamed completion, as vLLM sends them.

    ``fragments`` are ``delta.tool_calls`` lists, one chunk each, after the tokens.
    """
    events = [_chunk({"role": "assistant", "content": ""})]
    events += [_chunk({"content": token}) for token in tokens]
    events += [_chunk({"tool_calls": fragment}) for fragment in fragments]
    if finish:
        events.append(_chunk({}, "tool_calls" if fragments else "stop"))
    if usage:
        events.append(
            {
                "id": "chatcmpl-7f3a",
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": "m",
                "choices": [],
                "usage": {"prompt_tokens": 34, "total_tokens": 46, "completion_tokens": 12},
            }
        )
    return events


def llama_server_error(status: int, message: str) -> Reply:
    """llama-server's error answer: ``{"error": {"code", "message", "type"}}``."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return Reply(status, oa_json({"error": {"code": status, "message": message, "type": kind}}))


def vllm_error(status: int, message: str) -> Reply:
    """vLLM's error answer: ``{"object": "error", "message", "type", "param", "code"}``."""
    body = {
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": None,
        "code": status,
    }
    return Reply(status, oa_json(body))


def ollama_v1_error(status: int, message: str) -> Reply:
    """Ollama's /v1 error answer: the OpenAI shape with ``"type": "api_error"``."""
    body = {"error": {"message": message, "type": "api_error", "param": None, "code": None}}
    return Reply(status, oa_json(body))


def redirect(location: str, status: int = 307) -> Reply:
    """A redirect answer."""
    return Reply(status, b"", content_type="text/plain", headers=[("Location", location)])
