"""Cassettes: record a real run's Oracle calls once, replay them offline.

A cassette is one JSON Lines file (UTF-8, one JSON object per line):

* line 1, the header: ``{"cassette": "sanctum", "version": 1, "match": "request",
  "ignore": [], "oracles": {}}`` — ``match`` and ``ignore`` are the matching rules for
  every oracle, ``oracles`` maps an oracle name to its own ``{"match", "ignore"}``.
  Re-recording keeps the header's rules.
* a session line per recording (a run, or a resume appended to it):
  ``{"kind": "session", "session": 0, "command": "run", "superstep": 0,
  "invocation": "…", "recorded_at": "2025-01-01T12:00:00+00:00"}`` — ``superstep``
  is the Seal's superstep a resume continued from (0 for a fresh run).
* a line per Oracle call: ``{"kind": "oracle", "session": 0, "oracle": "local",
  "sigil": "classify", "number": 1, "provider": "ollama", "model": "qwen2.5:7b",
  "digest": "sha256:…", "request": {"messages": […], "spells": […] | null,
  "options": {…}}, "answer": {"text": "…", "spell_calls": [{"spell", "arguments",
  "call_id"}], "usage": {…}}, "stream": [[0.0125, "Hel"], [0.031, "lo"]] | null}`` —
  ``number`` counts the calls of one oracle from one sigil, 1-based, over the whole
  cassette; ``stream`` holds the streamed text chunks with their offsets in seconds
  from the start of the call (null for a call answered in one piece).
* a line per recorded Spell cast (:meth:`CassetteRecorder.record_spell`; the Grimoire
  does not call it yet, so spells re-run on replay): ``{"kind": "spell", "session": 0,
  "spell": "send_mail", "number": 1, "digest": "sha256:…", "arguments": {…},
  "result": …, "error": null | {"type": "…", "message": "…"}}``.

Everything written passes through the recorder's masking (a ``Secrets`` or any object
with a ``mask(value)`` method): a cassette never holds a secret. The ``digest`` is the
SHA-256 of the masked request's messages and spell schemas as canonical JSON
(``options`` are kept for reading, never compared).

Matching, on replay: the calls of each (oracle, sigil) pair are answered in recorded
order. ``match: request`` (the default) wants the request's digest to equal the
recorded one; ``match: order`` compares the recorded and the actual request after
every match of the ``ignore`` regular expressions (in any string of the request) is
replaced by ``…`` (``ignore: ['(?s).*']`` stops comparing altogether). When the next
recorded call does not fit but a later one of the same pair does (a scatter's
concurrent calls finishing in another order), that one answers. Otherwise
:class:`~sanctum.errors.CassetteMismatch` names the sigil and the call number and
shows a unified diff of the two requests.

Standard library only.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import difflib
import hashlib
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from sanctum.errors import CassetteError, CassetteMismatch
from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall, StreamingOracle

__all__ = [
    "CASSETTE_VERSION",
    "CassettePlayer",
    "CassetteRecorder",
    "RecordingOracle",
    "ReplayOracle",
    "request_digest",
]

CASSETTE_VERSION = 1
"""The format version this sanctum writes and reads."""

MatchMode = Literal["request", "order"]
_MATCH_MODES = ("request", "order")
_DIFF_LINES = 40
_OPTION_NAMES = (
    "options",
    "extra_body",
    "keep_alive",
    "temperature",
    "max_tokens",
    "max_new_tokens",
    "n_ctx",
    "spell_calling",
)


class _Masks(Protocol):
    def mask(self, value: Any) -> Any: ...


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (unknown objects become their ``str``)."""
    return json.loads(json.dumps(value, default=str, allow_nan=True))


def request_digest(request: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of a request's ``messages`` and ``spells`` as canonical JSON.

    Args:
        request: A mapping with ``messages`` (a list of message dicts) and ``spells``
            (a list of JSON schemas, or None); other keys are not digested.

    Returns:
        The digest, e.g. ``"sha256:9f86d0…"``.
    """
    body = {"messages": request.get("messages"), "spells": request.get("spells")}
    return "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


def _provider_of(oracle: Oracle) -> str:
    """A short provider name for an Oracle, from its class's module."""
    module = type(oracle).__module__.rsplit(".", 1)[-1]
    return {
        "ollama": "ollama",
        "openai_compat": "openai",
        "llamacpp": "llamacpp",
        "transformers": "transformers",
        "scripted": "scripted",
    }.get(module, type(oracle).__name__)


def _options_of(oracle: Oracle) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in _OPTION_NAMES:
        value = getattr(oracle, name, None)
        if value is not None and isinstance(value, (str, int, float, bool, dict, list)):
            found[name] = value
    options: dict[str, Any] = _jsonable(found)
    return options


def _answer_dict(response: OracleResponse) -> dict[str, Any]:
    return {
        "text": response.text,
        "spell_calls": [call.to_message() for call in response.spell_calls],
        "usage": _jsonable(response.usage),
    }


def _answer_of(data: Mapping[str, Any]) -> OracleResponse:
    calls = [
        SpellCall(str(c["spell"]), copy.deepcopy(dict(c.get("arguments") or {})), c.get("call_id"))
        for c in data.get("spell_calls") or ()
    ]
    return OracleResponse(
        str(data.get("text", "")), calls, copy.deepcopy(dict(data.get("usage") or {}))
    )


def _masked_chunks(
    chunks: list[tuple[float, str]], masker: _Masks | None
) -> list[tuple[float, str]]:
    """Mask each chunk; when a secret spans chunks, keep one masked chunk instead."""
    if masker is None or not chunks:
        return chunks
    each = [(offset, str(masker.mask(text))) for offset, text in chunks]
    whole = str(masker.mask("".join(text for _, text in chunks)))
    if "".join(text for _, text in each) == whole:
        return each
    return [(chunks[-1][0], whole)]


# ---------------------------------------------------------------------- the file


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a cassette file, checked for shape and version.

    Raises:
        CassetteError: If the file is missing, unreadable, not JSON Lines, not a
            sanctum cassette or of another format version.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(
            f"the cassette {path} does not exist; record it first with "
            "`sanctum run RITUAL --record " + str(path) + "`",
            path=str(path),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cannot read the cassette {path}: {exc}", path=str(path)) from None
    lines: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CassetteError(
                f"{path}:{number}:{exc.colno}: not a JSON line ({exc.msg}); a cassette is "
                "JSON Lines — re-record it",
                path=str(path),
            ) from None
        if not isinstance(item, dict):
            raise CassetteError(
                f"{path}:{number}:1: each cassette line is a JSON object", path=str(path)
            )
        lines.append(item)
    if not lines or lines[0].get("cassette") != "sanctum":
        raise CassetteError(
            f"{path}:1:1: not a sanctum cassette (its first line must be the header "
            '{"cassette": "sanctum", "version": 1, ...})',
            path=str(path),
        )
    version = lines[0].get("version")
    if version != CASSETTE_VERSION:
        raise CassetteError(
            f"{path}:1:1: cassette format version {version!r} is not supported (this "
            f"sanctum reads version {CASSETTE_VERSION}); re-record it",
            path=str(path),
        )
    _check_rules(lines[0], path)
    return lines


def _check_rules(header: Mapping[str, Any], path: Path) -> None:
    rules = [("", header)]
    oracles = header.get("oracles") or {}
    if not isinstance(oracles, dict):
        raise CassetteError(f"{path}:1:1: `oracles` must map oracle names to rules", path=str(path))
    rules += [(f"oracles.{name}.", value) for name, value in oracles.items()]
    for where, rule in rules:
        if not isinstance(rule, dict):
            raise CassetteError(f"{path}:1:1: `{where[:-1]}` must be a mapping", path=str(path))
        match = rule.get("match", "request")
        if match not in _MATCH_MODES:
            raise CassetteError(
                f"{path}:1:1: `{where}match` is {match!r}; choose request or order",
                path=str(path),
            )
        ignore = rule.get("ignore", [])
        if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
            raise CassetteError(
                f"{path}:1:1: `{where}ignore` must be a list of regular expressions",
                path=str(path),
            )
        for pattern in ignore:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise CassetteError(
                    f"{path}:1:1: `{where}ignore` pattern {pattern!r} is no regular "
                    f"expression: {exc}",
                    path=str(path),
                ) from None


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
        secrets: _Masks | None = None,
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
                previous = _read_lines(self.path)
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

    def add_secrets(self, secrets: _Masks | None) -> None:
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
        masked_request = self.mask(_jsonable(dict(request)))
        answer = self.mask(_answer_dict(response))
        stream = None
        if chunks is not None:
            stream = [[round(t, 4), c] for t, c in _masked_chunks(chunks, self._masker)]
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
        arguments = self.mask(_jsonable(dict(arguments)))
        self._write(
            {
                "kind": "spell",
                "session": self.session,
                "spell": spell,
                "number": self._number((spell, None, "spell")),
                "digest": request_digest({"messages": arguments, "spells": None}),
                "arguments": arguments,
                "result": self.mask(_jsonable(result)),
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

    def scoped(self, prefix: str) -> _Scoped:
        """A view whose sigil names are ``prefix/sigil`` (the sigils of a Circle)."""
        return _Scoped(self, prefix)


class _Scoped:
    """A recorder or player seen from inside a Circle: sigils are ``circle/sigil``."""

    def __init__(self, base: CassetteRecorder | CassettePlayer | _Scoped, prefix: str) -> None:
        self.base = base
        self.prefix = prefix

    def add_secrets(self, secrets: _Masks | None) -> None:
        self.base.add_secrets(secrets)

    def scoped(self, prefix: str) -> _Scoped:
        return _Scoped(self, prefix)

    def root(self) -> CassetteRecorder | CassettePlayer:
        base = self.base
        while isinstance(base, _Scoped):
            base = base.base
        return base

    def full(self, sigil: str | None) -> str | None:
        names: list[str] = [] if sigil is None else [sigil]
        view: Any = self
        while isinstance(view, _Scoped):
            names.insert(0, view.prefix)
            view = view.base
        return "/".join(names)


def cassette_oracle(
    cassette: CassetteRecorder | CassettePlayer | _Scoped,
    *,
    name: str,
    sigil: str | None,
    build: Callable[[], Oracle | None],
    provider: str | None = None,
    model: str | None = None,
) -> Oracle | None:
    """The Oracle a sigil consults under a cassette: recording around ``build()``, or
    replaying without building anything (so no server is contacted).

    Returns:
        The wrapping Oracle; None when recording and ``build()`` gave None.
    """
    if isinstance(cassette, _Scoped):
        sigil = cassette.full(sigil)
        cassette = cassette.root()
    if isinstance(cassette, CassettePlayer):
        return cassette.oracle(name=name, sigil=sigil)
    inner = build()
    if inner is None:
        return None
    return cassette.oracle(inner, name=name, sigil=sigil, provider=provider, model=model)


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
        secrets: _Masks | None = None,
    ) -> None:
        self.inner = inner
        self.recorder = (
            cassette
            if isinstance(cassette, CassetteRecorder)
            else CassetteRecorder(cassette, secrets=secrets)
        )
        self.name = name
        self.sigil = sigil
        self.provider = provider or _provider_of(inner)
        self.model = model or str(getattr(inner, "arcana", "unknown"))
        self.arcana = str(getattr(inner, "arcana", "unknown"))

    def _request(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None
    ) -> dict[str, Any]:
        return {
            "messages": _jsonable(list(messages)),
            "spells": None if spells is None else _jsonable(list(spells)),
            "options": _options_of(self.inner),
        }

    def _record(
        self,
        request: dict[str, Any],
        response: OracleResponse,
        chunks: list[tuple[float, str]] | None,
    ) -> None:
        self.recorder.record_call(
            oracle=self.name,
            sigil=self.sigil,
            provider=self.provider,
            model=self.model,
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


# ---------------------------------------------------------------------- replaying


class CassettePlayer:
    """Answers Oracle calls from a cassette, with no model and no server.

    Args:
        path: The cassette file.
        match: Override the cassette's ``match`` for every oracle (``request`` or
            ``order``); None keeps the file's rules.
        ignore: More regular expressions to ignore under ``match: order``.
        superstep: Replay the session that resumed from this superstep (a ``resume
            --replay``); None replays from the first session (a run, or a run and its
            resumes in one process).
        pace: Sleep between streamed chunks as recorded, times this factor (0: at once).
        secrets: Masking applied to each actual request before it is compared (the
            same the recorder applied); more with :meth:`add_secrets`.

    Raises:
        CassetteError: If the file is missing or malformed, a rule is invalid, or no
            session resumed from ``superstep``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        match: MatchMode | None = None,
        ignore: Iterable[str] = (),
        superstep: int | None = None,
        pace: float = 0.0,
        secrets: _Masks | None = None,
    ) -> None:
        self.path = Path(path)
        lines = _read_lines(self.path)
        header = lines[0]
        if match is not None and match not in _MATCH_MODES:
            raise CassetteError(
                f"match {match!r} is not a matching rule; choose request or order",
                path=str(self.path),
            )
        self._match = match
        self._extra_ignore = list(ignore)
        for pattern in self._extra_ignore:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise CassetteError(
                    f"ignore pattern {pattern!r} is no regular expression: {exc}",
                    path=str(self.path),
                ) from None
        self.header = header
        self.pace = pace
        self._masker = secrets
        self._lock = threading.Lock()
        start = 0
        sessions = [line for line in lines if line.get("kind") == "session"]
        if superstep is not None:
            chosen = [
                s for s in sessions if s.get("command") != "run" and s.get("superstep") == superstep
            ]
            if not chosen:
                found = ", ".join(
                    f"{s.get('command')} from superstep {s.get('superstep')}" for s in sessions
                )
                raise CassetteError(
                    f"the cassette {self.path} holds no resume from superstep {superstep} "
                    f"(it holds: {found or 'no sessions'}); record the resume with "
                    "`sanctum resume --record`",
                    path=str(self.path),
                )
            start = int(chosen[0].get("session", 0))
        self._calls: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
        self._spells: dict[str, list[dict[str, Any]]] = {}
        for line in lines[1:]:
            if int(line.get("session", 0)) < start:
                continue
            if line.get("kind") == "oracle":
                key = (str(line.get("oracle")), line.get("sigil"))
                self._calls.setdefault(key, []).append(line)
            elif line.get("kind") == "spell":
                self._spells.setdefault(str(line.get("spell")), []).append(line)
        self._used: dict[tuple[str, str | None], set[int]] = {}
        self._asked: dict[tuple[str, str | None], int] = {}
        self._spell_next: dict[str, int] = {}

    def add_secrets(self, secrets: _Masks | None) -> None:
        """Mask ``secrets`` in actual requests too."""
        if secrets is None or not secrets:
            return
        if self._masker is None or not self._masker:
            self._masker = secrets
        else:
            self._masker = self._masker | secrets  # type: ignore[operator]

    def rules(self, oracle: str) -> tuple[str, list[str]]:
        """The ``(match, ignore)`` rules for ``oracle``: the constructor's, then the
        header's ``oracles.<name>``, then the header's own."""
        own = (self.header.get("oracles") or {}).get(oracle) or {}
        match = self._match or own.get("match") or self.header.get("match") or "request"
        ignore = [*self.header.get("ignore", []), *own.get("ignore", []), *self._extra_ignore]
        return str(match), ignore

    def oracle(self, *, name: str, sigil: str | None = None) -> ReplayOracle:
        """A :class:`ReplayOracle` answering ``name``'s calls from ``sigil``."""
        return ReplayOracle(self, name=name, sigil=sigil)

    def scoped(self, prefix: str) -> _Scoped:
        """A view whose sigil names are ``prefix/sigil`` (the sigils of a Circle)."""
        return _Scoped(self, prefix)

    def remaining(self) -> int:
        """How many recorded Oracle calls were not replayed (yet)."""
        return sum(len(calls) - len(self._used.get(key, ())) for key, calls in self._calls.items())

    def answer(
        self,
        *,
        oracle: str,
        sigil: str | None,
        messages: Sequence[Message],
        spells: Sequence[dict[str, Any]] | None,
    ) -> dict[str, Any]:
        """The recorded call answering this request, marked as used.

        Raises:
            CassetteMismatch: If no recorded call of (oracle, sigil) is left, or none
                left fits the request under the matching rules.
        """
        key = (oracle, sigil)
        actual: dict[str, Any] = {
            "messages": _jsonable(list(messages)),
            "spells": None if spells is None else _jsonable(list(spells)),
        }
        if self._masker is not None:
            actual = self._masker.mask(actual)
        match, ignore = self.rules(oracle)
        with self._lock:
            asked = self._asked.get(key, 0) + 1
            self._asked[key] = asked
            calls = self._calls.get(key, [])
            used = self._used.setdefault(key, set())
            waiting = [i for i in range(len(calls)) if i not in used]
            who = f"sigil {sigil!r}" if sigil is not None else "a caller without a sigil"
            if not waiting:
                others = sorted(
                    {s for (o, s) in self._calls if o == oracle and s != sigil}, key=str
                )
                also = (
                    f" (it holds calls of {oracle!r} from: {', '.join(map(str, others))})"
                    if others
                    else ""
                )
                raise CassetteMismatch(
                    f"cassette {self.path}: {who} consulted oracle {oracle!r} for call "
                    f"{asked}, but the cassette holds {len(calls)} such call(s){also}; "
                    "the ritual asks more than was recorded — re-record with --record",
                    sigil=sigil,
                    oracle=oracle,
                    call=asked,
                    diff="",
                )
            for index in waiting:
                if self._fits(calls[index], actual, match, ignore):
                    used.add(index)
                    return calls[index]
            expected = calls[waiting[0]]
            diff = _request_diff(expected.get("request") or {}, actual)
            rule = (
                "match: order, ignoring " + ", ".join(map(repr, ignore))
                if match == "order"
                else "match: request"
            )
            raise CassetteMismatch(
                f"cassette {self.path}: {who} call {expected.get('number', asked)} to oracle "
                f"{oracle!r} differs from the recording ({rule}); re-record with --record, "
                "or declare the volatile parts with `match: order` and `ignore:` in the "
                f"cassette's header\n{diff}",
                sigil=sigil,
                oracle=oracle,
                call=int(expected.get("number", asked)),
                diff=diff,
            )

    def _fits(
        self, recorded: Mapping[str, Any], actual: Mapping[str, Any], match: str, ignore: list[str]
    ) -> bool:
        if match == "request":
            return bool(recorded.get("digest") == request_digest(actual))
        request = recorded.get("request") or {}
        wanted = {"messages": request.get("messages"), "spells": request.get("spells")}
        return bool(_blank(wanted, ignore) == _blank(dict(actual), ignore))

    def spell_result(self, spell: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
        """The next recorded cast of ``spell``, or None when none is left."""
        with self._lock:
            casts = self._spells.get(spell, [])
            index = self._spell_next.get(spell, 0)
            if index >= len(casts):
                return None
            self._spell_next[spell] = index + 1
            return casts[index]


def _blank(value: Any, patterns: list[str]) -> Any:
    """Every match of ``patterns`` in every string of ``value`` replaced by ``…``."""
    if isinstance(value, str):
        for pattern in patterns:
            value = re.sub(pattern, "…", value)
        return value
    if isinstance(value, list):
        return [_blank(v, patterns) for v in value]
    if isinstance(value, dict):
        return {k: _blank(v, patterns) for k, v in value.items()}
    return value


def _request_diff(recorded: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    """A unified diff (at most 40 lines, each at most 200 characters) of two requests."""

    def lines(request: Mapping[str, Any]) -> list[str]:
        body = {"messages": request.get("messages"), "spells": request.get("spells")}
        text = json.dumps(body, indent=2, ensure_ascii=False, sort_keys=True)
        return [line if len(line) <= 200 else line[:199] + "…" for line in text.splitlines()]

    diff = list(
        difflib.unified_diff(lines(recorded), lines(actual), "recorded", "actual", n=2, lineterm="")
    )
    if len(diff) > _DIFF_LINES:
        diff = [*diff[:_DIFF_LINES], f"… ({len(diff) - _DIFF_LINES} more diff lines)"]
    return "\n".join(diff)


class ReplayOracle(StreamingOracle):
    """An Oracle that answers from a cassette: no model, no server, no network.

    Args:
        cassette: A cassette path (a :class:`CassettePlayer` is opened on it) or a
            player shared with other ReplayOracles.
        name: The oracle name to answer for. None: the only oracle name the cassette
            holds (an error when it holds several).
        sigil: The sigil to answer for. None from plain Python: the calls recorded
            without a sigil, or — when there are none — of the only sigil recorded for
            ``name``.
        match: ``request`` or ``order``, overriding the cassette (for a player opened
            here).
        ignore: Regular expressions to ignore under ``match: order``.

    Raises:
        CassetteError: If the file is missing or malformed, or ``name``/``sigil`` cannot
            be told.
    """

    def __init__(
        self,
        cassette: str | Path | CassettePlayer,
        *,
        name: str | None = None,
        sigil: str | None = None,
        match: MatchMode | None = None,
        ignore: Iterable[str] = (),
    ) -> None:
        self.player = (
            cassette
            if isinstance(cassette, CassettePlayer)
            else CassettePlayer(cassette, match=match, ignore=ignore)
        )
        keys = list(self.player._calls)
        if name is None:
            names = sorted({o for o, _ in keys})
            if len(names) > 1:
                raise CassetteError(
                    f"the cassette {self.player.path} holds the oracles "
                    f"{', '.join(names)}; say which with ReplayOracle(..., name=...)",
                    path=str(self.player.path),
                )
            name = names[0] if names else "oracle"
        if sigil is None and (name, None) not in self.player._calls:
            sigils = sorted({str(s) for o, s in keys if o == name and s is not None})
            if len(sigils) == 1:
                sigil = sigils[0]
        self.name = name
        self.sigil = sigil
        first = (self.player._calls.get((name, sigil)) or [{}])[0]
        self.arcana = str(first.get("model") or "cassette")

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """The recorded answer to this request.

        Raises:
            CassetteMismatch: If the request does not fit the recording.
        """
        call = self.player.answer(
            oracle=self.name, sigil=self.sigil, messages=messages, spells=spells
        )
        return _answer_of(call.get("answer") or {})

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """The recorded chunks (the whole text as one chunk for a call recorded in one
        piece), then the recorded answer; paced as recorded when the player's ``pace``
        is above 0.

        Raises:
            CassetteMismatch: If the request does not fit the recording.
        """
        call = self.player.answer(
            oracle=self.name, sigil=self.sigil, messages=messages, spells=spells
        )
        response = _answer_of(call.get("answer") or {})
        stream = call.get("stream")
        chunks: list[tuple[float, str]] = (
            [(float(t), str(c)) for t, c in stream]
            if isinstance(stream, list)
            else ([(0.0, response.text)] if response.text else [])
        )
        previous = 0.0
        for offset, text in chunks:
            if self.player.pace > 0 and offset > previous:
                await asyncio.sleep((offset - previous) * self.player.pace)
            previous = offset
            if text:
                yield text
        yield response
