"""A ritual being performed: the :class:`Performance` that :func:`run`/:func:`resume` return.

A Performance is handed a *setup* — a coroutine function that loads the ritual file,
binds the values, opens the store and compiles the Rite, and returns all of it as one
:class:`Staged` value. The Performance never lends itself to the setup: it reads what
the setup returns, streams the Rite, and turns the ending into a :class:`RunResult`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanctum.api._faults import oracle_hint
from sanctum.api._results import RunResult, RunStatus
from sanctum.errors import (
    FileProblem,
    Interrupt,
    RecursionLimitError,
    RitualFileError,
    SanctumError,
    TraceFileError,
)

if TYPE_CHECKING:
    from sanctum.api._stores import OpenedStore
    from sanctum.omens.events import Omen
    from sanctum.ritual import Rite
    from sanctum.ritualfile import RitualFile
    from sanctum.wards.secrets import Secrets

__all__ = ["Performance", "Staged"]


@dataclasses.dataclass(frozen=True, slots=True)
class Staged:
    """Everything a setup prepared, ready to stream.

    Attributes:
        rite: The compiled Rite.
        call: Keyword arguments of ``rite.astream`` (``input`` or ``updates``,
            ``metadata``, ``seal_id``).
        ritual: The ritual file that was compiled.
        store: The Codex the Rite writes to.
        secrets: Everything the performance masks.
    """

    rite: Rite
    call: Mapping[str, Any]
    ritual: RitualFile
    store: OpenedStore
    secrets: Secrets | None


Setup = Callable[[], Awaitable[Staged]]


_PASS_THROUGH: tuple[type[BaseException], ...] = (
    KeyboardInterrupt,
    GeneratorExit,
    asyncio.CancelledError,
)
"""What stops a performance from outside: Ctrl-C, cancellation, a closed iterator."""


class Performance:
    """A ritual being performed: iterate for its Omens, then read :attr:`result`.

    Setup problems (a missing or malformed ritual file, bad inputs, an unknown
    invocation, a ritual changed since its run) raise from the first step of the
    iteration, before any Omen. A failure of the ritual itself does not raise: the
    iteration ends and :attr:`result` has ``status == "failed"``. An interrupt ends it
    with ``status == "paused"``. Ctrl-C (``KeyboardInterrupt``/cancellation) stops the
    invocation; the Seals already written keep it resumable. A ``SystemExit`` (or
    another BaseException) from the ritual's own Python code never passes through as
    such: while loading it becomes a RitualFileError, while running a failed result.
    """

    def __init__(
        self,
        setup: Setup,
        *,
        invocation_id: str,
        modes: Sequence[str],
        trace_path: str | Path | None,
        resumes: bool = False,
        replace_trace: bool = False,
    ) -> None:
        self._setup = setup
        self.replace_trace = replace_trace
        self.sealed = resumes
        """Whether the invocation has a Seal to resume from.

        True from the start for :func:`resume` (it continues Seals that exist); for
        :func:`run`, once the first Seal of this invocation was written. A run stopped
        (Ctrl-C) before that left nothing behind: it must start again.
        """
        self.invocation_id = invocation_id
        """The Invocation's id (known before the first Omen)."""
        self.codex_url: str | None = None
        """The Codex URL a resume must name (None: the default store, or a Codex object),
        without its password (PostgreSQL reads that from PGPASSWORD or ~/.pgpass)."""
        self.modes: tuple[str, ...] = tuple(modes)
        self.trace_path = Path(trace_path) if trace_path is not None else None
        self.ritual_path: Path | None = None
        """The ritual file's path, once loaded."""
        self.secrets: Secrets | None = None
        """What the run masks (known once the setup is done)."""
        self.result: RunResult | None = None
        """How the performance ended; None until the iteration finishes."""
        self.last_seal_id: str | None = None
        """The id of the last Seal this performance wrote (None before the first)."""
        self._started = False

    def __aiter__(self) -> AsyncIterator[Omen]:
        if self._started:
            raise RuntimeError("a Performance can be iterated only once")
        self._started = True
        return self._perform()

    async def wait(self) -> RunResult:
        """Perform to the end, discarding the Omens, and return the result."""
        async for _ in self:
            pass
        assert self.result is not None
        return self.result

    async def _perform(self) -> AsyncIterator[Omen]:
        staged = await self._setup()
        self.ritual_path = staged.ritual.path.resolve()
        self.codex_url = staged.store.url
        self.secrets = staged.secrets
        try:
            rite = staged.rite
            recorder = None
            if self.trace_path is not None:
                recorder = self._recorder(staged, self.trace_path)
            if recorder is not None:
                rite = rite.with_options(wards=(*rite.wards, recorder))
            async for omen in self._stream(rite, staged, recorder):
                yield omen
        finally:
            try:
                await staged.rite.aclose()  # the HTTP clients of the oracles it built
            finally:
                await staged.store.close()

    def _recorder(self, staged: Staged, path: Path) -> Any:
        """The ``--trace`` recorder, checked before anything runs (never overwrite)."""
        from sanctum.tracing import TraceRecorder

        redact = staged.ritual.redaction(staged.secrets)
        recorder = TraceRecorder(path, redact=redact)
        try:
            recorder.check()
        except OSError as exc:
            raise TraceFileError(
                f"--trace: {exc.strerror or exc}", path=str(self.trace_path)
            ) from None
        other = _traced_invocation(path)
        if other is not None and other != self.invocation_id and not self.replace_trace:
            raise TraceFileError(
                f"--trace {path} holds the trace of invocation {other}, not of this "
                f"invocation {self.invocation_id}; name another file, or pass --force to "
                "replace it",
                path=str(path),
            )
        return recorder

    async def _stream(self, rite: Rite, staged: Staged, recorder: Any) -> AsyncIterator[Omen]:
        from sanctum.omens import STREAM_MODES, resolve_modes
        from sanctum.omens.events import (
            CircleEchoed,
            RiteManifested,
            SealWritten,
            SuperstepCompleted,
        )

        wanted = resolve_modes(self.modes) if self.modes else frozenset()
        # a Circle's (an agent's) tokens and agent events, asked for without the
        # ``omens`` mode that carries their CircleEchoed wrapper, are taken out of it
        lifecycle = {*STREAM_MODES["omens"], *STREAM_MODES["updates"], *STREAM_MODES["values"]}
        unwrapped = frozenset(wanted - lifecycle)
        final: Mapping[str, Any] | None = None
        last: Mapping[str, Any] = {}
        ending: BaseException | None = None
        codex = staged.store.codex
        try:
            stream = rite.astream(
                **staged.call,
                invocation_id=self.invocation_id,
                mode={*self.modes, "omens", "values"},
            )
            async for omen in stream:
                if isinstance(omen, SealWritten) and omen.invocation_id == self.invocation_id:
                    self.sealed = True
                    self.last_seal_id = omen.seal_id
                if isinstance(omen, RiteManifested):
                    final = omen.aether
                elif isinstance(omen, SuperstepCompleted):
                    last = omen.aether
                if type(omen) in wanted:
                    yield omen
                elif isinstance(omen, CircleEchoed) and unwrapped:
                    inner = _echoed(omen, unwrapped)
                    if inner is not None:  # tokens or agent events inside a Circle
                        yield inner
        except Interrupt as pause:
            ending = pause
            seal = (
                await codex.get_seal(self.invocation_id, pause.seal_id) if pause.seal_id else None
            )
            if seal is None:
                seal = await codex.get(self.invocation_id)
            self.result = self._result(
                "paused",
                dict(seal.aether) if seal is not None else dict(last),
                reason=pause.reason,
                sigil=pause.sigil,
                reasons=dict(pause.reasons) or None,
                seal_id=pause.seal_id or (seal.seal_id if seal else None),
            )
            return
        except SanctumError as failure:
            ending = failure
            snapshot = getattr(failure, "aether", None)
            if not snapshot:
                latest = await codex.get(self.invocation_id)
                snapshot = latest.aether if latest is not None else last
            self.result = self._result(
                "failed",
                dict(snapshot),
                error=_failure_message(failure, self.ritual_path),
                error_type=type(failure).__name__,
                traceback=_user_traceback(failure),
                sigil=getattr(failure, "sigil", None),
            )
            return
        except _PASS_THROUGH as stopped:
            ending = stopped
            raise
        except BaseException as escaped:
            # A Sigil's own exceptions (sys.exit() too) arrive as SanctumErrors; what
            # lands here came from elsewhere: an Exception from a Ward or a store (an
            # audit file that cannot be written), or a SystemExit (or another
            # BaseException) from the ritual's code. Either is a failure of the run,
            # never the process's exit status; only the second blames that code.
            ending = escaped
            latest = await codex.get(self.invocation_id)
            self.result = self._result(
                "failed",
                dict(latest.aether) if latest is not None else dict(last),
                error=(
                    _stopped_message(escaped)
                    if isinstance(escaped, Exception)
                    else _escaped_message(escaped, "while the ritual ran")
                ),
                error_type=type(escaped).__name__,
            )
            return
        finally:
            if recorder is not None and final is None:
                _flush_trace(recorder, ending)
        self.result = self._result("done", dict(final if final is not None else last))

    def _result(self, status: RunStatus, aether: dict[str, Any], **extra: Any) -> RunResult:
        if self.secrets:  # the engine masked what it saw; this covers the rest
            aether = self.secrets.mask(aether)
            extra = {k: self.secrets.mask(v) for k, v in extra.items()}
        return RunResult(
            status=status,
            invocation_id=self.invocation_id,
            aether=aether,
            ritual=str(self.ritual_path) if self.ritual_path else None,
            codex_url=self.codex_url,
            **{"seal_id": self.last_seal_id, **extra},
        )


@contextlib.contextmanager
def masked_setup(secrets: Secrets | None, ritual: Path | str | None) -> Iterator[None]:
    """Mask the errors a setup step raises; a SystemExit from the ritual's code (while
    it was imported) becomes a RitualFileError at the ritual file.

    Raises:
        RitualFileError: For a BaseException that is no stop from outside.
    """
    try:
        yield
    except _PASS_THROUGH:
        raise
    except Exception as error:
        if secrets:
            from sanctum.wards.secrets import Veil

            Veil(secrets).error(error)
            secrets.mask_chain(error)
        raise
    except BaseException as escaped:
        where = str(ritual) if ritual else "<ritual>"
        message = _escaped_message(escaped, "while loading the ritual")
        raise RitualFileError([FileProblem(where, 1, 1, message)]) from escaped


def _escaped_message(escaped: BaseException, when: str) -> str:
    """``the ritual's Python code called sys.exit(3) while the ritual ran; ...``."""
    if isinstance(escaped, SystemExit):
        what = f"called sys.exit({escaped.code!r})"
    else:
        what = f"raised {type(escaped).__name__}: {escaped}"
    return (
        f"the ritual's Python code {what} {when}; sanctum stopped it there (raise an "
        "exception instead of exiting the process)"
    )


def _stopped_message(exc: Exception) -> str:
    """``the run stopped: AuditWard cannot append to x: Is a directory (IsADirectoryError)``."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in text:
        text = f"{text}: {exc.filename}"
    return f"the run stopped: {text or type(exc).__name__} ({type(exc).__name__})"


def _user_traceback(failure: BaseException) -> str | None:
    """The ritual code's own frames of a failure (masked by ``_result``), or None."""
    from sanctum.codex.claims import user_traceback

    return user_traceback(failure)


def _flush_trace(recorder: Any, ending: BaseException | None) -> None:
    """Write the trace of an invocation that paused, failed or was stopped."""
    import warnings

    if isinstance(ending, (asyncio.CancelledError, KeyboardInterrupt)):
        ending = None  # stopped, not failed: the trace says "incomplete"
    try:
        recorder.flush(ending)
    except (OSError, TypeError, ValueError) as exc:
        warnings.warn(f"could not write the trace: {exc}", RuntimeWarning, stacklevel=2)


def _traced_invocation(path: Path) -> str | None:
    """The invocation id of the sanctum trace at ``path``, or None (no file, no trace).

    The recorder has checked the file already: a file that exists is empty or a trace.
    """
    if not path.is_file() or path.stat().st_size == 0:
        return None
    from sanctum.api._files import load_trace

    try:
        document = load_trace(path)
    except (OSError, ValueError, SanctumError):
        return None
    ident = document.get("invocation_id")
    return ident if isinstance(ident, str) else None


def _failure_message(failure: BaseException, ritual: Path | None = None) -> str:
    """The failure and its cause, e.g. ``sigil 'x' failed: ... (caused by ...)``.

    A failure an Oracle caused gets a second line with its likely fix (``hint: ...``).

    A recursion limit reached by a ritual file's run points at the file's
    ``recursion_limit:`` key instead of the Python API.
    """
    hint = oracle_hint(failure)  # a dead server, an overflow, a missing model: its fix
    told = _sigil_failure(failure)
    if told is not None:
        return told if hint is None else f"{told}\n{hint}"
    message = str(failure) or type(failure).__name__
    if isinstance(failure, RecursionLimitError) and failure.limit and ritual is not None:
        advice = f"Check the cycle's stop condition, or raise `recursion_limit:` in {ritual.name}"
        message = failure.worded(advice)
    cause = failure.__cause__
    if cause is not None and str(cause) and str(cause) not in message:
        message += f" (caused by {type(cause).__name__}: {cause})"
    return message if hint is None else f"{message}\n{hint}"


def _sigil_failure(failure: BaseException) -> str | None:
    """A Sigil's failure told once: the path of Sigils in one line, then the root cause.

    The engine wraps a failure once per Circle it crosses (an ``agent:`` sigil is a
    Circle whose inner ``oracle`` Sigil calls the model), each wrapper repeating the
    one inside. Here the chain of :class:`~sanctum.errors.SigilExecutionError` causes
    is walked by its ``sigil`` fields (never by parsing a message) and the original
    exception is worded once: ``sigil answer › oracle: Could not reach Ollama at …``.
    A ``SanctumError`` root is told by its own message, any other exception with its
    type (``sigil step: ValueError: bad``).

    Returns:
        The line, or None when ``failure`` is no Sigil failure with a root cause (a
        timeout names itself; it keeps the engine's words).
    """
    from sanctum.errors import SigilExecutionError

    path: list[str] = []
    current: BaseException = failure
    while isinstance(current, SigilExecutionError) and current.sigil:
        if not path or path[-1] != current.sigil:
            path.append(current.sigil)
        if current.__cause__ is None:
            return None
        current = current.__cause__
    if not path or isinstance(current, SigilExecutionError):
        return None
    if isinstance(current, SystemExit):
        told = f"it called sys.exit({current.code!r}); a sigil fails by raising an exception"
    elif isinstance(current, SanctumError):
        told = str(current) or type(current).__name__
    else:
        told = f"{type(current).__name__}: {current}" if str(current) else type(current).__name__
    return f"sigil {' › '.join(path)}: {told}"


def _echoed(echo: Any, kinds: frozenset[type[Omen]]) -> Any:
    """The Omen inside (possibly nested) Circle echoes, placed in the run, if wanted.

    The ``tokens`` and ``agent`` stream modes yield only the outer graph's Omens (the
    specification wraps a Circle's inner Omens in CircleEchoed, an ``omens``-mode
    event); a person asking for tokens or agent events wants those of the Circles and
    agents too, placed in the run they asked for.

    Args:
        echo: A CircleEchoed Omen (the outermost echo).
        kinds: The Omen classes to take out of their echo.

    Returns:
        The innermost Omen with ``sigil`` set to the path of Circles and its Sigil, and
        ``invocation_id`` and ``superstep`` set to the outer run's (the echo's), or
        None when its class is not one of ``kinds``. The Circle's own invocation id
        and superstep stay on the inner Omen of the echo (``--stream omens``).
    """
    import dataclasses

    from sanctum.omens.events import CircleEchoed

    path: list[str] = []
    omen = echo
    while isinstance(omen, CircleEchoed):
        path.append(omen.circle)
        omen = omen.omen
    if type(omen) not in kinds:
        return None
    sigil = getattr(omen, "sigil", "")
    if not isinstance(sigil, str):
        return omen
    placed: dict[str, Any] = {"sigil": "/".join([*path, sigil])}
    fields = {field.name for field in dataclasses.fields(omen)}
    if echo.invocation_id and "invocation_id" in fields:
        placed["invocation_id"] = echo.invocation_id
        if "superstep" in fields:
            placed["superstep"] = echo.superstep
    return dataclasses.replace(omen, **placed)
