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
  a constrained call (``spell_calling: constrained``) also records the JSON Schema the
  answer was held to as ``request.schema``, which is digested and compared too;
  ``number`` counts the calls of one oracle from one sigil, 1-based, over the whole
  cassette; ``stream`` holds the streamed text chunks with their offsets in seconds
  from the start of the call (null for a call answered in one piece).
* a line per cast of a Spell marked ``record`` (outside effects; see
  :mod:`sanctum.grimoire.recorded` — other spells are the code under test and re-run on
  replay, where :meth:`CassettePlayer.cast` answers the marked ones):
  ``{"kind": "spell", "session": 0, "spell": "send_mail", "number": 1,
  "digest": "sha256:…", "arguments": {…}, "result": …,
  "error": null | {"type": "…", "message": "…"}}``.

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
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sanctum.errors import CassetteError, CassetteMismatch
from sanctum.oracle._cassette_file import (
    CASSETTE_VERSION,
    MATCH_MODES,
    Masks,
    MatchMode,
    Scoped,
    answer_of,
    blank,
    jsonable,
    read_lines,
    request_diff,
    request_digest,
)
from sanctum.oracle._cassette_record import CassetteRecorder, RecordingOracle
from sanctum.oracle.base import Message, Oracle, OracleResponse, StreamingOracle

__all__ = [
    "CASSETTE_VERSION",
    "CassettePlayer",
    "CassetteRecorder",
    "RecordingOracle",
    "ReplayOracle",
    "request_digest",
]


def cassette_oracle(
    cassette: CassetteRecorder | CassettePlayer | Scoped,
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
    root: CassetteRecorder | CassettePlayer
    if isinstance(cassette, Scoped):
        sigil = cassette.full(sigil)
        root = cassette.root()
    else:
        root = cassette
    if isinstance(root, CassettePlayer):
        return root.oracle(name=name, sigil=sigil)
    inner = build()
    if inner is None:
        return None
    return root.oracle(inner, name=name, sigil=sigil, provider=provider, model=model)


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
        secrets: Masks | None = None,
    ) -> None:
        self.path = Path(path)
        lines = read_lines(self.path)
        header = lines[0]
        if match is not None and match not in MATCH_MODES:
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

    def add_secrets(self, secrets: Masks | None) -> None:
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

    def scoped(self, prefix: str) -> Scoped:
        """A view whose sigil names are ``prefix/sigil`` (the sigils of a Circle)."""
        return Scoped(self, prefix)

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
        schema: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The recorded call answering this request, marked as used (``schema``: the
        JSON Schema of a constrained call).

        Raises:
            CassetteMismatch: If no recorded call of (oracle, sigil) is left, or none
                left fits the request under the matching rules.
        """
        key = (oracle, sigil)
        actual: dict[str, Any] = {
            "messages": jsonable(list(messages)),
            "spells": None if spells is None else jsonable(list(spells)),
        }
        if schema is not None:
            actual["schema"] = jsonable(dict(schema))
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
            diff = request_diff(expected.get("request") or {}, actual)
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
        if request.get("schema") is not None:
            wanted["schema"] = request["schema"]
        return bool(blank(wanted, ignore) == blank(dict(actual), ignore))

    def cast(self, spell: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The next recorded cast of ``spell``, checked against these arguments.

        Args:
            spell: The Spell's name.
            arguments: The arguments of this cast (masked as the recording was).

        Returns:
            The recorded line: ``{"result": ..., "error": None | {"type", "message"}}``.

        Raises:
            CassetteMismatch: If no cast of ``spell`` is left, or the next one was made
                with other arguments (``oracle`` is ``"spell:NAME"``, ``diff`` shows the
                two argument sets).
        """
        actual = jsonable(dict(arguments))
        if self._masker is not None:
            actual = self._masker.mask(actual)
        with self._lock:
            casts = self._spells.get(spell, [])
            number = self._spell_next.get(spell, 0) + 1
            if number > len(casts):
                raise CassetteMismatch(
                    f"cassette {self.path}: spell {spell!r} was cast {number} time(s), but "
                    f"the cassette recorded {len(casts)}; the ritual casts more than was "
                    "recorded — re-record with --record",
                    sigil=None,
                    oracle=f"spell:{spell}",
                    call=number,
                    diff="",
                )
            recorded = casts[number - 1]
            if recorded.get("digest") != request_digest({"messages": actual, "spells": None}):
                diff = request_diff({"arguments": recorded.get("arguments")}, {"arguments": actual})
                raise CassetteMismatch(
                    f"cassette {self.path}: cast {number} of spell {spell!r} has other "
                    f"arguments than the recording; re-record with --record\n{diff}",
                    sigil=None,
                    oracle=f"spell:{spell}",
                    call=number,
                    diff=diff,
                )
            self._spell_next[spell] = number
            return recorded

    def spell_result(self, spell: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
        """The next recorded cast of ``spell``, or None when none is left."""
        with self._lock:
            casts = self._spells.get(spell, [])
            index = self._spell_next.get(spell, 0)
            if index >= len(casts):
                return None
            self._spell_next[spell] = index + 1
            return casts[index]


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
        calls = self.player._calls.get((name, sigil)) or [{}]
        self.arcana = str(calls[0].get("model") or "cassette")
        # A replay takes the recording's path: constrained when the recording was.
        self.constrains_output = any(
            isinstance(call.get("request"), dict) and call["request"].get("schema") is not None
            for call in calls
        )

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """The recorded answer to this constrained request (its schema is compared too).

        Raises:
            CassetteMismatch: If the request does not fit the recording.
        """
        call = self.player.answer(
            oracle=self.name, sigil=self.sigil, messages=messages, spells=None, schema=schema
        )
        return answer_of(call.get("answer") or {})

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
        return answer_of(call.get("answer") or {})

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
        response = answer_of(call.get("answer") or {})
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
