"""The Oracle that speaks through Hugging Face transformers, inside the process.

TransformersOracle — an LLM adapter running a causal language model in-process with
Hugging Face ``transformers`` (the ``transformers`` extra: ``pip install
'sanctum-rituals[transformers]'``, which brings ``transformers`` and ``torch``). ``transformers``
is imported when a model is loaded by name, never when this module is imported, and a
model and tokenizer you already loaded can be passed instead.

The transcript goes through the tokenizer's own chat template
(``apply_chat_template``), with the Spell schemas as its ``tools`` (OpenAI's function
format, which Hugging Face chat templates read). The model answers in text; calls it
writes there in the formats its family was trained on (``<tool_call>`` for Qwen and
Hermes, ``<function=NAME>`` for Llama 3.1, ``[TOOL_CALLS]`` for Mistral, bare JSON) are
parsed with :func:`sanctum.oracle.robust.parse_spell_blocks`. A chat template that
cannot take tools raises an :class:`~sanctum.errors.OracleResponseError` saying so, so
``PromptedSpellCalling(..., mode="auto")`` (``summon(spell_calling="auto")``) switches
to prompted calling. Blocking model calls run in a worker thread, one at a time per
Oracle.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from sanctum.errors import OracleConnectionError, OracleResponseError
from sanctum.oracle._served import function_tools
from sanctum.oracle._threads import stream_from_thread
from sanctum.oracle.base import Message, OracleResponse, StreamingOracle
from sanctum.oracle.classify import classify_oracle_fault
from sanctum.oracle.robust import parse_spell_blocks

__all__ = ["TransformersOracle", "to_chat_template_messages"]

_EXTRA_HINT = (
    "install the extra: pip install 'sanctum-rituals[transformers]' (transformers and torch)"
)


def _import_transformers() -> Any:
    try:
        return importlib.import_module("transformers")
    except ImportError as exc:
        raise ImportError(
            f"TransformersOracle needs Hugging Face transformers, which is not installed: "
            f"{_EXTRA_HINT}"
        ) from exc


def to_chat_template_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Translate a sanctum transcript into the messages Hugging Face chat templates read.

    ``role: "spell"`` results become ``role: "tool"`` messages (with ``name`` and
    ``tool_call_id``); an assistant turn's ``spell_calls`` become ``tool_calls`` in
    OpenAI's function shape with the arguments as a dict (what the templates expect).
    Other messages keep their role and text content.

    Args:
        messages: The transcript (``list[Message]``); not mutated.

    Returns:
        A new list of plain dicts.
    """
    chat: list[dict[str, Any]] = []
    for message in messages:
        role = str(message.get("role") or "user")
        content = message.get("content")
        text = "" if content is None else str(content)
        if role == "spell":
            entry: dict[str, Any] = {"role": "tool", "content": text}
            if message.get("name"):
                entry["name"] = str(message["name"])
            if message.get("call_id"):
                entry["tool_call_id"] = str(message["call_id"])
            chat.append(entry)
            continue
        entry = {"role": role, "content": text}
        calls = message.get("spell_calls") if role == "assistant" else None
        if calls:
            entry["tool_calls"] = [
                {
                    "type": "function",
                    "id": str(call.get("call_id") or f"call_{index}"),
                    "function": {
                        "name": str(call.get("spell") or ""),
                        "arguments": dict(call.get("arguments") or {}),
                    },
                }
                for index, call in enumerate(calls, start=1)
                if isinstance(call, Mapping)
            ]
        chat.append(entry)
    return chat


def _flat(ids: Any) -> list[int]:
    """Token ids of a tensor, array or nested list, as one flat list of ints."""
    values = ids.tolist() if hasattr(ids, "tolist") else ids
    if isinstance(values, int):
        return [values]
    out: list[int] = []
    for item in values:
        out.extend(_flat(item) if not isinstance(item, int) else [item])
    return out


class _TokenStream:
    """The streamer protocol of ``model.generate`` (``put(ids)``, ``end()``), as text.

    The first ``put`` is the prompt (skipped); every later one appends new token ids,
    and the newly decoded text is handed to ``emit`` — held back while it ends in an
    incomplete character (U+FFFD), so a multi-byte character is never split.
    """

    def __init__(self, tokenizer: Any, emit: Any, stop: threading.Event) -> None:
        self._tokenizer = tokenizer
        self._emit = emit
        self._stop = stop
        self._ids: list[int] = []
        self._shown = 0
        self._prompt_seen = False

    def put(self, value: Any) -> None:
        if not self._prompt_seen:
            self._prompt_seen = True
            return
        if self._stop.is_set():
            raise _Stopped
        self._ids.extend(_flat(value))
        self._flush(final=False)

    def end(self) -> None:
        self._flush(final=True)

    def _flush(self, *, final: bool) -> None:
        text = self._tokenizer.decode(self._ids, skip_special_tokens=True)
        if not final and text.endswith("\ufffd"):
            return
        if len(text) > self._shown:
            self._emit(text[self._shown :])
            self._shown = len(text)


class _Stopped(Exception):
    """The consumer went away: stop generating."""


class TransformersOracle(StreamingOracle):
    """The voice of a Hugging Face model, woken inside this very process.

    Oracle — an LLM adapter — over ``transformers``' ``AutoModelForCausalLM`` and
    ``AutoTokenizer`` (or a model and tokenizer you loaded). The model loads on first
    use, in a worker thread. ``arcana`` is ``"transformers:<model name>"``.

    Args:
        model: A model name on the Hugging Face Hub or a local folder (loaded with
            ``from_pretrained``), or an already loaded model (then ``tokenizer`` is
            required).
        tokenizer: The tokenizer, when ``model`` is a loaded model (or to override the
            one loaded by name).
        device: Where to put a model loaded by name (``"cpu"``, ``"cuda"``, ...;
            ``None``: transformers' default).
        max_new_tokens: Most tokens generated per answer.
        temperature: Sampling temperature; ``None`` or ``0`` decodes greedily
            (repeatable answers).
        model_kwargs: Further ``from_pretrained`` arguments for the model (e.g.
            ``{"torch_dtype": "auto"}``).
        generation_kwargs: Further ``model.generate`` arguments.

    Raises:
        ImportError: If ``model`` is a name and transformers is missing (the message
            names the extra).
        ValueError: If ``model`` is a loaded model and no ``tokenizer`` is given, or
            ``max_new_tokens`` is not positive.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any,
        *,
        tokenizer: Any = None,
        device: str | None = None,
        max_new_tokens: int = 512,
        temperature: float | None = None,
        model_kwargs: Mapping[str, Any] | None = None,
        generation_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
            raise ValueError(f"max_new_tokens must be a positive int, not {max_new_tokens!r}")
        if max_new_tokens <= 0:
            raise ValueError(f"max_new_tokens must be > 0, not {max_new_tokens}")
        by_name = isinstance(model, str | os.PathLike)
        if by_name:
            self._transformers: Any = _import_transformers()
            self.name = os.fspath(model)
            self._model: Any = None
        else:
            if tokenizer is None:
                raise ValueError("a loaded model needs its tokenizer: pass tokenizer=")
            self._transformers = None
            config = getattr(model, "config", None)
            self.name = str(
                getattr(model, "name_or_path", None)
                or getattr(config, "name_or_path", None)
                or type(model).__name__
            )
            self._model = model
        self._tokenizer: Any = tokenizer
        self.device = device
        self.arcana = f"transformers:{self.name}"
        self.max_new_tokens = max_new_tokens
        self._model_kwargs = dict(model_kwargs or {})
        self._generation: dict[str, Any] = {"max_new_tokens": max_new_tokens}
        if temperature:
            self._generation.update(do_sample=True, temperature=float(temperature))
        else:
            self._generation["do_sample"] = False
        self._generation.update(generation_kwargs or {})
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TransformersOracle({self.name!r}, max_new_tokens={self.max_new_tokens})"

    # ----------------------------------------------------------------- model
    def _load(self) -> tuple[Any, Any]:
        """The model and tokenizer, loading them once (call with ``self._lock`` held)."""
        if self._model is None or self._tokenizer is None:
            library = self._transformers or _import_transformers()
            try:
                if self._tokenizer is None:
                    self._tokenizer = library.AutoTokenizer.from_pretrained(self.name)
                if self._model is None:
                    model = library.AutoModelForCausalLM.from_pretrained(
                        self.name, **self._model_kwargs
                    )
                    self._model = model.to(self.device) if self.device else model
            except (OSError, ValueError, RuntimeError, ImportError) as exc:
                raise OracleConnectionError(
                    f"transformers could not load the model {self.name!r}: {exc}. Likely "
                    "fix: check the name or folder, download it first "
                    "(huggingface-cli download NAME) or set HF_HUB_OFFLINE=0, and check "
                    "that it fits in memory.",
                    endpoint=self.name,
                ) from exc
        return self._model, self._tokenizer

    def _inputs(
        self,
        tokenizer: Any,
        messages: Sequence[Message],
        spells: Sequence[Mapping[str, Any]] | None,
    ) -> Any:
        chat = to_chat_template_messages(messages)
        try:
            if spells:
                prompt = tokenizer.apply_chat_template(
                    chat, tools=function_tools(spells), add_generation_prompt=True, tokenize=False
                )
            else:
                prompt = tokenizer.apply_chat_template(
                    chat, add_generation_prompt=True, tokenize=False
                )
        except Exception as exc:  # jinja2 TemplateError, ValueError: no template, ...
            what = "tools (spells)" if spells else "this transcript"
            raise OracleResponseError(
                f"the chat template of {self.name!r} cannot render {what}: {exc}. Likely "
                "fix: use spell_calling='auto' or 'prompted' for a model whose template "
                "does not support tools, or give the tokenizer a chat_template.",
                endpoint=self.name,
                status=None,
                body=str(exc)[:500],
            ) from exc
        return tokenizer(prompt, return_tensors="pt", add_special_tokens=False)

    def _failure(self, exc: Exception) -> OracleResponseError:
        text = str(exc)
        lead = f"transformers failed to answer with {self.name!r}: {text}."
        probe = OracleResponseError(lead, endpoint=self.name, body=text[:500])
        hint = classify_oracle_fault(probe).fix_for(self.name)
        return OracleResponseError(
            f"{lead} Likely fix: {hint}.",
            endpoint=self.name,
            status=None,
            body=text[:500],
        )

    def _run(
        self,
        messages: Sequence[Message],
        spells: Sequence[Mapping[str, Any]] | None,
        streamer: Any = None,
        stop: threading.Event | None = None,
    ) -> tuple[str, dict[str, int]]:
        """Generate one answer (worker thread). Returns the text and the token counts."""
        with self._lock:
            model, tokenizer = self._load()
            inputs = self._inputs(tokenizer, messages, spells)
            device = getattr(model, "device", None)
            if device is not None and hasattr(inputs, "to"):
                inputs = inputs.to(device)
            prompt_ids = _flat(inputs["input_ids"])
            options = dict(self._generation)
            pad = getattr(tokenizer, "pad_token_id", None)
            if pad is None:
                pad = getattr(tokenizer, "eos_token_id", None)
            if pad is not None:
                options.setdefault("pad_token_id", pad)
            if streamer is not None:
                options["streamer"] = streamer
            try:
                output = model.generate(**inputs, **options)
            except _Stopped:
                return "", {"prompt_tokens": len(prompt_ids), "completion_tokens": 0}
            except (ValueError, RuntimeError, TypeError, IndexError) as exc:
                raise self._failure(exc) from exc
            sequence = _flat(output[0])
            new = (
                sequence[len(prompt_ids) :]
                if sequence[: len(prompt_ids)] == prompt_ids
                else sequence
            )
            text = tokenizer.decode(new, skip_special_tokens=True)
        usage = {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(new),
            "total_tokens": len(prompt_ids) + len(new),
        }
        return str(text), usage

    @staticmethod
    def _answer(text: str, spells: Sequence[Any] | None, usage: dict[str, int]) -> OracleResponse:
        if spells:
            prose, calls = parse_spell_blocks(text)
            if calls:
                return OracleResponse(text=prose, spell_calls=calls, usage=usage)
        return OracleResponse(text=text, usage=usage)

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer the transcript in one piece.

        Args:
            messages: The transcript (``list[Message]``).
            spells: Spell schemas, passed to the chat template as ``tools``, or ``None``.

        Returns:
            The answer (calls the model wrote parsed into ``spell_calls`` when Spells
            were given) and ``usage`` (``prompt_tokens``, ``completion_tokens``,
            ``total_tokens``).

        Raises:
            ImportError: transformers is missing (a model given by name).
            OracleConnectionError: The model could not be loaded.
            OracleResponseError: The chat template cannot render the transcript or the
                tools, or generation failed.
        """
        text, usage = await asyncio.to_thread(self._run, messages, spells)
        return self._answer(text, spells, usage)

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream the answer: text chunks as they are decoded, then the whole response.

        Every item but the last is a non-empty ``str``; the last is the
        :class:`OracleResponse` (with the parsed calls). Closing the stream early stops
        the generation at the next token.

        Raises:
            OracleError: As :meth:`generate`.
        """

        def produce(put: Callable[[Any], None], stop: threading.Event) -> None:
            with self._lock:
                _model, tokenizer = self._load()
            put(self._run(messages, spells, _TokenStream(tokenizer, put, stop), stop))

        result: tuple[str, dict[str, int]] | None = None
        produced = stream_from_thread(produce, "sanctum-transformers")
        async with contextlib.aclosing(produced) as items:  # closing it stops the model
            async for item in items:
                if isinstance(item, tuple):
                    result = item
                elif item:
                    yield item
        text, usage = result if result is not None else ("", {})
        yield self._answer(text, spells, usage)

    async def aclose(self) -> None:
        """Drop a model loaded by name (it reloads on the next call); keep a given one."""
        if self._transformers is not None:
            with self._lock:
                self._model = None
