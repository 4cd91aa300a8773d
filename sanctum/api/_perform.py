"""Performing a ritual file: :func:`run`, :func:`resume` and the :class:`Performance`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanctum.api._cassettes import open_cassette
from sanctum.api._files import check_regular_file
from sanctum.api._inputs import RitualInputError, check_inputs, check_updates
from sanctum.api._results import (
    RunResult,
    RunStatus,
    resume_command,
    ritual_digest,
    without_password,
)
from sanctum.api._stores import DEFAULT_CODEX_PATH, _describe_codex, open_codex
from sanctum.errors import (
    FileProblem,
    Interrupt,
    RecursionLimitError,
    RitualFileError,
    SanctumError,
    SealError,
    TraceFileError,
)

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, Seal
    from sanctum.omens.events import Omen
    from sanctum.oracle.base import Oracle
    from sanctum.ritual import Rite
    from sanctum.ritualfile import RitualSpec
    from sanctum.wards.secrets import Secrets

__all__ = ["Performance", "resume", "run"]


Prepare = Callable[["Performance"], Awaitable[tuple["Rite", dict[str, Any]]]]


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
        prepare: Prepare,
        *,
        invocation_id: str,
        codex: Codex | str | None,
        modes: Sequence[str],
        trace_path: str | Path | None,
        read_only: bool = False,
        secrets: Secrets | None = None,
    ) -> None:
        self._prepare = prepare
        self.secrets: Secrets | None = secrets
        """What the run masks: the ritual's secrets, the codex URL's password and the
        ``secrets`` given to :func:`run`/:func:`resume` (known once the file is loaded)."""
        self._read_only = read_only
        self.sealed = read_only
        """Whether the invocation has a Seal to resume from.

        True from the start for :func:`resume` (it continues Seals that exist); for
        :func:`run`, once the first Seal of this invocation was written. A run stopped
        (Ctrl-C) before that left nothing behind: it must start again.
        """
        self.invocation_id = invocation_id
        """The Invocation's id (known before the first Omen)."""
        self._codex_arg = codex
        self._store: Codex | None = None
        self._owned = False
        self.codex_url: str | None = None
        """The Codex URL a resume must name (None: the default store, or a Codex object),
        without its password (PostgreSQL reads that from PGPASSWORD or ~/.pgpass)."""
        self.modes: tuple[str, ...] = tuple(modes)
        self.trace_path = Path(trace_path) if trace_path is not None else None
        self.ritual_path: Path | None = None
        """The ritual file's path, once known."""
        self.trace_redact: Callable[[Any], Any] | None = None
        """What the ``--trace`` recorder masks (the ritual's secrets and redactions)."""
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

    def open_store(self, fallback: str | None = None) -> Codex:
        """The Codex of this performance, opened on first use.

        The URL given to :func:`run`/:func:`resume` wins, then ``fallback`` (the ritual
        file's ``codex:``), then the default ``.sanctum/codex.db``.
        """
        from sanctum.codex.base import Codex

        if self._store is not None:
            return self._store
        if isinstance(self._codex_arg, Codex):
            self._store = self._codex_arg
            return self._store
        if fallback in ("memory", ":memory:"):
            fallback = "memory:"  # the ritual file's spellings of an ephemeral store
        url = self._codex_arg or fallback
        if url == "memory":
            url = "memory:"  # one spelling, so a pause knows it cannot be resumed
        self._store = open_codex(url, must_exist=self._read_only)
        self._owned = True
        if url and not _is_default_store(self._store):
            self.codex_url = without_password(url)
            self._add_secrets(url=url)
        return self._store

    def _add_secrets(self, *, url: str | None = None, more: Secrets | None = None) -> None:
        """Widen :attr:`secrets` with a URL's password and another policy."""
        from sanctum.wards.secrets import Secrets

        extra = Secrets(urls=[url] if url else ()) | more
        if extra:
            self.secrets = extra | self.secrets

    async def _perform(self) -> AsyncIterator[Omen]:
        from sanctum.omens import resolve_modes
        from sanctum.omens.events import (
            CircleEchoed,
            RiteManifested,
            SealWritten,
            SuperstepCompleted,
            TokenEmitted,
        )

        wanted = resolve_modes(self.modes) if self.modes else frozenset()
        try:
            try:
                rite, call = await self._prepare(self)
            except _PASS_THROUGH:
                raise
            except BaseException as escaped:
                if isinstance(escaped, Exception):
                    self._veil_error(escaped)
                    raise
                raise self._escaped_while_loading(escaped) from escaped
            codex = self.open_store()
            recorder = None
            if self.trace_path is not None:
                from sanctum.tracing import TraceRecorder

                recorder = TraceRecorder(self.trace_path, redact=self.trace_redact)
                try:
                    recorder.check()  # before anything runs: never overwrite a file
                except OSError as exc:
                    raise TraceFileError(
                        f"--trace: {exc.strerror or exc}", path=str(self.trace_path)
                    ) from None
                rite = rite.with_options(wards=(*rite.wards, recorder))
            final: Mapping[str, Any] | None = None
            last_aether: Mapping[str, Any] = {}
            ending: BaseException | None = None
            try:
                stream = rite.astream(
                    **call, invocation_id=self.invocation_id, mode={*self.modes, "omens", "values"}
                )
                async for omen in stream:
                    if isinstance(omen, SealWritten) and omen.invocation_id == self.invocation_id:
                        self.sealed = True
                        self.last_seal_id = omen.seal_id
                    if isinstance(omen, RiteManifested):
                        final = omen.aether
                    elif isinstance(omen, SuperstepCompleted):
                        last_aether = omen.aether
                    if type(omen) in wanted:
                        yield omen
                    elif isinstance(omen, CircleEchoed) and TokenEmitted in wanted:
                        token = _echoed_token(omen)
                        if token is not None:  # tokens from inside a Circle or an agent
                            yield token
            except Interrupt as pause:
                ending = pause
                seal = None
                if pause.seal_id:
                    seal = await codex.get_seal(self.invocation_id, pause.seal_id)
                if seal is None:
                    seal = await codex.get(self.invocation_id)
                self.result = self._result(
                    "paused",
                    dict(seal.aether) if seal is not None else dict(last_aether),
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
                    snapshot = latest.aether if latest is not None else last_aether
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
                    dict(latest.aether) if latest is not None else dict(last_aether),
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
            self.result = self._result("done", dict(final if final is not None else last_aether))
        finally:
            if self._owned and self._store is not None:
                await self._store.aclose()

    def _escaped_while_loading(self, escaped: BaseException) -> RitualFileError:
        """A SystemExit (or similar) from the ritual's code while it was being loaded."""
        where = str(self.ritual_path) if self.ritual_path else "<ritual>"
        return RitualFileError(
            [FileProblem(where, 1, 1, _escaped_message(escaped, "while loading the ritual"))]
        )

    def _veil_error(self, error: BaseException) -> None:
        """Mask an error's message in place before it leaves the performance."""
        if self.secrets:
            from sanctum.wards.secrets import Veil

            Veil(self.secrets).error(error)
            self.secrets.mask_chain(error)

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


_PASS_THROUGH: tuple[type[BaseException], ...] = (
    KeyboardInterrupt,
    GeneratorExit,
    asyncio.CancelledError,
)
"""What stops a performance from outside: Ctrl-C, cancellation, a closed iterator."""


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


async def _seal_by_prefix(store: Codex, invocation_id: str, prefix: str) -> str | None:
    """The one Seal id of ``invocation_id`` that starts with ``prefix``, as git does.

    Returns:
        The whole id, or None when no Seal id starts with ``prefix``.

    Raises:
        SealError: When several do (the message lists them).
    """
    found = [
        seal.seal_id
        async for seal in store.history(invocation_id, values=False)
        if seal.seal_id.startswith(prefix)
    ]
    if len(found) > 1:
        shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
        raise SealError(
            f"--seal {prefix!r} is the start of {len(found)} seals of invocation "
            f"{invocation_id!r} ({shown}); give more of the id",
            invocation_id=invocation_id,
            seal_id=prefix,
        )
    return found[0] if found else None


def _is_default_store(store: Codex) -> bool:
    """Whether ``store`` is the embedded default ``.sanctum/codex.db`` of the working dir."""
    path = getattr(store, "path", None)
    if not isinstance(path, Path):
        return False
    return path.resolve() == (Path.cwd() / DEFAULT_CODEX_PATH).resolve()


def _user_traceback(failure: BaseException) -> str | None:
    """The ritual code's own frames of a failure (masked by ``_result``), or None."""
    from sanctum.codex.claims import user_traceback

    return user_traceback(failure)


async def _check_claimable(store: Codex, invocation_id: str) -> None:
    """Refuse, before anything runs, an invocation another live call is running.

    Raises:
        SealError: If a live call holds ``invocation_id``.
    """
    from sanctum.codex.claims import describe_holder

    holder = await store.holder(invocation_id)
    if holder is not None:
        raise SealError(
            f"invocation {invocation_id!r} is being run by another call: "
            f"{describe_holder(holder)}; nothing was run. Wait for it to finish or pause "
            f"(`sanctum invocations` shows it as running), then resume again",
            invocation_id=invocation_id,
        )


def _refuse_done(seal: Seal, invocation_id: str, codex_url: str | None) -> None:
    """Refuse to resume a finished invocation; show how to branch from one of its Seals.

    Raises:
        SealError: Always.
    """
    import shlex

    codex = f" --codex {shlex.quote(codex_url)}" if codex_url else ""
    ident = shlex.quote(invocation_id)
    raise SealError(
        f"invocation {invocation_id!r} is done (its last seal {seal.seal_id} reached END at "
        f"superstep {seal.superstep}); nothing was resumed, and its history stays as it is. "
        f"To run part of it again, branch from one of its seals: list them with `sanctum "
        f"seals --invocation {ident}{codex}`, then `sanctum resume --invocation {ident} "
        f"--seal SEAL_ID{codex}` (with --update KEY=VALUE to change values)",
        invocation_id=invocation_id,
        seal_id=seal.seal_id,
    )


def _flush_trace(recorder: Any, ending: BaseException | None) -> None:
    """Write the trace of an invocation that paused, failed or was stopped."""
    import warnings

    if isinstance(ending, (asyncio.CancelledError, KeyboardInterrupt)):
        ending = None  # stopped, not failed: the trace says "incomplete"
    try:
        recorder.flush(ending)
    except (OSError, TypeError, ValueError) as exc:
        warnings.warn(f"could not write the trace: {exc}", RuntimeWarning, stacklevel=2)


_ENGINE_LIMIT_HINT = "raise compile(recursion_limit=...)"
"""The engine's advice for a RecursionLimitError, which speaks of the Python API."""


def _failure_message(failure: BaseException, ritual: Path | None = None) -> str:
    """The failure and its cause, e.g. ``sigil 'x' failed: ... (caused by ...)``.

    A recursion limit reached by a ritual file's run points at the file's
    ``recursion_limit:`` key instead of the Python API.
    """
    message = str(failure) or type(failure).__name__
    if isinstance(failure, RecursionLimitError) and ritual is not None:
        message = message.replace(_ENGINE_LIMIT_HINT, f"raise `recursion_limit:` in {ritual.name}")
    cause = failure.__cause__
    if cause is not None and str(cause) and str(cause) not in message:
        message += f" (caused by {type(cause).__name__}: {cause})"
    return message


def _ritual_metadata(path: Path) -> dict[str, Any]:
    return {"ritual": {"path": str(path), "sha256": ritual_digest(path)}}


def _compile(
    spec: RitualSpec,
    path: Path,
    codex: Codex,
    overrides: Mapping[str, Any] | None,
    performance: Performance | None = None,
    cassette: Any = None,
) -> Rite:
    from sanctum.ritualfile import compile_ritual
    from sanctum.ritualfile.compiler import ritual_secrets, trace_redaction

    secrets = None
    if performance is not None:
        secrets = performance.secrets
        performance.trace_redact = trace_redaction(spec)
        if secrets:
            mask, more = secrets.mask, performance.trace_redact
            performance.trace_redact = mask if more is None else (lambda v: mask(more(v)))
    else:
        secrets = ritual_secrets(spec)

    oracles = _override_oracles(spec, path, overrides) if overrides else None
    rite = compile_ritual(spec, codex=codex, oracles=oracles, secrets=secrets, cassette=cassette)
    _check_audit_paths(spec, path)
    return rite


def _check_audit_paths(spec: RitualSpec, path: Path) -> None:
    """Refuse an ``audit:`` or ``trace:`` ward whose file can never be written (or
    would replace a file that is not a trace), before anything runs.

    Raises:
        RitualFileError: One ``path:line:column`` problem per such ward.
    """
    from sanctum.tracing import TraceRecorder
    from sanctum.wards.audit import AuditWard

    problems: list[FileProblem] = []
    for index, entry in enumerate(getattr(spec, "wards", None) or ()):
        for kind, make in (("audit", AuditWard), ("trace", TraceRecorder)):
            options = getattr(entry, kind, None)
            if options is None:
                continue
            try:
                make(Path(options.path)).check()  # relative to the working directory
            except OSError as exc:
                line, column = _position(path, ("wards", index, kind, "path"))
                problems.append(
                    FileProblem(str(path), line, column, f"wards: {exc.strerror or exc}")
                )
    if problems:
        raise RitualFileError(problems)


def _position(path: Path, where: tuple[str | int, ...]) -> tuple[int, int]:
    """Where ``where`` sits in the ritual file (``(1, 1)`` when it cannot be told)."""
    from sanctum.ritualfile.loader import load_yaml_file

    try:
        return load_yaml_file(path).position(where)
    except (RitualFileError, OSError):
        return 1, 1


_PROVIDERS = ("ollama", "openai", "llamacpp", "scripted")


def _override_oracles(
    spec: RitualSpec, path: Path, overrides: Mapping[str, Any]
) -> dict[str, Oracle]:
    """Build the Oracles ``--oracle NAME=provider:model`` asks for."""
    import difflib

    from sanctum.ritualfile import models
    from sanctum.ritualfile.resolve import ResolveError, build_oracle

    classes: dict[str, Any] = {
        "ollama": models.OllamaOracleSpec,
        "openai": models.OpenAIOracleSpec,
        "llamacpp": models.LlamaCppOracleSpec,
        "scripted": models.ScriptedOracleSpec,
    }
    built: dict[str, Oracle] = {}
    for name, wanted in overrides.items():
        base = spec.oracles.get(name)
        if base is None:
            close = difflib.get_close_matches(name, list(spec.oracles), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(spec.oracles)) or "none"
            raise RitualInputError(
                f"--oracle {name}: the ritual declares no oracle {name!r}{hint} "
                f"(its oracles: {known})",
                name=name,
                source="--oracle",
            )
        provider = wanted["provider"]
        if provider not in classes:
            raise RitualInputError(
                f"--oracle {name}: unknown provider {provider!r}; choose from "
                f"{', '.join(_PROVIDERS)}",
                name=name,
                source="--oracle",
            )
        data: dict[str, Any] = {"provider": provider, "model": wanted["model"]}
        if base.provider == provider:
            data = {**base.model_dump(exclude_unset=True), **data}
        if wanted.get("base_url"):
            data["base_url"] = wanted["base_url"]
        try:
            oracle_spec = classes[provider].model_validate(data)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            errors = getattr(exc, "errors", None)
            problems = (
                "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}"
                    for err in errors()
                )
                if callable(errors)
                else str(exc)
            )
            raise RitualInputError(
                f"--oracle {name}={provider}:{wanted['model']}: {problems} (an openai "
                "endpoint needs its address: --oracle NAME=openai:MODEL@http://host:port/v1)",
                name=name,
                source="--oracle",
            ) from None
        try:
            built[name] = build_oracle(oracle_spec, path.resolve().parent)
        except (ResolveError, ImportError) as exc:
            raise RitualInputError(
                f"--oracle {name}={provider}:{wanted['model']}: {exc}",
                name=name,
                source="--oracle",
            ) from exc
    return built


def run(
    ritual: str | Path,
    inputs: Mapping[str, Any] | None = None,
    *,
    codex: Codex | str | None = None,
    invocation_id: str | None = None,
    trace_path: str | Path | None = None,
    modes: Sequence[str] = ("updates",),
    oracles: Mapping[str, Any] | None = None,
    secrets: Secrets | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
) -> Performance:
    """Perform a ritual file from the start.

    Args:
        ritual: Path to the ritual file (YAML).
        inputs: Values for the ritual's declared inputs (checked, defaults filled in).
        codex: A Codex, a Codex URL (see :func:`open_codex`) or None: the ritual file's
            ``codex:`` if it names one, else the default ``.sanctum/codex.db``. A Codex
            passed in is not closed afterwards.
        invocation_id: The Invocation's id; a fresh uuid4 hex when omitted.
        trace_path: Where to write a trace (a TraceRecorder is attached).
        modes: Stream modes whose Omens the iteration yields (``updates``, ``values``,
            ``omens``, ``tokens``); empty yields none.
        oracles: Oracle overrides by name, from :func:`parse_oracle_overrides`.
        secrets: More to mask (a :class:`~sanctum.wards.secrets.Secrets`), on top of
            the ritual file's secrets and the codex URL's password: Seals, Omens,
            traces, audit lines, the result and error messages never show them.
        record: Record every Oracle call to this cassette (JSON Lines, masked; see
            ``sanctum.oracle.cassette``), replacing the file but keeping its rules.
        replay: Answer every Oracle call from this cassette; no oracle is built or
            contacted. A request that differs fails the run with a CassetteMismatch.

    Returns:
        A :class:`Performance` to iterate.

    Raises:
        TypeError: If ``secrets`` is not a Secrets.
        SealError: (from the iteration) If ``invocation_id`` is empty, longer than 512
            characters or holds a NUL character, or already exists in the codex.
        RitualFileError: (from the iteration) If the ritual file is missing, no
            regular file (a named pipe, a device) or malformed.
        RitualInputError: (from the iteration) If ``ritual`` is an empty path, or the
            inputs or ``oracles`` do not fit.
    """
    path = Path(ritual)
    resolved = path.resolve()
    given = dict(inputs or {})

    async def prepare(performance: Performance) -> tuple[Rite, dict[str, Any]]:
        from sanctum.codex._serial import check_ids
        from sanctum.ritualfile import load_ritual
        from sanctum.ritualfile.compiler import ritual_secrets

        check_ids(performance.invocation_id)  # before any work: no store keys such an id
        if not str(ritual).strip():  # Path("") would read the working directory, "."
            raise RitualInputError("no ritual file given: the path is empty", source="ritual")
        performance.ritual_path = resolved
        check_regular_file(path)  # a named pipe or a device would never finish reading
        spec = load_ritual(path)
        performance._add_secrets(more=ritual_secrets(spec))
        checked = check_inputs(spec, given)
        store = performance.open_store(spec.codex)
        await _check_claimable(store, performance.invocation_id)
        existing = await store.latest_seal_id(performance.invocation_id)
        if existing is not None:
            raise SealError(
                f"invocation {performance.invocation_id!r} already exists in the codex; "
                f"continue it with `{resume_command(performance.invocation_id)}` or choose "
                "another --invocation",
                invocation_id=performance.invocation_id,
            )
        cassette = open_cassette(
            record=record,
            replay=replay,
            command="run",
            superstep=0,
            invocation=performance.invocation_id,
        )
        rite = _compile(spec, path, store, oracles, performance, cassette)
        return rite, {"input": checked, "metadata": _ritual_metadata(resolved)}

    return Performance(
        prepare,
        invocation_id=invocation_id or uuid.uuid4().hex,
        codex=codex,
        modes=modes,
        trace_path=trace_path,
        secrets=_checked_secrets(secrets),
    )


def resume(
    invocation_id: str,
    *,
    updates: Mapping[str, Any] | None = None,
    seal_id: str | None = None,
    force: bool = False,
    codex: Codex | str | None = None,
    trace_path: str | Path | None = None,
    modes: Sequence[str] = ("updates",),
    oracles: Mapping[str, Any] | None = None,
    secrets: Secrets | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
) -> Performance:
    """Continue an invocation from its latest Seal (or from ``seal_id``).

    The ritual file is found through the Seal's metadata (its path and content hash,
    recorded at :func:`run`).

    Args:
        invocation_id: The Invocation to continue.
        updates: Values merged into the restored Aether first (answers to an
            interrupt's question); each name must be a conduit or an input of the
            ritual (see :func:`check_updates`).
        seal_id: A historic Seal to continue from instead of the latest (time-travel).
        force: Continue even when the ritual file changed since the run.
        codex: A Codex, a Codex URL or None for the default ``.sanctum/codex.db``.
        trace_path: Where to write a trace of the resumed part.
        modes: Stream modes whose Omens the iteration yields.
        oracles: Oracle overrides by name.
        secrets: More to mask, as for :func:`run`.
        record: Append this resume's Oracle calls to a cassette (a new session).
        replay: Answer from the cassette's session recorded by a resume from the
            same Seal superstep.

    Returns:
        A :class:`Performance` to iterate.

    Raises:
        TypeError: If ``secrets`` is not a Secrets.
        SealError: (from the iteration) If the codex does not exist, the invocation or
            the Seal is unknown, or the ritual file is missing or changed (without
            ``force``).
        RitualInputError: (from the iteration) If an update names no conduit of the
            ritual or its value does not fit; nothing is resumed.
    """

    async def prepare(performance: Performance) -> tuple[Rite, dict[str, Any]]:
        from sanctum.ritualfile import load_ritual
        from sanctum.ritualfile.compiler import ritual_secrets

        store = performance.open_store()
        if seal_id is not None:
            seal = await store.get_seal(invocation_id, seal_id)
            if seal is None and seal_id:
                whole = await _seal_by_prefix(store, invocation_id, seal_id)
                seal = await store.get_seal(invocation_id, whole) if whole else None
            if seal is None:
                raise SealError(
                    f"invocation {invocation_id!r} has no seal {seal_id!r}; list its seals "
                    f"with `sanctum seals --invocation {invocation_id}`",
                    invocation_id=invocation_id,
                    seal_id=seal_id,
                )
        else:
            seal = await store.get(invocation_id)
            if seal is None:
                raise SealError(
                    f"unknown invocation {invocation_id!r} in the codex "
                    f"{_describe_codex(performance.codex_url)}; list them with "
                    "`sanctum invocations`",
                    invocation_id=invocation_id,
                )
        if seal_id is None and all(name == "__end__" for name in seal.frontier):
            _refuse_done(seal, invocation_id, performance.codex_url)
        await _check_claimable(store, invocation_id)
        path = _ritual_from_seal(seal, invocation_id, force=force)
        performance.ritual_path = path
        spec = load_ritual(path)
        performance._add_secrets(more=ritual_secrets(spec))
        checked = check_updates(spec, updates or {})
        cassette = open_cassette(
            record=record,
            replay=replay,
            command="resume",
            superstep=seal.superstep,
            invocation=invocation_id,
        )
        rite = _compile(spec, path, store, oracles, performance, cassette)
        call: dict[str, Any] = {"metadata": _ritual_metadata(path)}
        if checked:
            call["updates"] = checked
        if seal_id is not None:
            call["seal_id"] = seal.seal_id  # the whole id, when a prefix was given
        return rite, call

    return Performance(
        prepare,
        invocation_id=invocation_id,
        codex=codex,
        modes=modes,
        trace_path=trace_path,
        read_only=True,
        secrets=_checked_secrets(secrets),
    )


def _checked_secrets(secrets: Any) -> Secrets | None:
    """``secrets`` when it is a Secrets (or None); a TypeError otherwise."""
    from sanctum.wards.secrets import Secrets

    if secrets is None or isinstance(secrets, Secrets):
        return secrets
    raise TypeError(
        f"secrets must be a sanctum Secrets (a masking policy), got {type(secrets).__name__}"
    )


def _ritual_from_seal(seal: Seal, invocation_id: str, *, force: bool) -> Path:
    """The ritual file recorded in a Seal, checked against its recorded hash."""
    record = seal.metadata.get("ritual")
    if not isinstance(record, Mapping) or not isinstance(record.get("path"), str):
        raise SealError(
            f"invocation {invocation_id!r} was not started from a ritual file (its seals "
            "record no ritual path), so the command line cannot resume it; resume it from "
            "Python with rite.ainvoke(invocation_id=...)",
            invocation_id=invocation_id,
        )
    path = Path(record["path"])
    if not path.is_file():
        raise SealError(
            f"invocation {invocation_id!r} ran the ritual {path}, which no longer exists; "
            "restore the file to resume",
            invocation_id=invocation_id,
            location=str(path),
        )
    recorded = record.get("sha256")
    if recorded and not force and ritual_digest(path) != recorded:
        raise SealError(
            f"the ritual {path} changed since invocation {invocation_id!r} ran it; resuming "
            "may misbehave. Restore the file, or pass --force to resume with the new version",
            invocation_id=invocation_id,
            location=str(path),
        )
    return path


def _echoed_token(echo: Any) -> Any:
    """The TokenEmitted inside (possibly nested) Circle echoes, named ``circle/sigil``.

    The ``tokens`` stream mode yields only the outer graph's tokens (the specification
    wraps a Circle's inner Omens in CircleEchoed, an ``omens``-mode event); a person
    asking for tokens wants those of the Circles and agents too.
    """
    import dataclasses

    from sanctum.omens.events import CircleEchoed, TokenEmitted

    path: list[str] = []
    omen = echo
    while isinstance(omen, CircleEchoed):
        path.append(omen.circle)
        omen = omen.omen
    if not isinstance(omen, TokenEmitted):
        return None
    return dataclasses.replace(omen, sigil="/".join([*path, omen.sigil]))
