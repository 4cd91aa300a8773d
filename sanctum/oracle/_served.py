"""What every Oracle behind an HTTP server shares (Ollama, OpenAI-compatible servers).

Private: the public adapters are :class:`sanctum.oracle.ollama.OllamaOracle` and
:class:`sanctum.oracle.openai_compat.OpenAICompatibleOracle`. Stdlib only at import
time; the HTTP client (httpx) is created lazily by :class:`HttpOracleClient`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from sanctum.oracle._http import HttpOracleClient
from sanctum.oracle.base import Message, Oracle, OracleResponse

__all__ = ["ServedOracle"]


class ServedOracle(Oracle):
    """An Oracle whose model answers over HTTP through one :class:`HttpOracleClient`.

    Subclasses set ``self._http`` and implement :meth:`stream_response` (text chunks,
    then one final :class:`OracleResponse`); this class derives ``stream_generate``
    from it and owns the connection's lifetime.
    """

    _http: HttpOracleClient

    @property
    def base_url(self) -> str:
        """The server address requests go to."""
        return self._http.base_url

    @property
    def timeout(self) -> float:
        """Seconds allowed for connecting and for each read."""
        return self._http.timeout

    def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream text chunks, then the complete :class:`OracleResponse` (tool calls too)."""
        raise NotImplementedError

    async def stream_generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str]:
        """Answer the transcript as a stream of text chunks.

        Raises:
            OracleError: As :meth:`stream_response`.
        """
        async for item in self.stream_response(messages, spells):
            if isinstance(item, str):
                yield item

    async def aclose(self) -> None:
        """Close the pooled HTTP connections."""
        await self._http.aclose()
