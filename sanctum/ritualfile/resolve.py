"""Turning names in a ritual file into living things: paths, callables, oracles, wards.

Everything here touches the world outside the file: the project folder that circle and
tome paths must stay inside, ``module:function`` imports (only when the caller asked to
resolve user code), Oracle adapters, Wards and the Codex named by a URL.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sanctum.codex.base import Codex
from sanctum.codex.urls import parse_codex_url
from sanctum.errors import SealError
from sanctum.oracle.base import Oracle, OracleResponse, SpellCall
from sanctum.ritualfile.models import (
    AuditWardSpec,
    LlamaCppOracleSpec,
    OllamaOracleSpec,
    OpenAIOracleSpec,
    RedactWardSpec,
    ScriptedOracleSpec,
    ScriptedResponse,
    TraceWardSpec,
    UsageWardSpec,
    WardSpec,
)
from sanctum.wards.base import Ward
from sanctum.wards.redact import mask_secrets

__all__ = [
    "PROJECT_MARKERS",
    "ResolveError",
    "build_oracle",
    "build_ward",
    "confine",
    "import_callable",
    "limited_oracle",
    "missing_module",
    "open_codex_url",
    "project_root",
    "scripted_oracle",
]

PROJECT_MARKERS = (".git", "pyproject.toml", ".sanctum", "sanctum.toml")
"""Files or folders whose presence marks a project folder (see :func:`project_root`)."""

_STRONG_MARKERS = (".git", "pyproject.toml", "sanctum.toml")
_CODEX_MARKER = ".sanctum"

_REFERENCE = re.compile(
    r"\A[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*\Z"
)


class ResolveError(Exception):
    """A name in the ritual file could not be resolved (reported at its position)."""


def project_root(ritual_file: Path, declared: str | None = None) -> Path:
    """The project folder a ritual file's paths must stay inside.

    A codex folder appearing never moves the root: ``.git``, ``pyproject.toml`` and
    ``sanctum.toml`` are looked for first, and a ``.sanctum`` folder (which any run
    may create, ``rituals/.sanctum/`` included) counts only when none of them is found
    — and then the outermost one, so that a new one further in changes nothing.

    Args:
        ritual_file: The ritual file.
        declared: The file's ``project:`` entry, relative to the file's folder.

    Returns:
        The declared folder; else the nearest folder at or above the file's holding
        ``.git``, ``pyproject.toml`` or ``sanctum.toml``; else the outermost one holding
        ``.sanctum``; else the file's folder. Always resolved (symlinks followed).
    """
    folder = ritual_file.resolve().parent
    if declared is not None:
        return (folder / declared).resolve()
    ancestors = (folder, *folder.parents)
    for candidate in ancestors:
        if any((candidate / marker).exists() for marker in _STRONG_MARKERS):
            return candidate
    for candidate in reversed(ancestors):
        if (candidate / _CODEX_MARKER).is_dir():
            return candidate
    return folder


def confine(base: Path, relative: str, root: Path, what: str) -> Path:
    """Resolve ``relative`` against ``base`` and refuse it outside ``root``.

    Args:
        base: The folder of the ritual file.
        relative: The path as written.
        root: The project folder.
        what: What the path is (``"circle file"``), for messages.

    Returns:
        The resolved path (symlinks followed).

    Raises:
        ResolveError: When the path leaves the project folder.
    """
    target = (base / relative).resolve()
    if target != root and not target.is_relative_to(root):
        raise ResolveError(
            f"{what} {relative!r} resolves to {target}, outside the project folder {root}; "
            "move it inside, or declare a wider folder with `project:`"
        )
    return target


def is_reference(text: str) -> bool:
    """Whether ``text`` has the ``module:function`` shape."""
    return _REFERENCE.match(text) is not None


@contextlib.contextmanager
def _sys_path(folder: Path) -> Iterator[None]:
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def missing_module(reference: str, folder: Path) -> str | None:
    """Why the module of ``module:function`` cannot be found, without importing it.

    Looks where :func:`import_callable` would: a module file or package beside the
    ritual file, else an importable module (``importlib.util.find_spec`` of the
    top-level name, which executes nothing). The function itself is not looked for:
    that needs the import, which ``--resolve`` does.

    Args:
        reference: ``"module:function"``.
        folder: The ritual file's folder.

    Returns:
        The problem as a sentence, or None when the module can be found.
    """
    module_name = reference.partition(":")[0]
    top = module_name.split(".")[0]
    relative = Path(*module_name.split("."))
    beside = (folder / relative.with_suffix(".py"), folder / relative / "__init__.py")
    if any(path.is_file() for path in beside) or (folder / top).is_dir():
        return None
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        found = None
    if found is not None:
        return None
    return (
        f"no module {top!r}: neither {top}.py nor a package {top}/ is beside the ritual "
        "file, and no installed module has that name; check the spelling"
    )


def module_files(reference: str, folder: Path) -> list[Path]:
    """The files of ``module:function``'s module when it lies beside the ritual file.

    Looks where :func:`import_callable` does first, without importing: the module file
    (``<folder>/<module>.py``), else every ``.py`` file of the package folder named
    by the module's top-level name (``__pycache__`` left out). An installed module
    (found on ``sys.path`` instead) has no files here: its version is the package's.

    Args:
        reference: ``"module:function"``.
        folder: The ritual file's folder.

    Returns:
        The files, sorted; empty when the module is not beside the ritual file.
    """
    module_name = reference.partition(":")[0]
    single = folder / Path(*module_name.split(".")).with_suffix(".py")
    if single.is_file():
        return [single]
    package = folder / module_name.split(".")[0]
    if not package.is_dir():
        return []
    return sorted(
        path
        for path in package.rglob("*.py")
        if path.is_file() and "__pycache__" not in path.relative_to(package).parts
    )


def import_callable(reference: str, folder: Path) -> Callable[..., Any]:
    """Import ``module:function``, looking for the module next to the ritual file first.

    A module file (``<folder>/<module>.py`` or a package folder) beside the ritual file
    is loaded under a private name derived from its path, so two rituals with a
    ``steps.py`` each never share one; ``folder`` is on ``sys.path`` only while the
    module executes. Otherwise the module is imported normally (an installed package).

    Args:
        reference: ``"module:function"`` (dotted module names allowed).
        folder: The ritual file's folder.

    Returns:
        The callable.

    Raises:
        ResolveError: When the module or the attribute is missing, fails to import, or
            is not callable.
    """
    if not is_reference(reference):
        raise ResolveError(f"{reference!r} is not of the form 'module:function'")
    module_name, _, attribute = reference.partition(":")
    relative = Path(*module_name.split("."))
    candidates = [folder / relative.with_suffix(".py"), folder / relative / "__init__.py"]
    local = next((c for c in candidates if c.is_file()), None)
    try:
        with _sys_path(folder):
            if local is not None:
                digest = hashlib.sha256(str(local.resolve()).encode()).hexdigest()[:12]
                private = f"sanctum_ritual_{digest}_{module_name.replace('.', '_')}"
                module = sys.modules.get(private)
                if module is None:
                    spec = importlib.util.spec_from_file_location(
                        private,
                        local,
                        submodule_search_locations=[str(local.parent)]
                        if local.name == "__init__.py"
                        else None,
                    )
                    if spec is None or spec.loader is None:
                        raise ResolveError(f"cannot load {local}")
                    module = importlib.util.module_from_spec(spec)
                    sys.modules[private] = module
                    try:
                        spec.loader.exec_module(module)
                    except BaseException:
                        sys.modules.pop(private, None)
                        raise
            else:
                module = importlib.import_module(module_name)
    except ResolveError:
        raise
    except ModuleNotFoundError as exc:
        raise ResolveError(
            f"module {module_name!r} not found next to the ritual file ({folder}) or "
            f"installed ({exc})"
        ) from exc
    except Exception as exc:
        raise ResolveError(
            f"importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:
        # A module that exits while being imported must not end the caller's process.
        raise ResolveError(
            f"module {module_name!r} called sys.exit({'' if exc.code is None else repr(exc.code)}) "
            'while being imported; move that call under `if __name__ == "__main__":`'
        ) from None
    except BaseException as exc:  # GeneratorExit, CancelledError, a custom BaseException
        raise ResolveError(
            f"importing {module_name!r} raised {type(exc).__name__}"
            f"{': ' + str(exc) if str(exc) else ''} (a BaseException, not an Exception); "
            "a module must import without raising"
        ) from None
    target = getattr(module, attribute, None)
    if target is None:
        names = [n for n in vars(module) if not n.startswith("_")]
        from sanctum.ritualfile.diagnostics import did_you_mean

        raise ResolveError(
            f"module {module_name!r} has no {attribute!r}{did_you_mean(attribute, names)}"
        )
    if not callable(target):
        raise ResolveError(f"{reference!r} is a {type(target).__name__}, not a callable")
    return target  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- oracles


def _response(line: str | ScriptedResponse) -> OracleResponse | str:
    if isinstance(line, str):
        return line
    return OracleResponse(
        text=line.text,
        spell_calls=[
            SpellCall(c.spell, dict(c.arguments), c.call_id or f"call_{i}")
            for i, c in enumerate(line.spell_calls)
        ],
        usage=dict(line.usage),
    )


def scripted_oracle(spec: ScriptedOracleSpec, sigil: str | None = None) -> Oracle:
    """A ScriptedOracle reading the file's responses (one sigil's list, when keyed).

    Args:
        spec: The oracle's entry.
        sigil: The consulting sigil, for per-sigil response mappings.

    Returns:
        A fresh ScriptedOracle.
    """
    from sanctum.oracle.scripted import ScriptedOracle

    lines = spec.responses
    if isinstance(lines, dict):
        lines = lines.get(sigil or "", [])
    return ScriptedOracle([_response(line) for line in lines], arcana=spec.model)


def build_oracle(spec: Any, folder: Path) -> Oracle:
    """Build the Oracle adapter an ``oracles:`` entry describes.

    HTTP and llama.cpp adapters are imported lazily (their packages are optional).

    Args:
        spec: The oracle's entry (one of the provider models).
        folder: The ritual file's folder (for model paths).

    Returns:
        The Oracle.

    Raises:
        ResolveError: When the adapter cannot be built (missing extra, missing file).
    """
    if isinstance(spec, ScriptedOracleSpec):
        return scripted_oracle(spec)
    if isinstance(spec, LlamaCppOracleSpec):
        return _llamacpp(spec, folder)
    timeout: dict[str, Any] = {} if spec.timeout is None else {"timeout": spec.timeout}
    if isinstance(spec, OllamaOracleSpec):
        from sanctum.oracle.ollama import OllamaOracle

        return OllamaOracle(  # an overflow must be an error, never a silent cut
            spec.model,
            base_url=spec.base_url,
            options=spec.options or None,
            truncate=False,
            **timeout,
        )
    if isinstance(spec, OpenAIOracleSpec):
        from sanctum.oracle.openai_compat import OpenAICompatibleOracle

        return OpenAICompatibleOracle(
            spec.model,
            base_url=spec.base_url,
            api_key=spec.api_key,
            extra_body=spec.options or None,
            **timeout,
        )
    raise ResolveError(f"unknown oracle provider {getattr(spec, 'provider', spec)!r}")


def limited_oracle(oracle: Oracle, spec: Any) -> Oracle:
    """``oracle`` bounded as its entry's ``max_concurrency`` keys say (itself without).

    See :mod:`sanctum.oracle.limits`: the bound is per endpoint (provider, base URL,
    model), shared with every other Oracle of that endpoint in the process.
    """
    local = getattr(spec, "max_concurrency", None)
    total = getattr(spec, "max_concurrency_global", None)
    if local is None and total is None:
        return oracle
    from sanctum.oracle.limits import limited

    return limited(oracle, max_concurrency=local, max_concurrency_global=total)


def _llamacpp(spec: LlamaCppOracleSpec, folder: Path) -> Oracle:
    if (spec.model is None) == (spec.package is None):
        raise ResolveError("give exactly one of `model` (a .gguf path) and `package`")
    try:
        module = importlib.import_module("sanctum.oracle.llamacpp")
        target: dict[str, Any] = (
            {"package": spec.package}
            if spec.package is not None
            else {"model_path": str(folder / str(spec.model))}
        )
        oracle: Oracle = module.LlamaCppOracle(**target, **dict(spec.options))
    except (ImportError, FileNotFoundError, ValueError, TypeError) as exc:
        raise ResolveError(str(exc)) from exc
    return oracle


# --------------------------------------------------------------------------- wards, codex


def build_ward(spec: WardSpec, redact: Callable[[Any], Any] | None = None) -> Ward:
    """Build the Ward a ``wards:`` entry describes.

    Output paths (audit, trace) are relative to the working directory.

    Args:
        spec: The ward's entry.
        redact: Secret masking handed to a TraceRecorder.

    Returns:
        The Ward.
    """
    if isinstance(spec, RedactWardSpec):
        from sanctum.wards.redact import RedactWard

        return RedactWard(spec.redact.patterns, mask=spec.redact.mask)
    if isinstance(spec, AuditWardSpec):
        from sanctum.wards.audit import AuditWard

        return AuditWard(spec.audit.path)
    if isinstance(spec, UsageWardSpec):
        from sanctum.wards.usage import UsageWard

        return UsageWard()
    assert isinstance(spec, TraceWardSpec)
    from sanctum.tracing import TraceRecorder

    return TraceRecorder(spec.trace.path, redact=redact)


def open_codex_url(url: str) -> Codex:
    """Open the Codex — the Seal store — a ritual file's ``codex:`` URL names.

    The forms are those of :data:`sanctum.codex.urls.CODEX_FORMS` (the command line's
    ``--codex`` takes the same): ``memory:`` → MemoryCodex; ``sqlite:///relative.db``,
    ``sqlite:////absolute.db`` or a path ending in ``.db``/``.sqlite``/``.sqlite3`` →
    SqliteCodex (relative to the working directory, folder created);
    ``postgresql://…`` → PostgresCodex (the ``postgres`` extra).

    Args:
        url: The URL.

    Returns:
        The Codex.

    Raises:
        ResolveError: For a URL of none of those forms.
    """
    try:
        address = parse_codex_url(url)
    except SealError as exc:
        raise ResolveError(str(exc)) from None
    if address.kind == "memory":
        from sanctum.codex.memory import MemoryCodex

        return MemoryCodex()
    if address.kind == "postgres":
        from sanctum.codex.postgres import PostgresCodex

        return PostgresCodex(address.url)
    from sanctum.codex.sqlite import SqliteCodex

    assert address.path is not None
    address.path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteCodex(address.path)


def secret_masker(secrets: Mapping[str, None] | list[str]) -> Callable[[Any], Any]:
    """A function masking every secret inside strings, dicts, lists and tuples."""
    values = [s for s in secrets if s]

    def mask(value: Any) -> Any:
        if isinstance(value, str):
            return mask_secrets(value, values)
        if isinstance(value, dict):
            return {mask(k): mask(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(mask(v) for v in value)
        return value

    return mask
