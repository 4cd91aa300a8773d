"""How a model server's answer is judged: tool refusals, model-output failures.

Private to the HTTP Oracles (re-exported by :mod:`sanctum.oracle._http`, whose names
these stay). Pure functions over status codes and body text; standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sanctum.errors import OracleResponseError
from sanctum.wards.redact import mask_secrets

__all__ = [
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


_SCHEMA_WORDS = re.compile(
    r"response_format|json_schema|json schema|grammar|\bformat\b|\bschema\b|structured output",
    re.IGNORECASE,
)


def is_schema_rejection(err: BaseException) -> bool:
    """Whether an Oracle error says the endpoint refuses output constrained to a schema.

    A request for constrained output (``response_format``, llama.cpp's ``json_schema``,
    Ollama's ``format``) that a server does not understand comes back as a 4xx, or a
    5xx naming the schema or grammar it could not compile. Authentication, a missing
    model or endpoint (401, 403, 404), rate limits and timeouts are not rejections.
    Used by ``ConstrainedSpellCalling`` to fall back on prompted spell calling.

    Args:
        err: Any exception; only :class:`OracleResponseError` can qualify.

    Returns:
        ``True`` when the error reads as a refusal of the schema.
    """
    if not isinstance(err, OracleResponseError) or is_model_output_failure(err):
        return False
    status = err.status
    if status in (401, 403, 404, 408, 429):
        return False
    text = _error_text(err)
    if status is not None and 400 <= status < 500:
        return True
    return bool(_SCHEMA_WORDS.search(text)) or is_tool_rejection(err)


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
