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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from sanctum.errors import Interrupt, SanctumError, SealError

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, InvocationSummary, Seal
    from sanctum.omens.events import Omen
    from sanctum.oracle.base import Oracle
    from sanctum.ritual import Rite
    from sanctum.spec import RitualSpec, TestResult

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
    """Read ``NAME=provider:model[@URL]`` overrides (``--oracle local=ollama:qwen2.5:0.5b``).

    Only the first ``:`` after the ``=`` separates the provider from the model, so model
    tags with colons survive. A trailing ``@http://…`` (or ``@https://…``) gives the
    server's address, e.g. ``local=openai:qwen@http://127.0.0.1:8080/v1``; without it
    the ritual's own address is kept when the provider stays the same.

    Returns:
        ``{name: {"provider": provider, "model": model}}`` plus ``"base_url"`` when an
        address was given.

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
        entry = {"provider": provider.strip(), "model": model.strip()}
        head, at, address = entry["model"].rpartition("@")
        if at and head and address.startswith(("http://", "https://")):
            entry["model"], entry["base_url"] = head, address
        overrides[name.strip()] = entry
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

Prepare = Callable[["Performance"], Awaitable[tuple["Rite", dict[str, Any]]]]


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
        prepare: Prepare,
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
        self._store: Codex | None = None
        self._owned = False
        self.codex_url: str | None = None
        """The Codex URL a resume must name (None: the default store, or a Codex object)."""
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
        url = self._codex_arg or fallback
        self._store = open_codex(url)
        self._owned = True
        if url and not _is_default_store(self._store):
            self.codex_url = url
        return self._store

    async def _perform(self) -> AsyncIterator[Omen]:
        from sanctum.omens import resolve_modes
        from sanctum.omens.events import RiteManifested, SuperstepCompleted

        wanted = resolve_modes(self.modes) if self.modes else frozenset()
        try:
            rite, call = await self._prepare(self)
            codex = self.open_store()
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
            if self._owned and self._store is not None:
                await self._store.aclose()

    def _result(self, status: RunStatus, aether: dict[str, Any], **extra: Any) -> RunResult:
        return RunResult(
            status=status,
            invocation_id=self.invocation_id,
            aether=aether,
            ritual=str(self.ritual_path) if self.ritual_path else None,
            codex_url=self.codex_url,
            **extra,
        )


def _is_default_store(store: Codex) -> bool:
    """Whether ``store`` is the embedded default ``.sanctum/codex.db`` of the working dir."""
    path = getattr(store, "path", None)
    if not isinstance(path, Path):
        return False
    return path.resolve() == (Path.cwd() / DEFAULT_CODEX_PATH).resolve()


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


def _compile(
    spec: RitualSpec, path: Path, codex: Codex, overrides: Mapping[str, Any] | None
) -> Rite:
    from sanctum.spec import compile_ritual

    oracles = _override_oracles(spec, path, overrides) if overrides else None
    return compile_ritual(spec, codex=codex, oracles=oracles)


_PROVIDERS = ("ollama", "openai", "llamacpp", "scripted")


def _override_oracles(
    spec: RitualSpec, path: Path, overrides: Mapping[str, Any]
) -> dict[str, Oracle]:
    """Build the Oracles ``--oracle NAME=provider:model`` asks for."""
    import difflib

    from pydantic import ValidationError

    from sanctum.spec import models
    from sanctum.spec.resolve import build_oracle

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
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}"
                for err in exc.errors()
            )
            raise RitualInputError(
                f"--oracle {name}={provider}:{wanted['model']}: {problems} (an openai "
                "endpoint needs its address: --oracle NAME=openai:MODEL@http://host:port/v1)",
                name=name,
                source="--oracle",
            ) from None
        built[name] = build_oracle(oracle_spec, path.resolve().parent)
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

    Returns:
        A :class:`Performance` to iterate.
    """
    path = Path(ritual)
    resolved = path.resolve()
    given = dict(inputs or {})

    async def prepare(performance: Performance) -> tuple[Rite, dict[str, Any]]:
        from sanctum.spec import load_ritual

        spec = load_ritual(path)
        checked = check_inputs(spec, given)
        performance.ritual_path = resolved
        store = performance.open_store(spec.codex)
        existing = await store.get(performance.invocation_id)
        if existing is not None:
            raise SealError(
                f"invocation {performance.invocation_id!r} already exists in the codex; "
                f"continue it with `{resume_command(performance.invocation_id)}` or choose "
                "another --invocation",
                invocation_id=performance.invocation_id,
            )
        rite = _compile(spec, path, store, oracles)
        return rite, {"input": checked, "metadata": _ritual_metadata(resolved)}

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
        codex: A Codex, a Codex URL or None for the default ``.sanctum/codex.db``.
        trace_path: Where to write a trace of the resumed part.
        modes: Stream modes whose Omens the iteration yields.
        oracles: Oracle overrides by name.

    Returns:
        A :class:`Performance` to iterate.

    Raises:
        SealError: (from the iteration) If the invocation or the Seal is unknown, or
            the ritual file is missing or changed (without ``force``).
    """

    async def prepare(performance: Performance) -> tuple[Rite, dict[str, Any]]:
        from sanctum.spec import load_ritual

        store = performance.open_store()
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


# --------------------------------------------------------------------------- traces


class TraceFileError(SanctumError, ValueError):
    """A file given as a trace is not a sanctum trace (``path`` names it)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read a ``.sanctum-trace.json`` file written by ``sanctum run --trace``.

    Returns:
        The trace document (format in :mod:`sanctum.tracing.document`).

    Raises:
        FileNotFoundError: If the file does not exist.
        TraceFileError: If it is not a sanctum trace of a supported version.
    """
    from sanctum.tracing.render import load_trace as read

    try:
        return read(path)
    except FileNotFoundError:
        raise
    except ValueError as exc:
        raise TraceFileError(str(exc), path=str(path)) from exc


def render_trace_file(path: str | Path, output: str | Path | None = None) -> Path:
    """Render a trace file as one self-contained HTML page.

    Args:
        path: The ``.sanctum-trace.json`` file.
        output: Where to write (default: ``path`` with an ``.html`` suffix).

    Returns:
        The written HTML file's path.

    Raises:
        FileNotFoundError: If the trace does not exist.
        TraceFileError: If it is not a sanctum trace.
        OSError: If the page cannot be written.
    """
    from sanctum.tracing import render_trace

    try:
        return render_trace(path, output)
    except FileNotFoundError:
        raise
    except ValueError as exc:
        raise TraceFileError(str(exc), path=str(path)) from exc


# --------------------------------------------------------------------------- ritual tests


def find_test_files(paths: Sequence[str | Path]) -> builtins.list[Path]:
    """The ``NAME.test.yaml`` files the paths name.

    A test file stands for itself, a ritual file for its sibling ``NAME.test.yaml``,
    a folder for every test file below it (sorted).

    Raises:
        FileNotFoundError: If a path does not exist, or a ritual has no test file.
    """
    found: builtins.list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found.extend(sorted(path.rglob("*.test.yaml")))
        elif path.name.endswith(".test.yaml"):
            if not path.is_file():
                raise FileNotFoundError(2, "no such test file", str(path))
            found.append(path)
        elif path.is_file():
            sibling = path.with_name(path.name.rsplit(".", 1)[0] + ".test.yaml")
            if not sibling.is_file():
                raise FileNotFoundError(
                    2, f"no test cases for {path} (write them in {sibling.name})", str(sibling)
                )
            found.append(sibling)
        else:
            raise FileNotFoundError(2, "no such file or folder", str(path))
    unique: builtins.list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def run_tests(paths: Sequence[str | Path]) -> builtins.list[TestResult]:
    """Run the ritual test cases the paths name (see :func:`find_test_files`).

    Returns:
        One ``sanctum.spec.TestResult`` per case, in file and case order.
    """
    from sanctum.spec import run_ritual_tests

    results: builtins.list[TestResult] = []
    for file in find_test_files(paths):
        results.extend(run_ritual_tests(file))
    return results


def junit_xml(results: Sequence[TestResult]) -> str:
    """The results as a JUnit XML report (one testsuite per test file)."""
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name="sanctum")
    suites: dict[str, ET.Element] = {}
    for result in results:
        suite = suites.get(result.file)
        if suite is None:
            suite = ET.SubElement(root, "testsuite", name=result.file)
            suites[result.file] = suite
        case = ET.SubElement(
            suite,
            "testcase",
            classname=Path(result.file).name.removesuffix(".yaml").replace(".", "_"),
            name=result.name,
            time=f"{result.duration:.3f}",
        )
        if not result.passed:
            failure = ET.SubElement(case, "failure", message=result.message, type=result.status)
            failure.text = result.message
    for element in [root, *suites.values()]:
        cases = element.iter("testcase")
        total = failed = 0
        seconds = 0.0
        for case in cases:
            total += 1
            failed += case.find("failure") is not None
            seconds += float(case.get("time", "0"))
        element.set("tests", str(total))
        element.set("failures", str(failed))
        element.set("errors", "0")
        element.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
