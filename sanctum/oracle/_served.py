"""What every Oracle behind an HTTP server shares (Ollama, OpenAI-compatible servers).

Private: the public adapters are :class:`sanctum.oracle.ollama.OllamaOracle` and
:class:`sanctum.oracle.openai_compat.OpenAICompatibleOracle`. Stdlib only at import
time; the HTTP client (httpx) is created lazily by :class:`HttpOracleClient`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sanctum.oracle._http import HttpOracleClient
from sanctum.oracle.base import StreamingOracle

__all__ = ["ServedOracle", "function_tools", "message_text"]


def function_tools(spells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Translate Spell schemas into the ``tools`` list both wire formats share.

    Ollama's ``/api/chat`` and OpenAI's ``/v1/chat/completions`` describe a tool the
    same way: ``{"type": "function", "function": {"name", "description",
    "parameters"}}``.

    Args:
        spells: Spell schemas, each ``{"name", "description", "parameters"}``.

    Returns:
        The tools, in the same order.
    """
    return [
        {
            "type": "function",
            "function": {
                "name": str(schema.get("name", "")),
                "description": str(schema.get("description", "") or ""),
                "parameters": schema.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for schema in spells
    ]


def message_text(content: Any) -> str:
    """A transcript entry's content as the text a server expects (JSON for non-strings)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, default=str)


class ServedOracle(StreamingOracle):
    """An Oracle whose model answers over HTTP through one :class:`HttpOracleClient`.

    Subclasses set ``self._http`` and implement :meth:`stream_response` (text chunks,
    then one final :class:`OracleResponse`; ``stream_generate`` derives from it, see
    :class:`~sanctum.oracle.base.StreamingOracle`); this class owns the connection's
    lifetime.
    """

    _http: HttpOracleClient

    @property
    def base_url(self) -> str:
        """The server address requests go to."""
        return self._http.base_url

    @property
    def timeout(self) -> float:
        """The deadline of each call, in seconds: connecting, the answer and the whole stream."""
        return self._http.timeout

    async def aclose(self) -> None:
        """Close the pooled HTTP connections."""
        await self._http.aclose()
