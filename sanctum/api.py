"""The facade: load, check, run, resume, list and render — what the command line uses.

A library user may call these too; nothing here draws on a terminal (no typer, no
rich). The functions take plain values (paths, URLs, ``key=value`` strings) and hand
back sanctum objects: Omens, Seals, :class:`InvocationSummary` rows and a
:class:`RunResult`.

Running is a two-part conversation: :func:`run` and :func:`resume` return a
:class:`Performance` — an async iterator of Omens (Omen — a stream event) — whose
:attr:`Performance.result` is set once the iteration ends::

    performance = sanctum.api.run("rituals/hello.yaml", {"name": "Ada"})
    async for omen in performance:
        print(omen)
    print(performance.result.status, performance.result.aether)

Every Seal (Seal — a checkpoint) a run or a resume writes records the ritual file's
path and content hash in its metadata (key ``"ritual"``), so :func:`resume` finds the
file again and refuses to continue when it changed since, unless ``force=True``.
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from sanctum.errors import Interrupt, SanctumError, SealError

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, InvocationSummary, Seal
    from sanctum.omens.events import Omen
    from sanctum.ritual import Rite
    from sanctum.spec import RitualSpec

__all__ = [
    "DEFAULT_CODEX_PATH",
    "Performance",
    "RitualInputError",
    "RunResult",
    "check_inputs",
    "load_input_file",
    "omen_to_dict",
    "open_codex",
    "parse_input_pairs",
    "parse_oracle_overrides",
    "resume",
    "resume_command",
    "ritual_digest",
    "run",
]

DEFAULT_CODEX_PATH = Path(".sanctum") / "codex.db"
"""Where the embedded default Codex lives, relative to the working directory."""

RunStatus = Literal["done", "paused", "failed"]


class RitualInputError(SanctumError, ValueError):
    """The inputs (or resumption updates) do not fit the ritual.

    Raised before an invocation starts: a malformed ``key=value`` pair, an unreadable
    or non-mapping input file, an undeclared input name, a missing required input or a
    value of the wrong type. ``name`` is the input at fault (``None`` when the whole
    set is wrong); ``source`` where it came from (``--input``, a file path, ``-``).
    """

    def __init__(self, message: str, *, name: str | None = None, source: str | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.source = source


# --------------------------------------------------------------------------- inputs


def _parse_value(text: str) -> Any:
    """A value as JSON when it parses as JSON, else the string itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_input_pairs(pairs: Iterable[str], *, option: str = "--input") -> dict[str, Any]:
    """Read ``key=value`` pairs into a mapping.

    The value is parsed as JSON when it parses (``n=3`` gives the int 3, ``ok=true`` a
    bool, ``xs=[1,2]`` a list, ``s='"3"'`` the string "3") and kept as the string
    otherwise (``name=Ada``). Later pairs win over earlier ones.

    Args:
        pairs: Strings of the form ``key=value``.
        option: The command-line option the pairs came from, for messages.

    Returns:
        ``dict[str, Any]`` mapping each key to its value.

    Raises:
        RitualInputError: If a pair has no ``=`` or an empty key.
    """
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise RitualInputError(
                f"{option} {pair!r} is not of the form key=value (e.g. {option} name=Ada)",
                source=option,
            )
        values[key] = _parse_value(raw)
    return values


def load_input_file(path: str | Path, *, stdin: IO[str] | None = None) -> dict[str, Any]:
    """Read inputs from a JSON or YAML file (``"-"`` reads standard input).

    JSON is tried first; anything else is read with the ritual format's strict YAML
    loader. The document must be a mapping.

    Args:
        path: The file, or ``"-"`` for ``stdin``.
        stdin: The stream ``"-"`` reads (default ``sys.stdin``).

    Returns:
        ``dict[str, Any]``, the document.

    Raises:
        RitualInputError: If the document does not parse or is not a mapping.
        OSError: If the file cannot be read (e.g. FileNotFoundError).
    """
    source = str(path)
    text = (stdin or sys.stdin).read() if source == "-" else Path(path).read_text(encoding="utf-8")
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = _load_yaml_document(text, source)
    if data is None:
        data = {}
    if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
        raise RitualInputError(
            f"{source}: inputs must be a mapping of names to values, not {type(data).__name__}",
            source=source,
        )
    return dict(data)


def _load_yaml_document(text: str, source: str) -> Any:
    """Parse a YAML inputs document through the YAML layer (which owns PyYAML)."""
    from sanctum.errors import RitualFileError
    from sanctum.spec.loader import load_yaml_text

    try:
        return load_yaml_text(text, source).data
    except RitualFileError as exc:
        raise RitualInputError(
            f"cannot read inputs: {exc}\n(an input file holds one JSON or YAML mapping)",
            source=source,
        ) from exc


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict, Mapping),
    "null": (type(None),),
}


def _type_ok(value: Any, type_name: str | None) -> bool:
    if type_name in (None, "any"):
        return True
    accepted = _JSON_TYPES.get(str(type_name))
    if accepted is None:
        return True
    if isinstance(value, bool) and type_name in ("integer", "number"):
        return False
    return isinstance(value, accepted)


def _declared_inputs(spec: RitualSpec) -> dict[str, Any]:
    """``{name: declaration}`` of the ritual's inputs (declaration has type/default)."""
    declared = getattr(spec, "inputs", None) or {}
    return dict(declared)


def _field(declaration: Any, name: str) -> Any:
    if isinstance(declaration, Mapping):
        return declaration.get(name)
    return getattr(declaration, name, None)


def check_inputs(spec: RitualSpec, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Check inputs against the ritual's declared ``inputs`` and fill in defaults.

    Args:
        spec: The loaded ritual (``sanctum.spec.load_ritual``).
        inputs: Values by input name.

    Returns:
        ``dict[str, Any]``: the inputs with declared defaults added.

    Raises:
        RitualInputError: For an undeclared name (with a did-you-mean), a missing
            required input, or a value whose type differs from the declaration.
    """
    import difflib

    declared = _declared_inputs(spec)
    name_of_ritual = getattr(spec, "name", None) or "the ritual"
    checked = dict(inputs)
    for key in inputs:
        if key not in declared:
            close = difflib.get_close_matches(key, list(declared), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(declared)) or "none"
            raise RitualInputError(
                f"{name_of_ritual} declares no input {key!r}{hint} (declared inputs: {known})",
                name=key,
            )
    for key, declaration in declared.items():
        if key not in checked:
            default = _field(declaration, "default")
            fields_set = getattr(declaration, "model_fields_set", None)
            has_default = default is not None or (
                fields_set is not None and "default" in fields_set
            )
            if isinstance(declaration, Mapping):
                has_default = "default" in declaration
            required = _field(declaration, "required")
            if has_default:
                checked[key] = default
            elif required is not False:
                raise RitualInputError(
                    f"{name_of_ritual} needs the input {key!r}; give it with --input {key}=VALUE",
                    name=key,
                )
            continue
        type_name = _field(declaration, "type")
        if not _type_ok(checked[key], type_name):
            raise RitualInputError(
                f"input {key!r} must be of type {type_name}, got {type(checked[key]).__name__} "
                f"{checked[key]!r} (values given as key=value are read as JSON when they "
                "parse: quote a string like key='\"42\"')",
                name=key,
            )
        allowed = _field(declaration, "enum")
        if allowed is not None and checked[key] not in list(allowed):
            choices = ", ".join(json.dumps(v) for v in allowed)
            raise RitualInputError(
                f"input {key!r} must be one of {choices}, got {json.dumps(checked[key])}",
                name=key,
            )
    return checked


def parse_oracle_overrides(pairs: Iterable[str]) -> dict[str, dict[str, str]]:
    """Read ``NAME=provider:model`` overrides (``--oracle local=ollama:qwen2.5:0.5b``).

    Only the first ``:`` after the ``=`` separates the provider from the model, so model
    tags with colons survive.

    Returns:
        ``{name: {"provider": provider, "model": model}}``.

    Raises:
        RitualInputError: If a pair is not of the form ``NAME=provider:model``.
    """
    overrides: dict[str, dict[str, str]] = {}
    for pair in pairs:
        name, sep, target = pair.partition("=")
        provider, colon, model = target.partition(":")
        if not sep or not name.strip() or not colon or not provider.strip() or not model.strip():
            raise RitualInputError(
                f"--oracle {pair!r} is not of the form NAME=provider:model "
                "(e.g. --oracle local=ollama:qwen2.5:0.5b)",
                source="--oracle",
            )
        overrides[name.strip()] = {"provider": provider.strip(), "model": model.strip()}
    return overrides


# --------------------------------------------------------------------------- codex


def open_codex(url: str | None = None, *, cwd: str | Path | None = None) -> Codex:
    """Open the Codex — the Seal store — a URL names.

    ``None`` opens the embedded default, a SQLite file ``.sanctum/codex.db`` under the
    working directory (created on first use). ``memory:`` gives an ephemeral
    MemoryCodex. ``sqlite:///relative/path.db`` and ``sqlite:////absolute/path.db``
    (SQLAlchemy's convention) or a bare file path give a SqliteCodex.
    ``postgresql://…`` gives a PostgresCodex (needs the ``postgres`` extra).

    Args:
        url: The store's URL, or None for the default.
        cwd: Directory relative paths are resolved against (default: the working one).

    Returns:
        An open Codex; the caller closes it with ``await codex.aclose()``.

    Raises:
        SealError: If the URL's scheme is unknown or the store cannot be opened.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    if url is None or url == "":
        return _sqlite(base / DEFAULT_CODEX_PATH)
    if url in ("memory:", "memory://", ":memory:"):
        from sanctum.codex.memory import MemoryCodex

        return MemoryCodex()
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        from sanctum.codex.postgres import PostgresCodex

        return PostgresCodex(url.replace("postgresql+psycopg://", "postgresql://", 1))
    if url.startswith("sqlite:"):
        rest = url.removeprefix("sqlite:")
        if rest.startswith("//"):
            rest = rest[2:]
            rest = rest[1:] if rest.startswith("/") else rest
        if not rest:
            raise SealError(
                f"codex URL {url!r} names no file; write sqlite:///path/to/codex.db",
                location=url,
            )
        path = Path(rest)
        return _sqlite(path if path.is_absolute() else base / path)
    if "://" in url:
        raise SealError(
            f"unknown codex URL {url!r}; use sqlite:///path.db, postgresql://host/db or memory:",
            location=url,
        )
    path = Path(url)
    return _sqlite(path if path.is_absolute() else base / path)


def _sqlite(path: Path) -> Codex:
    from sanctum.codex.sqlite import SqliteCodex

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SealError(
            f"cannot create the codex directory {path.parent}: {exc.strerror or exc}",
            location=str(path),
        ) from exc
    return SqliteCodex(path)


def _describe_codex(url: str | None) -> str:
    return url if url else str(DEFAULT_CODEX_PATH)


# --------------------------------------------------------------------------- results


def ritual_digest(path: str | Path) -> str:
    """The ritual file's content hash: ``"sha256:"`` plus 64 hex digits.

    Raises:
        OSError: If the file cannot be read.
    """
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def resume_command(invocation_id: str, codex_url: str | None = None) -> str:
    """The exact ``sanctum resume`` command that continues ``invocation_id``."""
    command = f"sanctum resume --invocation {invocation_id}"
    if codex_url:
        command += f" --codex {codex_url}"
    return command


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a performance ended.

    ``status`` is ``"done"`` (END reached), ``"paused"`` (an interrupt; resume it) or
    ``"failed"``; ``aether`` the final Aether (state dict) — for a pause, the Aether of
    the pause's Seal; for a failure, the last known one. ``reason`` and ``sigil`` say
    why and where a pause happened; ``seal_id`` the Seal to resume from; ``error`` and
    ``error_type`` describe a failure; ``ritual`` is the ritual file's path.
    """

    status: RunStatus
    invocation_id: str
    aether: Mapping[str, Any]
    ritual: str | None = None
    reason: str | None = None
    sigil: str | None = None
    seal_id: str | None = None
    error: str | None = None
    error_type: str | None = None
    codex_url: str | None = None

    @property
    def resume_command(self) -> str:
        """The exact ``sanctum resume`` command that continues this invocation."""
        return resume_command(self.invocation_id, self.codex_url)

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON-ready data (``{"kind": "result", ...}``)."""
        data: dict[str, Any] = {"kind": "result"}
        data.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})
        data["aether"] = dict(self.aether)
        if self.status == "paused":
            data["resume"] = self.resume_command
        return data


def omen_to_dict(omen: Omen) -> dict[str, Any]:
    """An Omen as plain JSON-ready data: ``{"kind": "omen", "type": ClassName, ...}``.

    Mappings become dicts and tuples lists; an echoed inner Omen (CircleEchoed) is
    converted recursively. Values JSON cannot carry are left for the caller's encoder.
    """
    data: dict[str, Any] = {"kind": "omen", "type": type(omen).__name__}
    for f in dataclasses.fields(omen):
        data[f.name] = _plain(getattr(omen, f.name))
    return data


def _plain(value: Any) -> Any:
    from sanctum.omens.events import Omen

    if isinstance(value, Omen):
        return omen_to_dict(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# --------------------------------------------------------------------------- performing


class Performance:
    """A ritual being performed: iterate for its Omens, then read :attr:`result`.

    Setup problems (a missing or malformed ritual file, bad inputs, an unknown
    invocation, a ritual changed since its run) raise from the first step of the
    iteration, before any Omen. A failure of the ritual itself does not raise: the
    iteration ends and :attr:`result` has ``status == "failed"``. An interrupt ends it
    with ``status == "paused"``. Ctrl-C (``KeyboardInterrupt``/cancellation) stops the
    invocation; the Seals already written keep it resumable.
    """

    def __init__(
        self,
        prepare: Any,
        *,
        invocation_id: str,
        codex: Codex | str | None,
        modes: Sequence[str],
        trace_path: str | Path | None,
    ) -> None:
        self._prepare = prepare
        self.invocation_id = invocation_id
        """The Invocation's id (known before the first Omen)."""
        self._codex_arg = codex
        self.codex_url: str | None = codex if isinstance(codex, str) else None
        self.modes: tuple[str, ...] = tuple(modes)
        self.trace_path = Path(trace_path) if trace_path is not None else None
        self.ritual_path: Path | None = None
        """The ritual file's path, once known."""
        self.result: RunResult | None = None
        """How the performance ended; None until the iteration finishes."""
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
        from sanctum.codex.base import Codex
        from sanctum.omens import resolve_modes
        from sanctum.omens.events import RiteManifested, SuperstepCompleted

        wanted = resolve_modes(self.modes) if self.modes else frozenset()
        owned = not isinstance(self._codex_arg, Codex)
        codex = self._codex_arg if isinstance(self._codex_arg, Codex) else None
        try:
            if codex is None:
                codex = open_codex(self._codex_arg if isinstance(self._codex_arg, str) else None)
            rite, call = await self._prepare(self, codex)
            recorder = None
            if self.trace_path is not None:
                from sanctum.tracing import TraceRecorder

                recorder = TraceRecorder(self.trace_path)
                rite = rite.with_options(wards=(*rite.wards, recorder))
            final: Mapping[str, Any] | None = None
            last_aether: Mapping[str, Any] = {}
            ending: BaseException | None = None
            try:
                stream = rite.astream(
                    **call, invocation_id=self.invocation_id, mode={*self.modes, "omens", "values"}
                )
                async for omen in stream:
                    if isinstance(omen, RiteManifested):
                        final = omen.aether
                    elif isinstance(omen, SuperstepCompleted):
                        last_aether = omen.aether
                    if type(omen) in wanted:
                        yield omen
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
                    error=_failure_message(failure),
                    error_type=type(failure).__name__,
                )
                return
            except BaseException as stopped:
                ending = stopped
                raise
            finally:
                if recorder is not None and final is None:
                    _flush_trace(recorder, ending)
            self.result = self._result("done", dict(final if final is not None else last_aether))
        finally:
            if owned and codex is not None:
                await codex.aclose()

    def _result(self, status: RunStatus, aether: dict[str, Any], **extra: Any) -> RunResult:
        return RunResult(
            status=status,
            invocation_id=self.invocation_id,
            aether=aether,
            ritual=str(self.ritual_path) if self.ritual_path else None,
            codex_url=self.codex_url,
            **extra,
        )


def _flush_trace(recorder: Any, ending: BaseException | None) -> None:
    """Write the trace of an invocation that paused, failed or was stopped."""
    import warnings

    try:
        recorder.flush(ending)
    except (OSError, TypeError, ValueError) as exc:
        warnings.warn(f"could not write the trace: {exc}", RuntimeWarning, stacklevel=2)


def _failure_message(failure: BaseException) -> str:
    """The failure and its cause, e.g. ``sigil 'x' failed: ... (caused by ...)``."""
    message = str(failure) or type(failure).__name__
    cause = failure.__cause__
    if cause is not None and str(cause) and str(cause) not in message:
        message += f" (caused by {type(cause).__name__}: {cause})"
    return message


def _ritual_metadata(path: Path) -> dict[str, Any]:
    return {"ritual": {"path": str(path), "sha256": ritual_digest(path)}}


def _compile(spec: Any, path: Path, codex: Codex, oracles: Mapping[str, Any] | None) -> Rite:
    from sanctum.spec import compile_ritual

    overrides: dict[str, Any] = {"codex": codex}
    if oracles:
        overrides["oracles"] = dict(oracles)
    return compile_ritual(spec, **overrides)


def run(
    ritual: str | Path,
    inputs: Mapping[str, Any] | None = None,
    *,
    codex: Codex | str | None = None,
    invocation_id: str | None = None,
    trace_path: str | Path | None = None,
    modes: Sequence[str] = ("updates",),
    oracles: Mapping[str, Any] | None = None,
) -> Performance:
    """Perform a ritual file from the start.

    Args:
        ritual: Path to the ritual file (YAML).
        inputs: Values for the ritual's declared inputs (checked, defaults filled in).
        codex: A Codex, a Codex URL (see :func:`open_codex`) or None for the default
            ``.sanctum/codex.db``. A Codex passed in is not closed afterwards.
        invocation_id: The Invocation's id; a fresh uuid4 hex when omitted.
        trace_path: Where to write a trace (a TraceRecorder is attached).
        modes: Stream modes whose Omens the iteration yields (``updates``, ``values``,
            ``omens``, ``tokens``); empty yields none.
        oracles: Oracle overrides by name, e.g. from :func:`parse_oracle_overrides`.

    Returns:
        A :class:`Performance` to iterate.
    """
    path = Path(ritual)
    resolved = path.resolve()
    given = dict(inputs or {})

    async def prepare(performance: Performance, store: Codex) -> tuple[Rite, dict[str, Any]]:
        from sanctum.spec import load_ritual

        spec = load_ritual(path)
        checked = check_inputs(spec, given)
        performance.ritual_path = resolved
        existing = await store.get(performance.invocation_id)
        if existing is not None:
            raise SealError(
                f"invocation {performance.invocation_id!r} already exists in the codex; "
                f"continue it with `{resume_command(performance.invocation_id)}` or choose "
                "another --invocation",
                invocation_id=performance.invocation_id,
            )
        rite = _compile(spec, path, store, oracles)
        return rite, {"input": checked, "metadata": _ritual_metadata(performance.ritual_path)}

    return Performance(
        prepare,
        invocation_id=invocation_id or uuid.uuid4().hex,
        codex=codex,
        modes=modes,
        trace_path=trace_path,
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
) -> Performance:
    """Continue an invocation from its latest Seal (or from ``seal_id``).

    The ritual file is found through the Seal's metadata (its path and content hash,
    recorded at :func:`run`).

    Args:
        invocation_id: The Invocation to continue.
        updates: Values merged into the restored Aether first (answers to an
            interrupt's question).
        seal_id: A historic Seal to continue from instead of the latest (time-travel).
        force: Continue even when the ritual file changed since the run.
        codex: A Codex, a Codex URL or None for the default (see :func:`run`).
        trace_path: Where to write a trace of the resumed part.
        modes: Stream modes whose Omens the iteration yields.
        oracles: Oracle overrides by name.

    Returns:
        A :class:`Performance` to iterate.

    Raises:
        SealError: (from the iteration) If the invocation or the Seal is unknown, or
            the ritual file is missing or changed (without ``force``).
    """

    async def prepare(performance: Performance, store: Codex) -> tuple[Rite, dict[str, Any]]:
        from sanctum.spec import load_ritual

        if seal_id is not None:
            seal = await store.get_seal(invocation_id, seal_id)
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
        path = _ritual_from_seal(seal, invocation_id, force=force)
        performance.ritual_path = path
        spec = load_ritual(path)
        rite = _compile(spec, path, store, oracles)
        call: dict[str, Any] = {"metadata": _ritual_metadata(path)}
        if updates:
            call["updates"] = dict(updates)
        if seal_id is not None:
            call["seal_id"] = seal_id
        return rite, call

    return Performance(
        prepare, invocation_id=invocation_id, codex=codex, modes=modes, trace_path=trace_path
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


# --------------------------------------------------------------------------- history


async def list_invocations(
    codex: Codex | str | None = None, *, limit: int = 50
) -> builtins.list[InvocationSummary]:
    """The most recently updated invocations in a Codex, newest first.

    Raises:
        SealError: If the store cannot be opened or enumerated.
    """
    store, owned = _store(codex)
    try:
        try:
            return await store.invocations(limit)
        except NotImplementedError as exc:
            raise SealError(str(exc)) from exc
    finally:
        if owned:
            await store.aclose()


async def list_seals(invocation_id: str, codex: Codex | str | None = None) -> builtins.list[Seal]:
    """An invocation's Seal history, oldest first.

    Raises:
        SealError: If the invocation is unknown.
    """
    store, owned = _store(codex)
    try:
        seals = await store.list(invocation_id)
    finally:
        if owned:
            await store.aclose()
    if not seals:
        raise SealError(
            f"unknown invocation {invocation_id!r} in the codex "
            f"{_describe_codex(codex if isinstance(codex, str) else None)}; list them with "
            "`sanctum invocations`",
            invocation_id=invocation_id,
        )
    return seals


def _store(codex: Codex | str | None) -> tuple[Codex, bool]:
    from sanctum.codex.base import Codex

    if isinstance(codex, Codex):
        return codex, False
    return open_codex(codex), True
