"""A ritual file, read once: :func:`load` gives a :class:`RitualFile`.

A RitualFile holds everything a run needs from the file — its path, the digest of the
very bytes parsed, the validated model, the positions of its keys and values, its
secrets and its circle files — and answers every question a run asks of the file
(check it, bind inputs and updates, override oracles, mask traces, compile a Rite)
without reading the file again. The digest a Seal records is this one, so a file
changed between the load and the run is recorded as the version that ran.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanctum.errors import FileProblem, RitualFileError, RitualInputError
from sanctum.ritualfile import binding
from sanctum.ritualfile.binding import PROVIDERS, OracleOverride
from sanctum.ritualfile.loader import LoadedFile, YamlPath

if TYPE_CHECKING:
    from sanctum.codex.base import Codex
    from sanctum.oracle.base import Oracle
    from sanctum.ritual import Rite
    from sanctum.ritualfile.models import RitualSpec
    from sanctum.wards.base import Ward
    from sanctum.wards.secrets import Secrets

__all__ = ["PROVIDERS", "OracleOverride", "RitualFile", "load"]

_KEPT_OPTIONS = ("options", "timeout")
"""Fields of an oracle entry kept when an override switches its provider (temperature,
max_tokens, seed and the like live in ``options``)."""


@dataclass(frozen=True, slots=True)
class RitualFile:
    """A ritual file read, parsed and hashed once.

    Attributes:
        path: The file's path as given.
        digest: ``"sha256:"`` plus 64 hex digits of the bytes parsed.
        spec: The validated model (RitualSpec).
        loaded: The plain data with the position of every key and value.
        secrets: What the file's runs must never show (its ``${VAR}`` values, api keys,
            ``redact:`` patterns, its codex URL's password, and its circles' secrets).
        circles: The circle files it mounts, by sigil name.
    """

    path: Path
    digest: str
    spec: RitualSpec
    loaded: LoadedFile = field(repr=False)
    secrets: Secrets = field(repr=False)
    circles: Mapping[str, RitualFile] = field(default_factory=dict, repr=False)
    overrides: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Oracle entries (validated models) replacing the file's, from :meth:`with_oracles`."""

    @classmethod
    def from_spec(cls, spec: RitualSpec) -> RitualFile:
        """The RitualFile of a RitualSpec from ``load_ritual`` (no file is read).

        Raises:
            TypeError: If ``spec`` was not loaded from a file (it has no positions).
        """
        from sanctum.ritualfile.compiler import ritual_secrets

        source = spec._source
        if source is None:
            raise TypeError("a RitualFile needs a RitualSpec from load_ritual (with positions)")
        circles = {name: cls.from_spec(inner) for name, inner in source.circles.items()}
        return cls(
            path=source.path,
            digest=source.loaded.digest,
            spec=spec,
            loaded=source.loaded,
            secrets=ritual_secrets(spec),
            circles=circles,
        )

    @property
    def name(self) -> str:
        """The ritual's ``name:``."""
        return self.spec.name

    @property
    def codex(self) -> str | None:
        """The file's ``codex:`` URL, or None."""
        return self.spec.codex

    @property
    def metadata(self) -> dict[str, Any]:
        """What every Seal of a run records about the file: where it is and what it was.

        Returns:
            ``{"ritual": {"path", "project_path", "sha256", "parts"}}``: the absolute
            path; the path relative to the project root (posix, None when the file lies
            outside it), by which ``resume`` finds a moved project; the digest of the
            file's bytes; and :meth:`parts`, the digests of its circle files and Python
            modules.
        """
        from sanctum.ritualfile.resolve import project_root

        path = self.path.resolve()
        root = project_root(self.path, self.spec.project)
        return {
            "ritual": {
                "path": str(path),
                "project_path": _below(path, root),
                "sha256": self.digest,
                "parts": self.parts(root),
            }
        }

    def parts(self, root: Path | None = None) -> dict[str, str]:
        """The digests of what the file runs besides itself, by path.

        Its circle files (and theirs, at any depth) and the Python modules beside each
        file that ``call:`` or a ``reducer:`` names (a module file, or every ``.py`` of
        a package folder; installed modules are versioned by their package and left
        out). ``resume`` compares them with the ones a Seal recorded.

        Args:
            root: The project root the paths are relative to (default: the file's).

        Returns:
            ``{path: "sha256:<hex>"}``, sorted by path: posix paths relative to
            ``root``, absolute for a file outside it. Unreadable files are left out.
        """
        from sanctum.ritualfile.resolve import module_files, project_root

        base = root if root is not None else project_root(self.path, self.spec.project)
        found: dict[str, str] = {}

        def add(file: RitualFile) -> None:
            folder = file.path.resolve().parent
            for _where, reference in file.code_references():
                for module in module_files(reference, folder):
                    digest = _file_digest(module)
                    if digest is not None:
                        found[_below(module.resolve(), base) or str(module.resolve())] = digest
            for circle in file.circles.values():
                where = circle.path.resolve()
                found[_below(where, base) or str(where)] = circle.digest
                add(circle)

        add(self)
        return dict(sorted(found.items()))

    def position(self, where: YamlPath, *, key: bool = False) -> tuple[int, int]:
        """The 1-based ``(line, column)`` of ``where`` in the file (``(1, 1)`` if unknown)."""
        return self.loaded.position(where, key=key)

    def check(self, *, resolve: bool = False) -> list[FileProblem]:
        """Every problem of the file, compiling with placeholders (or for real).

        Args:
            resolve: Also import ``call`` callables, reducers and spell folders (runs code).

        Returns:
            The problems in file order; empty when the file is sound.
        """
        from sanctum.ritualfile.compiler import compile_ritual
        from sanctum.ritualfile.resolve import missing_module

        problems: list[FileProblem] = []
        try:
            compile_ritual(self.spec, resolve=resolve, codex=None)
        except RitualFileError as exc:
            problems = list(exc.problems)
        if not resolve:  # find the modules without importing them
            folder = self.path.resolve().parent
            for where, reference in self.code_references():
                missing = missing_module(reference, folder)
                if missing is not None:
                    line, column = self.position(where)
                    key = where[-1]
                    problems.append(FileProblem(str(self.path), line, column, f"{key}: {missing}"))
        return sorted(problems, key=lambda p: (p.line, p.column))

    def code_references(self) -> list[tuple[YamlPath, str]]:
        """Every ``module:function`` the file names (``call:``, a Python ``reducer:``).

        Returns:
            ``(where, reference)`` pairs in file order; the file's circles are not
            included (each is checked as a file of its own).
        """
        from sanctum.ritualfile.resolve import is_reference

        found: list[tuple[YamlPath, str]] = []

        def walk(value: Any, where: YamlPath) -> None:
            if isinstance(value, Mapping):
                for key, item in value.items():
                    if key in ("call", "reducer") and isinstance(item, str):
                        if is_reference(item):
                            found.append(((*where, key), item))
                    else:
                        walk(item, (*where, key))
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    walk(item, (*where, index))

        walk(self.loaded.data, ())
        return found

    def bind_inputs(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check a run's inputs against the declared ``inputs:``; defaults filled in.

        :class:`~sanctum.ritualfile.binding.InputText` values are read for the declared
        type (text for ``type: string``, JSON otherwise).

        Returns:
            ``dict[str, Any]``: every declared input with a value.

        Raises:
            RitualInputError: For an undeclared name (with a did-you-mean), a missing
                required input, a wrong type, a value outside its enum, or a value a
                Seal cannot store (NaN, ±Infinity, nesting deeper than 64 levels).
        """
        return binding.bind_inputs(self.spec, values)

    def bind_updates(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check resumption updates against the file's conduits and inputs.

        Returns:
            ``dict[str, Any]``: the updates, read.

        Raises:
            RitualInputError: For an undeclared name, a value that does not fit the
                conduit's type or reducer, or one a Seal cannot store; the message ends
                "nothing was resumed".
        """
        return binding.bind_updates(self.spec, values)

    def with_oracles(self, overrides: Mapping[str, OracleOverride | Oracle]) -> RitualFile:
        """This file with some oracles replaced (``sanctum run --oracle``).

        An :class:`OracleOverride` names another provider or model; an Oracle object
        (an ``sanctum.oracle.Oracle``) is used as it is.

        The file's ``options`` (temperature, max_tokens, seed, ...) and ``timeout`` are
        kept unless the new provider has no such field; with the same provider every
        other field (its address, its api key) is kept too, unless overridden.

        Returns:
            A new RitualFile; this one is unchanged.

        Raises:
            RitualInputError: If ``overrides`` is not a mapping, a name is no oracle of
                the file (with a did-you-mean), a value is neither an OracleOverride nor
                an Oracle (a string ``"ollama:x"``, None, a number: the message says how
                to build an override), the provider is unknown, or the entry does not
                validate (an ``openai`` oracle needs an address).
        """
        if not overrides:
            return self
        if not isinstance(overrides, Mapping):
            raise RitualInputError(
                f"oracles must map oracle names to overrides, not {type(overrides).__name__} "
                f"{_shown(overrides)}; e.g. {{'local': OracleOverride('ollama', 'qwen2.5:0.5b')}}",
                source="oracles",
            )
        from sanctum.oracle.base import Oracle

        replaced = dict(self.overrides)
        for name, wanted in overrides.items():
            if isinstance(wanted, OracleOverride):
                replaced[name] = _override_entry(self.spec, name, wanted)
            elif isinstance(wanted, Oracle):
                _known_oracle(self.spec, name)
                replaced[name] = wanted
            else:
                raise _not_an_override(name, wanted)
        return dataclasses.replace(self, overrides=replaced)

    def redaction(self, extra: Secrets | None = None) -> Callable[[Any], Any] | None:
        """What a trace of a run is passed through before it is written.

        The file's secrets and ``redact:`` patterns, then ``extra`` (a codex URL's
        password, a caller's secrets).

        Returns:
            A function of any JSON-like value, or None when there is nothing to mask.
        """
        from sanctum.ritualfile.compiler import trace_redaction

        own = trace_redaction(self.spec)
        if not extra:
            return own
        mask = extra.mask
        if own is None:
            return mask
        return lambda value: mask(own(value))

    def compile(
        self,
        *,
        codex: Codex | None = None,
        wards: Sequence[Ward] = (),
        secrets: Secrets | None = None,
        cassette: Any = None,
        recursion_limit: int | None = None,
    ) -> Rite:
        """Seal the file into a Rite (Rite — the compiled graph).

        Oracle overrides are built here; ``audit:`` and ``trace:`` wards whose file can
        never be written are refused before anything runs.

        Args:
            codex: The Seal store (Codex — a checkpoint store); None: the file's
                ``codex:``, if any.
            wards: Wards appended after the file's own.
            secrets: More to mask, on top of :attr:`secrets`.
            cassette: A cassette recorder or player answering every Oracle call.
            recursion_limit: Overrides the file's ``recursion_limit:``.

        Returns:
            The compiled Rite.

        Raises:
            RitualFileError: For a problem found while resolving or compiling, or an
                audit/trace path that cannot be written, as ``path:line:column``.
            RitualInputError: If an oracle override cannot be built.
        """
        from sanctum.ritualfile.compiler import compile_ritual

        spec, oracles = self._with_overrides()
        rite = compile_ritual(
            spec,
            codex=codex,
            wards=list(wards),
            oracles=oracles or None,
            secrets=self.secrets | secrets,
            cassette=cassette,
            recursion_limit=recursion_limit,
        )
        self._check_audit_paths()
        return rite

    def _with_overrides(self) -> tuple[RitualSpec, dict[str, Oracle]]:
        """The model to compile and the Oracles built for the overrides.

        A scripted entry replaces the file's entry in (a copy of) the model, so the
        compiler answers each sigil from its own list; the others are built here, so a
        failure names the ``--oracle`` that caused it.

        Raises:
            RitualInputError: If an override cannot be built.
        """
        from pydantic import BaseModel

        from sanctum.ritualfile.models import ScriptedOracleSpec
        from sanctum.ritualfile.resolve import ResolveError, build_oracle

        built: dict[str, Oracle] = {}
        entries = dict(self.spec.oracles)
        for name, entry in self.overrides.items():
            if isinstance(entry, ScriptedOracleSpec):
                entries[name] = entry
                continue
            if not isinstance(entry, BaseModel):
                built[name] = entry  # an Oracle object given as it is
                continue
            try:
                built[name] = build_oracle(entry, self.path.resolve().parent)
            except (ResolveError, ImportError) as exc:
                raise RitualInputError(
                    f"--oracle {name}={getattr(entry, 'provider', '?')}:"
                    f"{getattr(entry, 'model', '?')}: {exc}",
                    name=name,
                    source="--oracle",
                ) from exc
        if entries == dict(self.spec.oracles):
            return self.spec, built
        spec = self.spec.model_copy(update={"oracles": entries})
        spec._source = self.spec._source
        return spec, built

    def _check_audit_paths(self) -> None:
        """Refuse an ``audit:`` or ``trace:`` ward whose file can never be written (or
        would replace a file that is not a trace).

        Raises:
            RitualFileError: One ``path:line:column`` problem per such ward.
        """
        from sanctum.tracing import TraceRecorder
        from sanctum.wards.audit import AuditWard

        problems: list[FileProblem] = []
        for index, entry in enumerate(self.spec.wards):
            for kind, make in (("audit", AuditWard), ("trace", TraceRecorder)):
                options = getattr(entry, kind, None)
                if options is None:
                    continue
                try:
                    make(Path(options.path)).check()  # relative to the working directory
                except OSError as exc:
                    line, column = self.position(("wards", index, kind, "path"))
                    message = f"wards: {exc.strerror or exc}"
                    problems.append(FileProblem(str(self.path), line, column, message))
        if problems:
            raise RitualFileError(problems)


def load(path: str | Path, *, env: Mapping[str, str] | None = None) -> RitualFile:
    """Read, parse, hash and check a ritual file once (and its circle files).

    Imports no user code.

    Args:
        path: The ritual file.
        env: Environment for ``${VAR}`` (default ``os.environ``).

    Returns:
        The RitualFile.

    Raises:
        RitualInputError: If ``path`` is empty (``Path("")`` would be the working folder).
        RitualFileError: For a missing, unreadable or special file (a named pipe, a
            device), or any problem in it, each as ``path:line:column: message``.
    """
    from sanctum.ritualfile.compiler import load_ritual

    if not str(path).strip():
        raise RitualInputError("no ritual file given: the path is empty", source="ritual")
    special = binding.special_file_kind(path)
    if special is not None:  # reading a named pipe or a device would never finish
        message = f"cannot read the ritual file: it is {special}, not a regular file"
        raise RitualFileError([FileProblem(str(path), 1, 1, message)])
    return RitualFile.from_spec(load_ritual(Path(path), env=env))


def _known_oracle(spec: RitualSpec, name: str) -> Any:
    """The file's oracle entry ``name``.

    Raises:
        RitualInputError: If the file declares no such oracle (with a did-you-mean).
    """
    base = spec.oracles.get(name)
    if base is None:
        close = difflib.get_close_matches(name, list(spec.oracles), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = ", ".join(sorted(spec.oracles)) or "none"
        raise RitualInputError(
            f"--oracle {name}: the ritual declares no oracle {name!r}{hint} (its oracles: {known})",
            name=name,
            source="--oracle",
        )
    return base


def _below(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root`` as a posix path, or None when it lies outside."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _file_digest(path: Path) -> str | None:
    """``"sha256:"`` plus the hex digest of the file's bytes, or None if unreadable."""
    import hashlib

    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _override_entry(spec: RitualSpec, name: str, wanted: OracleOverride) -> Any:
    """The validated oracle entry ``wanted`` makes of the file's entry ``name``.

    Raises:
        RitualInputError: See :meth:`RitualFile.with_oracles`.
    """
    from pydantic import ValidationError

    from sanctum.ritualfile import models

    classes: dict[str, Any] = {
        "ollama": models.OllamaOracleSpec,
        "openai": models.OpenAIOracleSpec,
        "llamacpp": models.LlamaCppOracleSpec,
        "scripted": models.ScriptedOracleSpec,
    }
    base = spec.oracles.get(name)
    if base is None:
        close = difflib.get_close_matches(name, list(spec.oracles), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = ", ".join(sorted(spec.oracles)) or "none"
        raise RitualInputError(
            f"--oracle {name}: the ritual declares no oracle {name!r}{hint} (its oracles: {known})",
            name=name,
            source="--oracle",
        )
    target = classes.get(wanted.provider)
    if target is None:
        raise RitualInputError(
            f"--oracle {name}: unknown provider {wanted.provider!r}; choose from "
            f"{', '.join(PROVIDERS)}",
            name=name,
            source="--oracle",
        )
    if wanted.provider == "scripted" and wanted.responses is None and base.provider != "scripted":
        raise RitualInputError(
            f"--oracle {name}={wanted}: a scripted oracle answers from a script, and the "
            f"file's oracle {name!r} ({base.provider}) has none; to answer offline, replay a "
            "recording "
            "(--replay CASSETTE) or write a test file (`sanctum test`)",
            name=name,
            source="--oracle",
        )
    data: dict[str, Any] = {"provider": wanted.provider, "model": wanted.model}
    kept = base.model_dump(exclude_unset=True)
    if base.provider == wanted.provider:
        data = {**kept, **data}
    else:
        data.update({k: kept[k] for k in _KEPT_OPTIONS if k in kept and k in target.model_fields})
    if wanted.provider == "llamacpp":
        # The override names a model file: it replaces a packaged model (`package:`),
        # and a relative path is the caller's (the working directory), not the file's.
        data.pop("package", None)
        data["model"] = str(Path(wanted.model).expanduser().absolute())
    if wanted.base_url:
        data["base_url"] = wanted.base_url
    if wanted.responses is not None:
        data["responses"] = wanted.responses
    try:
        return target.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'value'}: "
            f"{err['msg'].removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        address = any(err["loc"][:1] == ("base_url",) for err in exc.errors())
        raise RitualInputError(
            f"--oracle {name}={wanted}: {problems}{_address_hint(name, wanted) if address else ''}",
            name=name,
            source="--oracle",
        ) from None


_DEFAULT_PORTS = {"ollama": "http://127.0.0.1:11434", "openai": "http://127.0.0.1:8080/v1"}
"""An example address per provider, for the hint of a missing or bad ``base_url``."""


def _address_hint(name: str, wanted: OracleOverride) -> str:
    """How to give ``wanted``'s provider its address, in that provider's own terms."""
    example = _DEFAULT_PORTS.get(wanted.provider, "http://127.0.0.1:8080")
    needs = "needs its address" if wanted.base_url is None else "takes an address"
    return (
        f" (an {wanted.provider} oracle {needs}: "
        f"--oracle {name}={wanted.provider}:{wanted.model}@{example})"
    )


def _not_an_override(name: str, wanted: object) -> RitualInputError:
    """The refusal of an override that is neither an OracleOverride nor an Oracle."""
    example = (
        f"OracleOverride({wanted.split(':', 1)[0]!r}, {wanted.split(':', 1)[1]!r})"
        if isinstance(wanted, str) and ":" in wanted
        else "OracleOverride('ollama', 'qwen2.5:0.5b')"
    )
    return RitualInputError(
        f"oracle {name!r}: an override must be an OracleOverride or an Oracle object, not "
        f"{type(wanted).__name__} {_shown(wanted)}; build one with "
        f"sanctum.api.{example} (provider, model[, base_url]), or pass an Oracle object such as "
        "sanctum.oracle.ScriptedOracle([...])",
        name=name,
        source="oracles",
    )


def _shown(value: object) -> str:
    """``repr(value)``, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
