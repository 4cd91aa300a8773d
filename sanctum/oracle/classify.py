"""Reading an Oracle's failure: what went wrong, and whether another voice should answer.

One public function, :func:`classify_oracle_fault`, maps any exception an Oracle
raised to an :class:`OracleFault`: a ``reason`` from a small set (:data:`FAULT_REASONS`)
and the decision that goes with it — retry the same Oracle, fall back to the next one
in a chain, compact the transcript, or fail. It reads only what the OracleError tree
already carries (the class, ``status``, ``body``, the message), never the network, so
it is a pure function and the same failure always gets the same verdict.

The taxonomy is for local servers (Ollama, llama-server, vLLM, LM Studio, in-process
llama.cpp), in the order the rules are tried:

==================  =====================================================  ===========
reason              evidence                                               action
==================  =====================================================  ===========
context_overflow    Ollama "input length exceeds the context length"       compact
                    (sent ``truncate: false``); llama-server
                    ``exceed_context_size_error``; vLLM "maximum context
                    length"; LM Studio "context length of only N";
                    llama-cpp-python "exceed context window"; HTTP 413
out_of_memory       Ollama "requires more system memory"; "out of          fallback
                    memory"; "failed to allocate"; cudaMalloc
loading             a 5xx saying the model is still loading:               retry
                    llama-server 503 "Loading model"; Ollama "llm server
                    loading model"
model_not_found     Ollama 404 "model ... not found"; vLLM "does not       fallback
                    exist"; any 404 that names the model
endpoint_not_found  any other 404 or 405 (an HTML page, Go's "404 page     fallback
                    not found"): base_url has no such endpoint
tools_unsupported   "does not support tools", "--jinja", ...               fail
model_output        llama-server 500 "Failed to parse input at pos N"      retry
connection          nobody listens (refused, DNS)                          fallback
stream_broken       the answer broke off after part of it arrived          fallback
timeout             no (whole) answer before the deadline                  retry
rate_limited        429                                                    retry
overloaded          503, 529                                               retry
server_error        other 5xx; an in-process model's failure               retry
auth                401, 403                                               fallback
bad_request         any other 4xx                                          fail
malformed_answer    a 2xx the adapter cannot read (not JSON, no            retry
                    message, a stream that ended before its end)
unknown             not an OracleError (a bug, not the server)             fail
==================  =====================================================  ===========

``retry`` means one more try on the same Oracle, then fall back; ``fail`` means the
error reaches the caller even when a fallback is configured (a 400 on a local server
most likely means the request is wrong, and falling back would hide it);
``compact`` means the prompt must shrink — a fallback does not help unless the next
Oracle has a larger window. ``tools_unsupported`` is answered by
``PromptedSpellCalling(mode="auto")``, not by a fallback.

The fix is worded here once per reason (:attr:`OracleFault.fix`): the HTTP Oracles
write the same words after "Likely fix:" in their messages
(:meth:`OracleFault.fix_for`), so the error and the ``hint:`` line the command line
prints under it always name the same cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from sanctum.errors import (
    ContextOverflowError,
    OracleConnectionError,
    OracleError,
    OracleOutputError,
    OracleResponseError,
    OracleTimeoutError,
)
from sanctum.oracle._verdicts import is_model_output_failure, is_tool_rejection

__all__ = [
    "FAULT_REASONS",
    "ContextOverflowError",
    "FaultAction",
    "FaultReason",
    "OracleFault",
    "classify_oracle_fault",
]

FaultReason = Literal[
    "context_overflow",
    "out_of_memory",
    "loading",
    "model_not_found",
    "endpoint_not_found",
    "tools_unsupported",
    "model_output",
    "connection",
    "stream_broken",
    "timeout",
    "rate_limited",
    "overloaded",
    "server_error",
    "auth",
    "bad_request",
    "malformed_answer",
    "unknown",
]
"""Why an Oracle failed, as a stable name (see the module's table)."""

FaultAction = Literal["retry", "fallback", "compact", "fail"]
"""What to do about it: try the same Oracle once more, the next one, shrink, or stop."""

FAULT_REASONS: tuple[str, ...] = (
    "context_overflow",
    "out_of_memory",
    "loading",
    "model_not_found",
    "endpoint_not_found",
    "tools_unsupported",
    "model_output",
    "connection",
    "stream_broken",
    "timeout",
    "rate_limited",
    "overloaded",
    "server_error",
    "auth",
    "bad_request",
    "malformed_answer",
    "unknown",
)
"""Every reason :func:`classify_oracle_fault` may give, in the order its rules run."""

_ACTIONS: dict[str, FaultAction] = {
    "context_overflow": "compact",
    "out_of_memory": "fallback",
    "loading": "retry",
    "model_not_found": "fallback",
    "endpoint_not_found": "fallback",
    "tools_unsupported": "fail",
    "model_output": "retry",
    "connection": "fallback",
    "stream_broken": "fallback",
    "timeout": "retry",
    "rate_limited": "retry",
    "overloaded": "retry",
    "server_error": "retry",
    "auth": "fallback",
    "bad_request": "fail",
    "malformed_answer": "retry",
    "unknown": "fail",
}

_BENCHED = frozenset(
    {"connection", "model_not_found", "endpoint_not_found", "out_of_memory", "auth"}
)
"""Reasons that will not heal by the next consultation: skip that Oracle for a while."""

_FIXES: dict[str, str] = {
    "context_overflow": (
        "the prompt is longer than the model's context window: turn on compaction "
        "(agent `compact:`), declare the oracle's `context_window:`, or raise num_ctx/n_ctx"
    ),
    "out_of_memory": (
        "the server cannot hold the model in memory: use a smaller model or quantisation, "
        "lower num_ctx/n_ctx, or close other models"
    ),
    "loading": (
        "the model is still loading on the server: wait until it is loaded and retry "
        "(the first answer may take a while; raise timeout if it is cut)"
    ),
    "model_not_found": "pull or load the model (e.g. `ollama pull <model>`), or fix its name",
    "model_not_found_openai": (
        "load the model on the server (llama-server -m FILE; LM Studio or vLLM: load or "
        "serve it), or fix its name to one GET /v1/models lists"
    ),
    "endpoint_not_found": (
        "check base_url: <endpoint> has no such endpoint (Ollama's base_url is the "
        "server's root; an OpenAI-compatible one ends in /v1)"
    ),
    "tools_unsupported": "use spell_calling: auto or prompted, or a tool-capable model",
    "tools_unsupported_jinja": (
        "restart llama-server with --jinja to enable tool calling, or use spell_calling: "
        "auto or prompted"
    ),
    "tools_unsupported_vllm": (
        "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>, or use "
        "spell_calling: auto or prompted"
    ),
    "model_output": (
        "retry; the model wrote a tool call its server could not parse (or use "
        "spell_calling: prompted)"
    ),
    "connection": "start the model server, or check base_url",
    "stream_broken": "check the server's log: the model may have crashed mid-answer",
    "timeout": "raise timeout (the first request may wait while weights load)",
    "rate_limited": "wait, or lower the request rate",
    "overloaded": "the server's queue is full: wait, or raise its parallel slots",
    "server_error": "check the model server's log (did the model crash?)",
    "server_error_in_process": (
        "check the model file and the generation options (options: / generation_kwargs)"
    ),
    "auth": "check the API key (api_key: '${MY_API_KEY}')",
    "bad_request": "check the request parameters (model, options, messages)",
    "malformed_answer": (
        "the server answered, but not as its API does: check that provider and base_url "
        "match the server, and the server's log (did the model crash mid-answer?)"
    ),
    "unknown": "this is not a model-server failure; see the traceback",
}
"""The likely fix of each reason (and of a reason's variants); ``<model>`` and
``<endpoint>`` stand for the model's name and the URL asked, filled in when known."""


@dataclass(frozen=True, slots=True)
class OracleFault:
    """The verdict on one Oracle failure.

    Attributes:
        reason: Why it failed (:data:`FaultReason`).
        action: What to do (:data:`FaultAction`).
        retry_same: Extra tries the same Oracle deserves before a fallback (0 or 1).
        fall_back: Whether the next Oracle of a chain may answer the same request.
        compact: Whether a smaller prompt would help (the window overflowed).
        bench: Whether the Oracle should be skipped for the next consultations (it
            will not heal by itself: nobody listens, the model is missing).
        window: The context window in tokens the server reported, when it did.
        status: The HTTP status, when there was one.
        fix: The likely fix, a clause that reads on its own (``<model>`` stands for
            the model's name: an exception does not carry it).
    """

    reason: FaultReason
    action: FaultAction
    retry_same: int
    fall_back: bool
    compact: bool
    bench: bool
    window: int | None = None
    status: int | None = None
    fix: str = ""

    def describe(self) -> str:
        """One line for a terminal: the reason, the HTTP status, the likely fix."""
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.reason.replace('_', ' ')}{status}: {self.fix}"

    def fix_for(self, model: str) -> str:
        """The likely fix with the model's name in place of ``<model>``.

        The HTTP Oracles write it after "Likely fix:" in their error messages.
        """
        return self.fix.replace("<model>", model)


_OVERFLOW = re.compile(
    r"exceed_context_size_error|exceeds? the (?:available )?context (?:size|length)"
    r"|context length exceeded|input length exceeds|maximum context length"
    r"|max_model_len|context length of only|context the overflows|exceed context window"
    r"|n_ctx_slot|slot context|prompt is too long|too many tokens|context window exceeded"
    r"|context_length_exceeded",
    re.IGNORECASE,
)
_WINDOW = re.compile(
    r"\"n_ctx\"\s*:\s*(\d+)|maximum context length is (\d+)|context length of only (\d+)"
    r"|context window of (\d+)|n_ctx(?:_slot)?\s*[=:]\s*(\d+)|max_model_len\s*[=:]?\s*(\d+)",
    re.IGNORECASE,
)
_MEMORY = re.compile(
    r"out of memory|requires more system memory|more memory than|insufficient memory"
    r"|failed to allocate|unable to allocate|cudaMalloc failed|cannot allocate|\bOOM\b",
    re.IGNORECASE,
)
_MISSING = re.compile(
    r"model ['\"`]?[^'\"`\s]*['\"`]? not found|not found, try pulling|does not exist"
    r"|model_not_found|no such model|unknown model|try pulling it",
    re.IGNORECASE,
)
_FORMATLIKE = re.compile(r"unknown (?:parameter|field|argument)|unrecogni[sz]ed", re.IGNORECASE)
_LOADING = re.compile(
    r"(?<!error )(?<!failed )\bloading (?:the )?model\b|model is (?:still )?loading"
    r"|still loading",
    re.IGNORECASE,
)
"""A server saying the model is on its way into memory (a 5xx worth waiting out)."""


def _text(exc: BaseException) -> str:
    """What the server said: the body, else the message (whose hints are sanctum's own)."""
    body = exc.body if isinstance(exc, OracleResponseError) else ""
    return body or str(exc.args[0] if exc.args else "")


def _window(text: str) -> int | None:
    """The context window (tokens) a server's overflow answer states, if it does."""
    match = _WINDOW.search(text)
    if match is None:
        return None
    number = next(group for group in match.groups() if group is not None)
    return int(number)


def _reason(exc: BaseException) -> FaultReason:
    """The reason, by the rules in the module's table, tried in order."""
    if not isinstance(exc, OracleError):
        return "unknown"
    if isinstance(exc, OracleTimeoutError):
        return "timeout"
    if isinstance(exc, OracleConnectionError):
        return "stream_broken" if "broke off its answer" in str(exc) else "connection"
    if not isinstance(exc, OracleResponseError):
        return "unknown"
    text = _text(exc)
    status = exc.status
    if isinstance(exc, OracleOutputError) or is_model_output_failure(exc):
        return "model_output"
    if status == 413 or _OVERFLOW.search(text):
        return "context_overflow"
    if _MEMORY.search(text):
        return "out_of_memory"
    if (status is None or status >= 500) and _LOADING.search(text):
        return "loading"
    if status in (404, 405) or _MISSING.search(text):
        return _missing(status, text)
    if is_tool_rejection(exc):
        return "tools_unsupported"
    return _by_status(status, text)


def _missing(status: int | None, text: str) -> FaultReason:
    """A 404 (or 405, or words saying so): the model is missing, or the endpoint is."""
    if status not in (404, 405) or _MISSING.search(text) or "model" in text.lower():
        return "model_not_found"
    return "endpoint_not_found"


def _by_status(status: int | None, text: str) -> FaultReason:
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    if status is not None and status >= 500:
        return "bad_request" if _FORMATLIKE.search(text) else "server_error"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    if status is not None and 200 <= status < 300:
        return "malformed_answer"
    return "server_error" if status is None else "unknown"


def classify_oracle_fault(exc: BaseException) -> OracleFault:
    """Read an Oracle's failure: its reason and whether retry, fallback or compaction helps.

    A pure function of the exception (its class, ``status``, ``body`` and message);
    see the module's table for the rules and their order. An exception that is not an
    :class:`~sanctum.errors.OracleError` is ``unknown`` and ``fail``: a bug in the
    code around the Oracle is never hidden behind a fallback.

    Args:
        exc: Any exception, usually an OracleError an Oracle raised.

    Returns:
        The verdict. ``window`` is set when the server stated its context window in
        tokens (llama-server's ``n_ctx``, vLLM's "maximum context length is N").
    """
    reason = _reason(exc)
    action = _ACTIONS[reason]
    text = _text(exc)
    status = exc.status if isinstance(exc, OracleResponseError) else None
    return OracleFault(
        reason=reason,
        action=action,
        retry_same=1 if action == "retry" else 0,
        fall_back=action in ("retry", "fallback"),
        compact=reason == "context_overflow",
        bench=reason in _BENCHED,
        window=_window(text) if reason == "context_overflow" else None,
        status=status,
        fix=_fix(reason, exc),
    )


def _fix_key(reason: str, exc: BaseException) -> str:
    """Which wording of the fix fits: a reason's variant for where the failure came from.

    A missing model is pulled on Ollama and loaded elsewhere; refused tools are fixed
    by a flag on llama-server and on vLLM; an in-process model has no server log.
    """
    endpoint = str(getattr(exc, "endpoint", "") or "")
    text = _text(exc).lower()
    if reason == "model_not_found" and endpoint and "/api/" not in endpoint:
        return "model_not_found" if "pull" in text else "model_not_found_openai"
    if reason == "tools_unsupported" and "--jinja" in text:
        return "tools_unsupported_jinja"
    if reason == "tools_unsupported" and "enable-auto-tool-choice" in text:
        return "tools_unsupported_vllm"
    if reason == "server_error" and endpoint and not endpoint.startswith(("http:", "https:")):
        return "server_error_in_process"
    return reason


def _fix(reason: str, exc: BaseException) -> str:
    """The fix's words for ``exc``, with the endpoint it asked filled in."""
    endpoint = str(getattr(exc, "endpoint", "") or "") or "that address"
    return _FIXES[_fix_key(reason, exc)].replace("<endpoint>", endpoint)
