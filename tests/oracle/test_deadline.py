"""An Oracle's ``timeout`` is a deadline for the whole call, not a bound on each read.

A real server on 127.0.0.1 trickles its answer a few bytes at a time, each well
inside the deadline, so a per-read timeout would never fire; the call must still end
at the deadline with an OracleTimeoutError saying what arrived. The bounds below only
catch a hang (a call kept alive by the trickle), they are not timing targets.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sanctum.errors import OracleTimeoutError
from sanctum.oracle.ollama import OllamaOracle
from sanctum.oracle.openai_compat import OpenAICompatibleOracle

DEADLINE = 1.0
TRICKLE_SECONDS = 12.0  # how long the server would keep going if nobody cut it
HELLO = [{"role": "user", "content": "Say hi."}]


class TrickleServer:
    """Answers each request slowly: ``head`` bytes (status line and headers) and then
    ``pieces``, one every ``interval`` seconds, or the whole head one byte at a time
    when ``slow_head``. Written on raw sockets so the pacing is exactly as given."""

    def __init__(
        self,
        head: bytes,
        pieces: list[bytes],
        *,
        interval: float,
        slow_head: bool = False,
    ) -> None:
        self.head = head
        self.pieces = pieces
        self.interval = interval
        self.slow_head = slow_head
        self.requests = 0
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(65536)
                if not got:
                    return
                data += got
            header, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in header.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            while len(body) < length:
                got = conn.recv(65536)
                if not got:
                    return
                body += got
            self.requests += 1
            writes = [bytes([b]) for b in self.head] if self.slow_head else [self.head]
            writes += self.pieces
            try:
                for index, piece in enumerate(writes):
                    if index and self._stop.wait(self.interval):
                        return
                    conn.sendall(piece)
            except OSError:
                return  # the client hung up: what a deadline does

    def __enter__(self) -> TrickleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sock.close()


def _chunked(pieces: list[bytes]) -> list[bytes]:
    return [b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces]


def _head(content_type: str, *, length: int | None = None) -> bytes:
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    # one answer per connection, said so: a client must not reuse it for the next call
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{framing}\r\nConnection: close\r\n\r\n"
    ).encode()


def _byte_by_byte_json(interval: float) -> TrickleServer:
    """A complete JSON answer, one body byte every ``interval`` seconds."""
    body = json.dumps({"model": "m", "message": {"role": "assistant", "content": "x" * 200}})
    raw = body.encode()
    count = int(TRICKLE_SECONDS / interval)
    return TrickleServer(
        _head("application/json", length=len(raw)),
        [bytes([b]) for b in raw[:count]],
        interval=interval,
    )


def _ollama_lines(interval: float) -> TrickleServer:
    count = int(TRICKLE_SECONDS / interval)
    lines = [
        json.dumps(
            {"model": "m", "message": {"role": "assistant", "content": "tok "}, "done": False}
        ).encode()
        + b"\n"
        for _ in range(count)
    ]
    return TrickleServer(_head("application/x-ndjson"), _chunked(lines), interval=interval)


def _sse_events(interval: float) -> TrickleServer:
    count = int(TRICKLE_SECONDS / interval)
    event = {"choices": [{"index": 0, "delta": {"content": "tok "}, "finish_reason": None}]}
    lines = [f"data: {json.dumps(event)}\n\n".encode() for _ in range(count)]
    return TrickleServer(_head("text/event-stream"), _chunked(lines), interval=interval)


@pytest.fixture
def clock() -> list[float]:
    return [time.monotonic()]


def _elapsed(clock: list[float]) -> float:
    return time.monotonic() - clock[0]


async def _drain(stream: AsyncIterator[Any], into: list[Any]) -> None:
    async for item in stream:
        into.append(item)


def _check_cut(err: OracleTimeoutError, clock: list[float], url: str) -> str:
    elapsed = _elapsed(clock)
    assert elapsed < 3 * DEADLINE, f"the call ran {elapsed:.1f} s past a {DEADLINE} s deadline"
    message = str(err)
    assert err.timeout == DEADLINE
    assert "1 s deadline" in message
    assert "whole call" in message
    assert url in message
    return message


async def test_ollama_generate_is_cut_while_the_body_trickles(clock: list[float]) -> None:
    with _byte_by_byte_json(0.2) as server:
        oracle = OllamaOracle("m", base_url=server.url, timeout=DEADLINE)
        clock[0] = time.monotonic()
        with pytest.raises(OracleTimeoutError) as info:
            await oracle.generate(HELLO)
        message = _check_cut(info.value, clock, server.url)
    assert "HTTP 200 and " in message
    assert " bytes of its body arrived" in message
    received = int(message.split("HTTP 200 and ")[1].split(" bytes")[0])
    assert 0 < received < 200, message


async def test_headers_sent_a_byte_at_a_time_are_cut_too(clock: list[float]) -> None:
    head = _head("application/json", length=2) + b"{}"
    with TrickleServer(head, [], interval=0.1, slow_head=True) as server:
        oracle = OpenAICompatibleOracle("m", base_url=server.url, timeout=DEADLINE)
        clock[0] = time.monotonic()
        with pytest.raises(OracleTimeoutError) as info:
            await oracle.generate(HELLO)
        message = _check_cut(info.value, clock, server.url)
    assert "no answer (not even its headers) arrived" in message, message
    assert "raise timeout=" in message


async def test_ollama_stream_is_cut_at_the_deadline_after_its_first_tokens(
    clock: list[float],
) -> None:
    with _ollama_lines(0.2) as server:
        oracle = OllamaOracle("m", base_url=server.url, timeout=DEADLINE)
        chunks: list[Any] = []
        clock[0] = time.monotonic()
        with pytest.raises(OracleTimeoutError) as info:
            await _drain(oracle.stream_response(HELLO), chunks)
        message = _check_cut(info.value, clock, server.url)
    assert chunks
    assert all(chunk == "tok " for chunk in chunks)
    assert len(chunks) < TRICKLE_SECONDS / 0.2
    assert "HTTP 200 and " in message
    assert "every chunk of a stream" in message


async def test_openai_stream_is_cut_at_the_deadline(clock: list[float]) -> None:
    with _sse_events(0.2) as server:
        oracle = OpenAICompatibleOracle("m", base_url=server.url, timeout=DEADLINE)
        chunks: list[Any] = []
        clock[0] = time.monotonic()
        with pytest.raises(OracleTimeoutError) as info:
            await _drain(oracle.stream_generate(HELLO), chunks)
        _check_cut(info.value, clock, server.url)
    assert chunks
    assert len(chunks) < TRICKLE_SECONDS / 0.2


async def test_an_answer_inside_the_deadline_is_untouched() -> None:
    body = json.dumps(
        {"model": "m", "message": {"role": "assistant", "content": "hi"}, "done": True}
    )
    raw = body.encode()
    pieces = [raw[: len(raw) // 2], raw[len(raw) // 2 :]]
    with TrickleServer(_head("application/json", length=len(raw)), pieces, interval=0.05) as server:
        oracle = OllamaOracle("m", base_url=server.url, timeout=5)
        answer = await oracle.generate(HELLO)
    assert answer.text == "hi"


async def test_each_call_has_its_own_deadline() -> None:
    """Two calls of one Oracle: the second one's clock starts afresh."""
    body = json.dumps(
        {"model": "m", "message": {"role": "assistant", "content": "ok"}, "done": True}
    )
    raw = body.encode()
    pieces = [raw[:10], raw[10:20], raw[20:]]
    with TrickleServer(_head("application/json", length=len(raw)), pieces, interval=0.3) as server:
        oracle = OllamaOracle("m", base_url=server.url, timeout=1.5)
        first = await oracle.generate(HELLO)
        second = await oracle.generate(HELLO)
        await oracle.aclose()
    assert (first.text, second.text) == ("ok", "ok")
    assert server.requests == 2
