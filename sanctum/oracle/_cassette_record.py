"""Recording a cassette: the recorder and the Oracle that writes through it (private).

See :mod:`sanctum.oracle.cassette` for the format.
"""

from __future__ import annotations

import datetime
import json
import threading
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sanctum.errors import CassetteError
from sanctum.oracle._cassette_file import (
    CASSETTE_VERSION,
    Masks,
    Scoped,
    answer_dict,
    jsonable,
    masked_chunks,
    options_of,
    provider_of,
    read_lines,
    request_digest,
)
from sanctum.oracle.base import Message, Oracle, OracleResponse, StreamingOracle


class CassetteRecorder:
    """Writes one cassette: a header, a session line, then a line per call.

    Shared by every :class:`RecordingOracle` of a run, so call numbers count per
    (oracle, sigil) over the whole file. Lines are flushed as they are written: a run
    that stops half-way leaves a valid cassette of the calls made so far.

    Args:
        path: The cassette file (``.jsonl`` by convention). Its folder is created.
        secrets: What to mask (a ``sanctum.wards.Secrets`` or anything with
            ``mask(value)``); more may be added with :meth:`add_secrets`.
        append: Add a session to an existing cassette (a resume) instead of starting
            a new file. A new file keeps the matching rules of the file it replaces.
        command: The session's command (``run``, ``resume``, ``test`` or ``python``).
        superstep: The superstep of the Seal a resume continues from (0: a fresh run).
        invocation: The invocation id, for reading.

    Raises:
        CassetteError: If ``append`` names a file that is not a cassette, or the file
            cannot be written.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        secrets: Masks | None = None,
        append: bool = False,
        command: str = "python",
        superstep: int = 0,
        invocation: str | None = None,
    ) -> None:
        self.path = Path(path)
        self._masker = secrets
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str | None, str], int] = {}
        header: dict[str, Any] = {
            "cassette": "sanctum",
            "version": CASSETTE_VERSION,
            "match": "request",
            "ignore": [],
            "oracles": {},
        }
        previous: list[dict[str, Any]] = []
        if self.path.exists():
            try:
                previous = read_lines(self.path)
            except CassetteError:
                if append:
                    raise
                previous = []
        if previous:
            for rule in ("match", "ignore", "oracles"):
                if rule in previous[0]:
                    header[rule] = previous[0][rule]
        self.session = 0
        lines: list[dict[str, Any]] = [header]
        if append and previous:
            lines = []
            sessions = [p for p in previous if p.get("kind") == "session"]
            self.session = len(sessions)
            for item in previous:
                kind = item.get("kind")
                if kind == "oracle":
                    key = (str(item.get("oracle")), item.get("sigil"), "oracle")
                    self._counts[key] = max(self._counts.get(key, 0), int(item.get("number", 0)))
                elif kind == "spell":
                    key = (str(item.get("spell")), None, "spell")
                    self._counts[key] = max(self._counts.get(key, 0), int(item.get("number", 0)))
        lines.append(
            {
                "kind": "session",
                "session": self.session,
                "command": command,
                "superstep": superstep,
                "invocation": invocation,
                "recorded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            }
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a" if append and previous else "w", encoding="utf-8") as out:
                for line in lines:
                    out.write(self._dump(line) + "\n")
        except OSError as exc:
            raise CassetteError(
                f"cannot write the cassette {self.path}: {exc.strerror or exc}",
                path=str(self.path),
            ) from None

    def add_secrets(self, secrets: Masks | None) -> None:
        """Mask ``secrets`` too (combined with ``|`` when both are Secrets)."""
        if secrets is None or not secrets:
            return
        if self._masker is None or not self._masker:
            self._masker = secrets
        else:
            self._masker = self._masker | secrets  # type: ignore[operator]

    def mask(self, value: Any) -> Any:
        """``value`` with every secret masked (unchanged without secrets)."""
        return value if self._masker is None else self._masker.mask(value)

    def _dump(self, line: Mapping[str, Any]) -> str:
        return json.dumps(line, ensure_ascii=False, default=str)

    def _write(self, line: dict[str, Any]) -> None:
        text = self._dump(line)
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(text + "\n")

    def _number(self, key: tuple[str, str | None, str]) -> int:
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]

    def record_call(
        self,
        *,
        oracle: str,
        sigil: str | None,
        provider: str,
        model: str,
        request: Mapping[str, Any],
        response: OracleResponse,
        chunks: list[tuple[float, str]] | None,
    ) -> None:
        """Append one Oracle call (masked). ``chunks`` are ``(seconds, text)`` pairs."""
        masked_request = self.mask(jsonable(dict(request)))
        answer = self.mask(answer_dict(response))
        stream = None
        if chunks is not None:
            stream = [[round(t, 4), c] for t, c in masked_chunks(chunks, self._masker)]
        self._write(
            {
                "kind": "oracle",
                "session": self.session,
                "oracle": oracle,
                "sigil": sigil,
                "number": self._number((oracle, sigil, "oracle")),
                "provider": provider,
                "model": self.mask(model),
                "digest": request_digest(masked_request),
                "request": masked_request,
                "answer": answer,
                "stream": stream,
            }
        )

    def record_spell(
        self, *, spell: str, arguments: Mapping[str, Any], result: Any, error: BaseException | None
    ) -> None:
        """Append one cast of a recorded Spell (masked)."""
        arguments = self.mask(jsonable(dict(arguments)))
        self._write(
            {
                "kind": "spell",
                "session": self.session,
                "spell": spell,
                "number": self._number((spell, None, "spell")),
                "digest": request_digest({"messages": arguments, "spells": None}),
                "arguments": arguments,
                "result": self.mask(jsonable(result)),
                "error": None
                if error is None
                else {"type": type(error).__name__, "message": self.mask(str(error))},
            }
        )

    def oracle(
        self,
        inner: Oracle,
        *,
        name: str,
        sigil: str | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> RecordingOracle:
        """A :class:`RecordingOracle` around ``inner`` writing to this cassette."""
        return RecordingOracle(inner, self, name=name, sigil=sigil, provider=provider, model=model)

    def scoped(self, prefix: str) -> Scoped:
        """A view whose sigil names are ``prefix/sigil`` (the sigils of a Circle)."""
        return Scoped(self, prefix)


# ---------------------------------------------------------------------- recording


class RecordingOracle(StreamingOracle):
    """An Oracle that answers as ``inner`` does and writes each call to a cassette.

    Args:
        inner: The real Oracle.
        cassette: A cassette path (a new :class:`CassetteRecorder` is opened on it) or a
            recorder shared with other RecordingOracles.
        name: The oracle's name (the ritual file's key), matched on replay.
        sigil: The sigil consulting it, matched on replay (None from plain Python).
        provider: For reading (default: from ``inner``'s class).
        model: For reading (default: ``inner.arcana``).
        secrets: Masking for a recorder opened here.

    Only calls that succeed are written; an error of ``inner`` passes through untouched
    (a retry then records its own call).
    """

    def __init__(
        self,
        inner: Oracle,
        cassette: str | Path | CassetteRecorder,
        *,
        name: str = "oracle",
        sigil: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        secrets: Masks | None = None,
    ) -> None:
        self.inner = inner
        self.recorder = (
            cassette
            if isinstance(cassette, CassetteRecorder)
            else CassetteRecorder(cassette, secrets=secrets)
        )
        self.name = name
        self.sigil = sigil
        self.provider = provider or provider_of(inner)
        self.model = model or str(getattr(inner, "arcana", "unknown"))
        self.arcana = str(getattr(inner, "arcana", "unknown"))
        self.constrains_output = bool(getattr(inner, "constrains_output", False))

    def _request(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None
    ) -> dict[str, Any]:
        return {
            "messages": jsonable(list(messages)),
            "spells": None if spells is None else jsonable(list(spells)),
            "options": options_of(self.inner),
        }

    def _record(
        self,
        request: dict[str, Any],
        response: OracleResponse,
        chunks: list[tuple[float, str]] | None,
    ) -> None:
        provider, model = self.provider, self.model
        answered = _answered_by(self.inner, response)
        if answered is not None:
            provider = provider_of(answered)
            model = str(getattr(answered, "model", None) or getattr(answered, "arcana", "unknown"))
        self.recorder.record_call(
            oracle=self.name,
            sigil=self.sigil,
            provider=provider,
            model=model,
            request=request,
            response=response,
            chunks=chunks,
        )

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Ask ``inner`` and record the answer.

        Raises:
            OracleError: As ``inner`` does (nothing is recorded).
        """
        request = self._request(messages, spells)
        response = await self.inner.generate(messages, spells)
        self._record(request, response, None)
        return response

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """Ask ``inner`` for an answer held to ``schema`` and record it (with the schema).

        Raises:
            OracleError: As ``inner`` does (nothing is recorded).
        """
        request = self._request(messages, None)
        request["schema"] = jsonable(dict(schema))
        response = await self.inner.generate_constrained(messages, schema)
        self._record(request, response, None)
        return response

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream ``inner``'s answer, recording each chunk with its offset in seconds.

        An Oracle without ``stream_response`` is streamed through ``stream_generate``
        (the response is then the joined text). The call is written once the stream
        ends; a stream abandoned half-way is not recorded.

        Raises:
            OracleError: As ``inner`` does.
        """
        request = self._request(messages, spells)
        started = time.monotonic()
        chunks: list[tuple[float, str]] = []
        response: OracleResponse | None = None
        streamer = getattr(self.inner, "stream_response", None)
        if streamer is not None:
            async for item in streamer(messages, spells):
                if isinstance(item, OracleResponse):
                    response = item
                else:
                    chunks.append((time.monotonic() - started, item))
                yield item
        else:
            async for text in self.inner.stream_generate(messages, spells):
                chunks.append((time.monotonic() - started, text))
                yield text
        if response is None:
            response = OracleResponse("".join(text for _, text in chunks))
            yield response
        self._record(request, response, chunks)

    async def aclose(self) -> None:
        """Close ``inner``."""
        await self.inner.aclose()


def _answered_by(inner: Oracle, response: OracleResponse) -> Oracle | None:
    """The Oracle of a fallback chain that gave ``response``, when it is not the primary.

    A :class:`~sanctum.oracle.fallback.FallbackOracle` names the Oracle that answered
    in ``usage["fallback"]["oracle"]``; the cassette then records that Oracle's
    provider and model, not the primary's.
    """
    record = response.usage.get("fallback") if response.usage else None
    names = getattr(inner, "names", None)
    oracles = getattr(inner, "oracles", None)
    if not isinstance(record, Mapping) or names is None or oracles is None:
        return None
    answered = record.get("oracle")
    if answered not in names:
        return None
    found: Oracle = oracles[list(names).index(answered)]
    return found
