"""Reading the ritual's signs after the fact — local-first tracing.

Observability without external services. TraceRecorder is a Ward: register it with
``compile(wards=[...])`` (or ``summon(wards=[...])``) and it captures the graph manifest
plus every Omen, assembling a complete trace of one Invocation — graph, superstep
timeline with per-Sigil durations, deltas, spell calls with arguments and results,
retries, repairs, rejections, and Seals — written to a ``.sanctum-trace.json`` file when
the Rite manifests (call ``flush()`` to write earlier, e.g. after a failure). The file
format is described in :mod:`sanctum.tracing.document`. Tracing is opt-in by design:
without a recorder the engine pays nothing.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import threading
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sanctum.errors import Interrupt
from sanctum.omens.events import Omen, RiteBegan, RiteManifested
from sanctum.tracing.document import (
    READABLE_VERSIONS,
    TRACE_FORMAT,
    TRACE_VERSION,
    assemble,
    continue_trace,
    expand,
    upgrade,
)
from sanctum.tracing.journal import Chronicle
from sanctum.tracing.timeline import PACKED_COLUMNS
from sanctum.wards._jsonable import jsonable
from sanctum.wards._paths import nearest_folder
from sanctum.wards.base import SuperstepHook, Ward

__all__ = ["DEFAULT_TRACE_NAME", "TraceRecorder"]

DEFAULT_TRACE_NAME = ".sanctum-trace.json"
"""The trace file name used when ``path`` is omitted or names a folder."""


class TraceRecorder(Ward):
    """The chronicler of the ritual: records everything, changes nothing.

    Ward — a middleware that observes the Omen (stream event) flow (``on_omen``) and
    the graph manifest (``on_compile``); it never touches deltas, so results are
    identical with or without it. Use one recorder per Invocation (when a new
    Invocation begins after the last one manifested, the recorder starts afresh; a
    resumption after an interrupt, with the same recorder, is appended to the same
    trace). The trace is written to ``path`` when RiteManifested arrives; after an
    aborted Invocation, call ``flush()`` — passing the exception, if you have it, so
    the trace says why it ended.

    Args:
        path: The trace file to write (default ``.sanctum-trace.json`` in the current
            folder). An existing folder means ``<folder>/<invocation_id>.sanctum-trace.json``
            (``redacted-<hash>.sanctum-trace.json`` when ``redact`` masks the id).
        redact: Optional function applied to the whole document before it is written
            (e.g. ``RedactWard([...]).redact``) — Omens such as tokens, raw spell-call
            text and the caller's input never pass through the Ward pipeline.

    Example:
        >>> recorder = TraceRecorder("runs/triage.sanctum-trace.json")  # doctest: +SKIP
        >>> rite = ritual.compile(wards=[recorder])  # doctest: +SKIP
        >>> await rite.ainvoke({"ticket": "..."})  # doctest: +SKIP
        >>> render_trace(recorder.path)  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_TRACE_NAME,
        *,
        redact: Callable[[Any], Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.redact = redact
        self.written: Path | None = None
        self._graph: dict[str, Any] | None = None
        self._chronicle = Chronicle()
        self._chronicle.on_foreign = self._foreign
        self._warned_shared = False
        self._error: BaseException | None = None
        self._previous: dict[str, Any] | None = None
        self._previous_read = False
        self._saw_fresh_run = False

    def check(self) -> None:
        """Refuse, before anything runs, a ``path`` a trace can never be written to.

        Nothing is created. Caught here: a folder on the way that is a file, a folder
        this process may not write to, and an existing file that is not a sanctum trace
        (a ritual file, a codex database, your notes: a trace never replaces those) or
        is a trace of a newer format than this sanctum reads. (What only a write can
        tell, such as a full disk, still fails when the file is written.)

        Raises:
            OSError: Naming the path and what is wrong (``NotADirectoryError``,
                ``PermissionError``, ``FileExistsError``).
        """
        path = self.path
        if path.is_dir():
            if not os.access(path, os.W_OK | os.X_OK):
                raise PermissionError(
                    errno.EACCES, f"the trace folder {path} is not writable (permission denied)"
                )
            return
        folder = nearest_folder(path, "trace path")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(
                errno.EACCES, f"the trace path {path} cannot be written: {folder} is not writable"
            )
        refusal = _refusal(path)
        if refusal is not None:
            raise FileExistsError(errno.EEXIST, refusal)

    def on_compile(self, manifest: Mapping[str, Any]) -> None:
        """Remember the graph this recorder is watching.

        Args:
            manifest: The Rite's manifest (``sigils``, ``edges``, ``conditional_edges``,
                ``joins``, ``entry``); copied, never modified.
        """
        graph = jsonable(manifest)
        self._graph = graph if isinstance(graph, dict) else None

    # The Ward contract's quick-observer capability (sanctum.wards.base.ObservesOmens):
    # the engine calls observe() instead of awaiting on_omen (which the base Ward
    # forwards to observe()), and takes supersteps of one synchronous Sigil whole
    # through superstep_hook() instead of building their four Omens. A subclass
    # overriding on_omen is awaited with every Omen, as usual.
    def observe(self, omen: Omen) -> None:
        """Record the Omen; write the trace when the Rite manifests.

        What ``on_omen`` does, synchronously (the engine calls this directly). A
        failure to write the file at that moment is reported as a ``RuntimeWarning``
        rather than failing an Invocation that succeeded; ``flush()`` raises instead.

        Args:
            omen: Any Omen, including Circle echoes (unwrapped into nested traces).
        """
        self.record(omen)
        if isinstance(omen, RiteManifested):
            try:
                self.flush()
            except Exception as exc:  # a recorder must never fail a finished Invocation
                # flush() raises OSError(errno, "TraceRecorder cannot write <path>: why")
                detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else None
                warnings.warn(
                    detail or f"TraceRecorder could not write the trace to {self.path}: {exc}",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def superstep_hook(self) -> SuperstepHook | None:
        """Take a superstep of one synchronous Sigil whole (asked once per Rite).

        The trace is the same as from its four Omens (see ``Chronicle.tap``). A
        subclass overriding ``record`` or ``observe`` gets every Omen instead: the
        hook would skip its code.

        Returns:
            The chronicle's hook, or None for such a subclass.
        """
        plain = type(self).record is TraceRecorder.record
        if plain and type(self).observe is TraceRecorder.observe:
            return self._chronicle.tap
        return None

    def record(self, omen: Omen) -> None:
        """Record one Omen synchronously (what ``on_omen`` does, minus the writing).

        Args:
            omen: Any Omen.
        """
        chronicle = self._chronicle
        if isinstance(omen, RiteBegan):
            self._error = None  # a new Invocation, or a resumption: the old ending is over
            if chronicle.invocation_id not in (None, omen.invocation_id):
                self._previous, self._previous_read, self._saw_fresh_run = None, False, False
            if omen.resumed_from is None:
                self._saw_fresh_run = True
        else:
            other = getattr(omen, "invocation_id", None)
            if other and chronicle.invocation_id not in (None, other) and not chronicle.manifested:
                self._foreign(other)
        chronicle.record(omen)

    def _foreign(self, invocation_id: str) -> None:
        """Warn once that Omens of two Invocations arrive mixed (a shared recorder)."""
        if not self._warned_shared:
            self._warned_shared = True
            warnings.warn(
                f"TraceRecorder({str(self.path)!r}) is recording invocation "
                f"{self._chronicle.invocation_id!r} and received Omens of invocation "
                f"{invocation_id!r} at the same time; its trace will mix both — give each "
                "concurrent Invocation its own TraceRecorder",
                RuntimeWarning,
                stacklevel=3,
            )

    def flush(self, error: BaseException | None = None) -> Path:
        """Write the trace assembled so far to path and return the path.

        Args:
            error: The exception that ended the Invocation, if known (an ``Interrupt``
                marks the trace ``interrupted``, anything else ``failed``). Kept for
                later builds.

        Returns:
            The path of the written trace file.

        Raises:
            OSError: If the file cannot be written (the message names the path).
        """
        if isinstance(error, Interrupt):
            self._chronicle.note_pause(error.sigil, error.reason, error.seal_id)
        elif error is not None:
            self._error = error
        document = self._document()
        target = self._target(self._chronicle.invocation_id, document.get("invocation_id"))
        previous = self._earlier_part(target, document)
        if previous is not None:
            document = continue_trace(previous, document)
        pieces = _encode(document)
        try:
            refusal = _refusal(target)
            if refusal is not None:
                raise FileExistsError(errno.EEXIST, refusal)
            target.parent.mkdir(parents=True, exist_ok=True)
            # Written beside the target, then renamed over it: a reader never sees half
            # a trace. The name is this writer's own (process, object, thread), so two
            # writers never share a temporary file; the mode follows the umask.
            writer = f"{os.getpid()}-{id(self):x}-{threading.get_ident():x}"
            temp = target.with_name(f".{target.name}.{writer}.tmp")
            try:
                with open(temp, "w", encoding="utf-8") as handle:
                    handle.writelines(pieces)
                os.replace(temp, target)
            except BaseException:
                temp.unlink(missing_ok=True)
                raise
        except OSError as exc:
            blocker = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
            if isinstance(exc, FileExistsError):
                why = str(exc.strerror)  # a file that is not a trace: never replaced
            elif blocker is not None:
                why = f"{blocker} is a file, not a folder"
            else:
                why = f"{exc.strerror or exc}; check the folder exists and is writable"
            raise OSError(exc.errno, f"TraceRecorder cannot write {target}: {why}") from exc
        self.written = target
        return target

    def build(self) -> dict[str, Any]:
        """Assemble the trace document from the recorded Omens, in its readable form.

        Returns:
            The trace document exactly as :func:`~sanctum.tracing.render.load_trace`
            returns it when the written file is read back (``supersteps``, ``deltas``,
            ``spell_calls``; format in :mod:`sanctum.tracing.document`): JSON data,
            passed through ``redact`` when one was given.
        """
        return expand(json.loads("".join(_encode(self._document()))))

    def _document(self) -> dict[str, Any]:
        """The compact (version 2) document, as written; shares the recorded rows.

        ``redact`` sees everything but the timeline's structure: the packed columns
        (numbers that a pattern could match inside), the row-numbered ``status`` and
        ``attempts``, the Sigil ``names`` (identifiers, like the keys of a mapping) and
        the ``format``/``version`` marks stay as they are; the deltas are redacted.
        """
        document = assemble(self._chronicle, graph=self._graph, error=self._error)
        if self.redact is None:
            return document
        timeline = document.pop("timeline")
        deltas = timeline["delta"]
        result = self.redact(document)
        redacted: dict[str, Any] = result if isinstance(result, dict) else document
        masked = self.redact(deltas)
        if not isinstance(masked, list) or len(masked) != len(deltas):
            masked = [None] * len(deltas)  # never the unmasked deltas
        redacted["format"], redacted["version"] = document["format"], document["version"]
        redacted["timeline"] = {**timeline, "delta": masked}
        return redacted

    def _earlier_part(self, target: Path, document: Mapping[str, Any]) -> dict[str, Any] | None:
        """The trace on disk that this resumed run continues, read once, or None.

        Only a recorder that began with a resumption (``resumed_from`` set) continues a
        file — one that saw the fresh run already holds the earlier part — and only a
        trace of the same Invocation, so a fresh run still replaces an old file.
        """
        if not self._previous_read and not self._saw_fresh_run and document.get("resumed_from"):
            self._previous_read = True
            try:
                earlier = json.loads(target.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                earlier = None
            if (
                isinstance(earlier, dict)
                and earlier.get("format") == TRACE_FORMAT
                and earlier.get("version") in READABLE_VERSIONS
                and earlier.get("invocation_id") == document.get("invocation_id")
            ):
                self._previous = upgrade(earlier)  # a version 1 part is converted
        return self._previous

    def _target(self, invocation_id: str | None, written_id: Any) -> Path:
        """The file to write: ``path``, or a file named after the Invocation in it.

        In a folder, a redacted Invocation id is not written into the file name either:
        the file is named ``redacted-<first 16 hex digits of its SHA-256>``, so that
        separate Invocations still get separate files.
        """
        if not self.path.is_dir():
            return self.path
        if invocation_id is None:
            stem = "invocation"
        elif written_id == invocation_id:
            stem = invocation_id
        else:
            stem = (
                "redacted-"
                + hashlib.sha256(invocation_id.encode("utf-8", "replace")).hexdigest()[:16]
            )
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem).strip(".")
        return self.path / f"{safe or 'invocation'}{DEFAULT_TRACE_NAME}"


_TRACE_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"format"\s*:\s*"sanctum-trace"')
_VERSION = re.compile(rb'"version"\s*:\s*(\d{1,9})')


def _refusal(path: Path) -> str | None:
    """Why a trace must not be written over ``path``, or None when it may be.

    A missing or empty file may be written; so may a sanctum trace this version reads
    (a run replaces its earlier trace, a resumed run continues it). Anything else — a
    file that is not a trace, a trace of a newer format, something that is not a
    regular file — is never replaced.
    """
    try:
        status = path.stat()
    except OSError:  # missing, or a folder on the way is a file: the write will tell
        return None
    if stat.S_ISDIR(status.st_mode):
        return None  # a folder: the file inside it is checked when it is known
    if not stat.S_ISREG(status.st_mode):
        return f"{path} is not a regular file; a trace is written only to a file"
    if status.st_size == 0:
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        return f"{path} cannot be read: {exc.strerror or exc}"
    if not _TRACE_HEAD.match(head):
        return (
            f"{path} exists and is not a sanctum trace; a trace never replaces another "
            "file — name a new file (e.g. run.sanctum-trace.json) or remove this one"
        )
    version = _VERSION.search(head)
    if version is not None and int(version.group(1)) > TRACE_VERSION:
        return (
            f"{path} is a trace of format version {int(version.group(1))}, newer than this "
            f"sanctum writes ({TRACE_VERSION}); upgrade sanctum, or name another file"
        )
    return None


def _encode(document: dict[str, Any]) -> list[str]:
    """The document as compact JSON text, in pieces to be written one after another.

    The timeline's packed columns (hexadecimal text, which never needs escaping) are
    placed between the pieces as they are: passing them through the JSON string
    encoder, or joining everything into one string first, would cost more than the
    rest of the work together. Deltas of plain scalars are recorded as they are (see
    ``Chronicle``); a value JSON cannot hold as it is (NaN, an over-long integer, a
    non-string key) makes the first attempt fail, and the whole document is then
    converted with ``jsonable``.

    Returns:
        Strings whose concatenation is the JSON text.
    """
    try:
        timeline = document.get("timeline")
        if not isinstance(timeline, dict) or not all(
            _plain(timeline.get(key)) for key in PACKED_COLUMNS
        ):
            return [_dumps(document)]
        rest = {key: value for key, value in timeline.items() if key not in PACKED_COLUMNS}
        head = {key: value for key, value in document.items() if key != "timeline"}
        pieces = [_dumps(head)[:-1], "," if head else "", '"timeline":{']
        for key in PACKED_COLUMNS:
            pieces += [f'"{key}":"', timeline[key], '",']
        rest_text = _dumps(rest)  # "{...}": its opening brace is already written
        pieces += [rest_text[1:] if rest else "}", "}"]
        if not rest:
            pieces[-3] = pieces[-3].removesuffix(",")
        return pieces
    except (TypeError, ValueError, RecursionError):
        return [json.dumps(jsonable(document), separators=(",", ":"), allow_nan=False, default=str)]


def _dumps(value: Any) -> str:
    # compact separators keep json's C encoder (indent would force the slow one); the
    # document is a tree by construction (copies and jsonable output), so no container
    # needs checking for a cycle
    return json.dumps(value, separators=(",", ":"), allow_nan=False, check_circular=False)


def _plain(value: Any) -> bool:
    """True for text that can stand between JSON quotes as it is.

    The packed columns only ever hold hexadecimal text written by the timeline; this is a
    guard against a ``redact`` function or a hand-edited earlier part changing them,
    cheap enough to run on every write (ASCII, no quote, no backslash).
    """
    return isinstance(value, str) and value.isascii() and '"' not in value and "\\" not in value
