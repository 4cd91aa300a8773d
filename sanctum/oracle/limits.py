"""Bounded voices: at most N calls in flight to one model endpoint.

Oracle — an LLM adapter — calls are bounded per *endpoint* (provider, base URL and
model; :func:`endpoint_key`), not per Oracle object: every Rite a process compiles
builds Oracles of its own, so a batch of invocations (``sanctum run --inputs``) or a
queue worker running eight segments would otherwise send eight requests at once to a
GPU box that serves two.

* ``max_concurrency`` is a per-process bound: one gate per endpoint and event loop,
  shared by every :class:`LimitedOracle` of that endpoint in the process. When two
  Oracles of one endpoint give different bounds, the smallest given so far applies.
* ``max_concurrency_global`` bounds the calls of every process together. It needs an
  :class:`EndpointSlots` (slots shared across processes: ``sanctum worker`` and
  ``sanctum run --inputs`` with a PostgreSQL Codex install PostgreSQL advisory-lock
  slots with :func:`shared_slots`). Without one, the bound holds in this process only,
  and a :class:`RuntimeWarning` says so once per endpoint.

A call holds its place from the request until the answer is complete: a stream holds
it until its last chunk (or until the consumer closes it). Waiting has no deadline of
its own; the caller's cancellation ends it and gives nothing back twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from sanctum.oracle.base import Message, Oracle, OracleResponse, StreamingOracle

__all__ = [
    "EndpointSlots",
    "LimitedOracle",
    "endpoint_key",
    "endpoint_of",
    "limited",
    "shared_slots",
]

_T = TypeVar("_T")


class EndpointSlots(Protocol):
    """Places shared by several processes: at most ``slots`` holders of one endpoint.

    The contract :func:`shared_slots` installs. ``sanctum.queue`` implements it with
    PostgreSQL session advisory locks (a killed holder's session ends, so its slot is
    free at once); the oracle layer never imports a database driver.
    """

    def hold(self, endpoint: str, slots: int) -> AbstractAsyncContextManager[int]:
        """Wait for one of ``slots`` slots of ``endpoint``; hold it inside the block.

        Args:
            endpoint: The endpoint's key (:func:`endpoint_key`).
            slots: How many holders the endpoint admits across every process (>= 1).

        Returns:
            An async context manager yielding the slot's index (``0 <= i < slots``)
            and giving the slot back on exit, also on an error or a cancellation.
        """
        ...


_SLOTS: ContextVar[EndpointSlots | None] = ContextVar("sanctum_endpoint_slots", default=None)
_WARNED: set[str] = set()
"""Endpoints whose missing global bound this process has already warned about."""


@contextlib.contextmanager
def shared_slots(slots: EndpointSlots | None) -> Iterator[None]:
    """Make ``slots`` the cross-process slots of the calls made inside the block.

    A context variable: tasks created inside the block (a worker's jobs, a batch's
    invocations) see it too. ``None`` removes it for the block.
    """
    token = _SLOTS.set(slots)
    try:
        yield
    finally:
        _SLOTS.reset(token)


def endpoint_key(provider: str, base_url: str | None, model: str | None) -> str:
    """The key calls to one endpoint share: ``"provider base-url model"``.

    The URL is reduced to scheme, host, port and path, lower-cased where case does not
    matter, without credentials, a trailing ``/`` or a trailing ``/v1`` (an
    OpenAI-compatible server is the same box with or without it). A provider with no
    URL (in-process models, scripted oracles) is keyed by its model alone.

    Returns:
        A printable key holding no password.
    """
    where = "-"
    if base_url:
        text = base_url.strip() if "://" in base_url else f"http://{base_url.strip()}"
        try:
            parts = urlsplit(text)
            host = (parts.hostname or "").lower()
            port = f":{parts.port}" if parts.port else ""
            path = parts.path.rstrip("/")
            path = path[: -len("/v1")] if path.endswith("/v1") else path
            where = f"{parts.scheme.lower()}://{host}{port}{path}"
        except ValueError:
            where = "?"
    return f"{provider} {where} {model or '-'}"


def endpoint_of(oracle: Oracle) -> str:
    """The endpoint key of a built Oracle: its provider (its module's name), its
    ``base_url`` and its ``model`` (else its ``arcana``)."""
    provider = type(oracle).__module__.rsplit(".", 1)[-1]
    provider = {"openai_compat": "openai"}.get(provider, provider)
    base_url = getattr(oracle, "base_url", None)
    model = getattr(oracle, "model", None) or oracle.arcana
    return endpoint_key(
        provider,
        base_url if isinstance(base_url, str) else None,
        model if isinstance(model, str) else None,
    )


class _Gate:
    """A first-come first-served counting gate whose bound can only shrink."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.busy = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def acquire(self, limit: int) -> None:
        self.limit = min(self.limit, limit)
        if self.busy < self.limit and not self._waiting:
            self.busy += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # admitted in the same instant: pass the place on
            else:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(turn)
            raise

    def release(self) -> None:
        self.busy -= 1
        while self._waiting and self.busy < self.limit:
            turn = self._waiting.popleft()
            if not turn.done():
                self.busy += 1
                turn.set_result(None)


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Gate]] = (
    weakref.WeakKeyDictionary()
)
"""Per event loop (a gate's futures belong to one), the gate of each endpoint."""


def _gate(endpoint: str, limit: int) -> _Gate:
    gates = _GATES.setdefault(asyncio.get_running_loop(), {})
    if endpoint not in gates:
        gates[endpoint] = _Gate(limit)
    return gates[endpoint]


def _bound(value: int | None, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number of calls >= 1, not {value!r}")
    return value


class LimitedOracle(StreamingOracle):
    """An Oracle whose calls wait for a place at their endpoint.

    Oracle — an LLM adapter — wrapping ``inner``: :meth:`generate`,
    :meth:`generate_constrained` and streams (:meth:`stream_response`,
    :meth:`stream_generate`) first take a place in the process's gate of ``endpoint``
    (at most ``max_concurrency``, or ``max_concurrency_global`` when only that is
    given, in flight in this process), then, with ``max_concurrency_global``, a slot
    of the :class:`EndpointSlots` installed by :func:`shared_slots`. Other attributes
    (``model``, ``base_url``, options) read through to ``inner``.

    Args:
        inner: The Oracle called.
        endpoint: The key shared with other Oracles of the same endpoint (default:
            :func:`endpoint_of` ``inner``).
        max_concurrency: Calls in flight at once in this process (>= 1), or None.
        max_concurrency_global: Calls in flight at once across every process that
            shares the installed slots (>= 1), or None.

    Raises:
        ValueError: If neither bound is given, or one is not an int >= 1 (a bool is
            not a number of calls).
    """

    def __init__(
        self,
        inner: Oracle,
        *,
        endpoint: str | None = None,
        max_concurrency: int | None = None,
        max_concurrency_global: int | None = None,
    ) -> None:
        local = _bound(max_concurrency, "max_concurrency")
        total = _bound(max_concurrency_global, "max_concurrency_global")
        if local is None and total is None:
            raise ValueError("give max_concurrency, max_concurrency_global or both")
        self.inner = inner
        self.endpoint = endpoint or endpoint_of(inner)
        self.max_concurrency = local
        self.max_concurrency_global = total
        self.arcana = inner.arcana
        self._limit = min(n for n in (local, total) if n is not None)

    def __repr__(self) -> str:
        bounds = f"max_concurrency={self.max_concurrency}"
        if self.max_concurrency_global is not None:
            bounds += f", max_concurrency_global={self.max_concurrency_global}"
        return f"LimitedOracle({self.inner!r}, {bounds})"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def constrains_output(self) -> bool:  # type: ignore[override]
        """Whether ``inner`` can hold its output to a JSON Schema."""
        return self.inner.constrains_output

    @contextlib.asynccontextmanager
    async def place(self) -> AsyncIterator[None]:
        """Hold a place for one call: the process's gate, then a global slot.

        Warns:
            RuntimeWarning: Once per endpoint and process, when a global bound is set
                but no :class:`EndpointSlots` is installed (the bound then holds in
                this process only).
        """
        gate = _gate(self.endpoint, self._limit)
        await gate.acquire(self._limit)
        try:
            slots = _SLOTS.get() if self.max_concurrency_global is not None else None
            if self.max_concurrency_global is not None and slots is None:
                self._warn_unshared()
            if slots is None or self.max_concurrency_global is None:
                yield
            else:
                async with slots.hold(self.endpoint, self.max_concurrency_global):
                    yield
        finally:
            gate.release()

    def _warn_unshared(self) -> None:
        if self.endpoint in _WARNED:
            return
        _WARNED.add(self.endpoint)
        warnings.warn(
            f"max_concurrency_global={self.max_concurrency_global} of {self.endpoint} "
            "bounds this process only: slots shared with other processes exist in "
            "`sanctum worker` and `sanctum run --inputs` with a PostgreSQL codex",
            RuntimeWarning,
            stacklevel=4,
        )

    async def _call(self, ask: Callable[[], Awaitable[_T]]) -> _T:
        async with self.place():
            return await ask()

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """``inner.generate`` once a place is free.

        Raises:
            OracleError: As ``inner`` raises it (the place is given back).
        """
        return await self._call(lambda: self.inner.generate(messages, spells))

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """``inner.generate_constrained`` once a place is free.

        Raises:
            OracleError: As ``inner`` raises it (the place is given back).
        """
        return await self._call(lambda: self.inner.generate_constrained(messages, schema))

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """``inner``'s stream (text chunks, then one OracleResponse), holding a place
        from before the request until the stream ends or is closed.

        An ``inner`` without ``stream_response`` streams its ``stream_generate``
        chunks, then an OracleResponse of their text.

        Raises:
            OracleError: As ``inner`` raises it (the place is given back).
        """
        async with self.place():
            stream = getattr(self.inner, "stream_response", None)
            if stream is not None:
                async for item in stream(messages, spells):
                    yield item
                return
            parts: list[str] = []
            async for chunk in self.inner.stream_generate(messages, spells):
                parts.append(chunk)
                yield chunk
            yield OracleResponse(text="".join(parts))

    async def aclose(self) -> None:
        """Close ``inner``."""
        await self.inner.aclose()


def limited(
    oracle: Oracle,
    *,
    max_concurrency: int | None = None,
    max_concurrency_global: int | None = None,
    endpoint: str | None = None,
) -> Oracle:
    """``oracle`` bounded per endpoint; itself when both bounds are None.

    The Python form of the ritual file's ``max_concurrency`` and
    ``max_concurrency_global`` keys (see :class:`LimitedOracle`)::

        gpu = limited(OllamaOracle("qwen2.5:7b", base_url="http://gpu-3:11434"),
                      max_concurrency=2)

    Raises:
        ValueError: If a bound is not an int >= 1.
    """
    if max_concurrency is None and max_concurrency_global is None:
        return oracle
    return LimitedOracle(
        oracle,
        endpoint=endpoint,
        max_concurrency=max_concurrency,
        max_concurrency_global=max_concurrency_global,
    )
