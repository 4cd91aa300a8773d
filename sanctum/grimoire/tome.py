"""The bound collection of Spells an Entity may cast.

Tome — a tool registry. An ordered registry of Spells keyed by name: registration
order is preserved and is the order Oracles (LLM adapters) see. Build it from Spell
instances, register incrementally, or load an AgentGrimoire-style folder tree with
:meth:`Tome.load_from_directory`.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from sanctum.errors import SpellExecutionError, SpellManifestError
from sanctum.grimoire.spell import ACCESS_LEVELS, Spell, spell
from sanctum.ritual.mandate import Mandate

_inscribe = spell  # ``register``'s parameter is named ``spell``, as the specification has it

__all__ = ["MANIFEST_NAME", "Tome"]

MANIFEST_NAME = "spell.json"
"""The manifest file every spell folder holds."""

_MAX_MANIFEST_BYTES = 1024 * 1024
_MAX_DEPTH = 4


class Tome:
    """The bound collection of Spells an Entity may cast.

    Tome — a tool registry. Ordered registry keyed by Spell name (registration order
    is preserved and is the order Oracles see).

    Args:
        spells: Spells (or plain functions, inscribed with ``@spell``) to register.

    Raises:
        ValueError: If two Spells share a name.
    """

    __slots__ = ("_spells",)

    def __init__(self, spells: Iterable[Spell | Callable[..., Any]] = ()) -> None:
        self._spells: dict[str, Spell] = {}
        for item in spells:
            self.register(item)

    def __repr__(self) -> str:
        return f"Tome({list(self._spells)!r})"

    def __len__(self) -> int:
        return len(self._spells)

    def __iter__(self) -> Iterator[Spell]:
        return iter(list(self._spells.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._spells

    @property
    def names(self) -> list[str]:
        """The Spell names, in registration order."""
        return list(self._spells)

    def register(self, spell: Spell | Callable[..., Any]) -> Tome:
        """Inscribe a Spell in the Tome; returns self for chaining.

        Args:
            spell: A Spell, or a plain function (inscribed with ``@spell``).

        Returns:
            This Tome.

        Raises:
            ValueError: If a Spell with the same name is already inscribed.
            TypeError: If ``spell`` is neither a Spell nor callable.
        """
        inscribed = spell if isinstance(spell, Spell) else _inscribe(spell)
        if inscribed.name in self._spells:
            raise ValueError(
                f"a spell named {inscribed.name!r} is already inscribed in this Tome; "
                "give one of them another name (@spell(name=...))"
            )
        self._spells[inscribed.name] = inscribed
        return self

    def get(self, name: str) -> Spell:
        """Return the Spell inscribed under ``name``.

        Raises:
            SpellExecutionError: If no such Spell exists — so the ReAct loop can surface
                an unknown-Spell request to the Oracle as an error message instead of
                crashing. The message lists the available Spells.
        """
        try:
            return self._spells[name]
        except (KeyError, TypeError):
            pass
        available = ", ".join(self._spells) or "none"
        close = difflib.get_close_matches(str(name), list(self._spells), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise SpellExecutionError(
            f"no spell named {name!r} in this Tome (available: {available}).{hint}",
            spell=str(name),
        ) from None

    def visible_to(self, mandate: Mandate | None) -> Tome:
        """The Spells ``mandate`` may use, as a new Tome in the same order.

        A Spell with ``roles`` is visible only to a Mandate holding one of them (no
        Mandate holds none); a Spell without is visible to everyone.

        Args:
            mandate: Who the run acts for (None: nobody in particular).

        Returns:
            A filtered Tome (this one when every Spell is visible).
        """
        shown = [s for s in self._spells.values() if s.allows(mandate)]
        return self if len(shown) == len(self._spells) else Tome(shown)

    def only(self, names: Iterable[str]) -> Tome:
        """A Tome of just the named Spells (an agent's allowlist), in this Tome's order.

        Args:
            names: Spell names, each inscribed here.

        Returns:
            A new Tome.

        Raises:
            ValueError: If a name is not inscribed in this Tome.
        """
        wanted = list(names)
        missing = [n for n in wanted if n not in self._spells]
        if missing:
            raise ValueError(
                f"no spell named {missing[0]!r} in this Tome (available: "
                f"{', '.join(self._spells) or 'none'})"
            )
        return Tome(s for s in self._spells.values() if s.name in wanted)

    def schemas(self) -> list[dict[str, Any]]:
        """The JSON schemas of every Spell, in registration order.

        Returns:
            One ``{"name", "description", "parameters"}`` dict per Spell.
        """
        return [s.schema() for s in self._spells.values()]

    @staticmethod
    def manifest_names(path: str | os.PathLike[str]) -> dict[str, Path]:
        """Read the spell names a folder tree declares, without importing anything.

        Walks the tree exactly as :meth:`load_from_directory` does and checks each
        ``spell.json`` the same way (a JSON object with non-empty string ``name`` and
        ``entrypoint``, no name twice), but imports no entrypoint: a checker that must
        not run code can still say which manifest is broken and why, instead of
        reporting its spell as missing.

        Args:
            path: The root folder.

        Returns:
            ``{spell name: its spell.json path}``, in load order.

        Raises:
            ValueError: A :class:`SpellManifestError` whose message starts with the
                manifest's path (``path`` names it) when the root is not a folder, a
                manifest is empty, not JSON, not an object, misses a required field,
                or repeats another's name.
        """
        root = _spell_root(path)
        names: dict[str, Path] = {}
        for manifest in _find_manifests(root):
            name = _required_fields(manifest, _read_manifest(manifest))[0]
            if name in names:
                raise _fail(
                    manifest,
                    f"a spell named {name!r} is already declared in {names[name]}; "
                    "rename one of them",
                )
            names[name] = manifest
        return names

    @staticmethod
    def manifest_labels(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
        """Read each spell's access label and roles from its manifest, importing nothing.

        Args:
            path: The root folder.

        Returns:
            ``{spell name: {"access": str | None, "roles": list[str] | None}}``.

        Raises:
            ValueError: A :class:`SpellManifestError`, as :meth:`manifest_names`, also
                when ``access``, ``roles`` or ``repeatable`` has the wrong shape.
        """
        labels: dict[str, dict[str, Any]] = {}
        for name, manifest in Tome.manifest_names(path).items():
            access, roles, _ = _labels(manifest, _read_manifest(manifest))
            labels[name] = {"access": access, "roles": None if roles is None else sorted(roles)}
        return labels

    @classmethod
    def load_from_directory(cls, path: str | os.PathLike[str]) -> Tome:
        """Load Spells from an AgentGrimoire-style directory tree.

        One folder per domain, one subfolder per Spell, each holding a ``spell.json``
        manifest next to its implementation::

            <root>/
              text/
                word_count/
                  spell.json
                  spell.py

        Manifest fields: ``name`` (required), ``entrypoint`` (required,
        ``"<file>.py:<function>"`` relative to the Spell's folder; a plain function or
        an ``@spell``-decorated Spell), ``description`` (optional, falls back to the
        entrypoint's docstring first line) and ``parameters`` (optional JSON Schema,
        falls back to the schema inferred from type hints), ``access`` (optional,
        ``"read"``, ``"propose"`` or ``"write"``; unlabeled counts as write), ``roles``
        (optional list of role names) and ``repeatable`` (optional boolean). Folders
        are read in sorted order, at most four levels deep; symlinked folders are not followed. The
        entrypoint must stay inside its Spell's folder: ``..``, absolute paths and
        symlinks pointing out are refused. Loading imports (runs) the entrypoint
        files, so only load folders you trust.

        Args:
            path: The root folder.

        Returns:
            A new Tome holding every Spell found.

        Raises:
            ValueError: A :class:`SpellManifestError` (``path`` names the manifest or
                folder) if the root is not a folder, a manifest is not a JSON object or
                misses required fields, its entrypoint cannot be resolved or leaves the
                Spell's folder, or two manifests declare the same name.
        """
        root = _spell_root(path)
        tome = cls()
        for manifest in _find_manifests(root):
            loaded = _load_manifest(manifest)
            if loaded.name in tome:
                raise SpellManifestError(
                    f"{manifest}: a spell named {loaded.name!r} is already loaded from "
                    "another folder; rename one of them",
                    path=str(manifest),
                )
            tome.register(loaded)
        return tome


def _spell_root(path: str | os.PathLike[str]) -> Path:
    """``path`` as the root folder of a spell tree.

    Raises:
        SpellManifestError: If it is not a folder.
    """
    root = Path(path)
    if not root.is_dir():
        raise SpellManifestError(
            f"{root}: not a folder of spells; pass the directory holding the "
            "domain folders (each spell folder has a spell.json)",
            path=str(root),
        )
    return root


def _find_manifests(root: Path) -> list[Path]:
    """Every ``spell.json`` under ``root`` (sorted, bounded depth, symlinks not followed)."""
    found: list[Path] = []
    base_depth = len(root.parts)
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        if len(here.parts) - base_depth >= _MAX_DEPTH:
            dirs[:] = []
        if MANIFEST_NAME in files:
            found.append(here / MANIFEST_NAME)
    return sorted(found, key=lambda p: p.relative_to(root).parts)


def _fail(manifest: Path, message: str) -> SpellManifestError:
    return SpellManifestError(f"{manifest}: {message}", path=str(manifest))


def _read_manifest(manifest: Path) -> dict[str, Any]:
    folder = manifest.parent
    if manifest.is_symlink() and not _inside(manifest.resolve(), folder.resolve()):
        raise _fail(manifest, "the manifest is a symlink pointing outside its spell folder")
    try:
        with manifest.open("rb") as handle:
            data = handle.read(_MAX_MANIFEST_BYTES + 1)
    except OSError as error:
        raise _fail(manifest, f"cannot be read ({error.strerror or error})") from error
    if len(data) > _MAX_MANIFEST_BYTES:
        raise _fail(manifest, "is larger than 1 MiB; a manifest is a small JSON object")
    if not data.strip():
        raise _fail(
            manifest,
            "is not valid JSON: the file is empty; a manifest is a JSON object such as "
            '{"name": "word_count", "entrypoint": "spell.py:word_count"}',
        )
    try:
        content = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise _fail(manifest, "is not UTF-8 text; save it as UTF-8 JSON") from error
    except json.JSONDecodeError as error:
        raise _fail(
            manifest,
            f"is not valid JSON ({error.msg} at line {error.lineno} column {error.colno})",
        ) from error
    except RecursionError as error:
        raise _fail(manifest, "is nested too deeply to be a manifest") from error
    if not isinstance(content, dict):
        raise _fail(manifest, f"must hold a JSON object, found {type(content).__name__}")
    return content


def _inside(target: Path, folder: Path) -> bool:
    return target == folder or target.is_relative_to(folder)


def _resolve_entrypoint(manifest: Path, entrypoint: str) -> tuple[Path, str]:
    """``"<file>.py:<function>"`` -> (file confined to the spell folder, function name)."""
    file_part, colon, function = entrypoint.rpartition(":")
    if not colon or not file_part or not function:
        raise _fail(
            manifest,
            f"entrypoint {entrypoint!r} must look like '<file>.py:<function>', "
            "for example 'spell.py:word_count'",
        )
    if not function.isidentifier():
        raise _fail(manifest, f"entrypoint function {function!r} is not a Python name")
    if not file_part.endswith(".py"):
        raise _fail(manifest, f"entrypoint file {file_part!r} must be a .py file")
    posix, windows = PurePosixPath(file_part), PureWindowsPath(file_part)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or windows.root:
        raise _fail(
            manifest,
            f"entrypoint {entrypoint!r} is an absolute path; name a file inside the "
            "spell folder instead",
        )
    if ".." in posix.parts or ".." in windows.parts:
        raise _fail(
            manifest,
            f"entrypoint {entrypoint!r} leaves the spell folder ('..'); keep the "
            "implementation next to spell.json",
        )
    folder = manifest.parent.resolve()
    candidate = manifest.parent / posix
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise _fail(manifest, f"entrypoint file {file_part!r} does not exist") from error
    if not _inside(resolved, folder):
        raise _fail(
            manifest,
            f"entrypoint {entrypoint!r} resolves outside the spell folder (a symlink "
            "pointing out?); keep the implementation inside the folder",
        )
    if not resolved.is_file():
        raise _fail(manifest, f"entrypoint {file_part!r} is not a file")
    return resolved, function


def _import_entrypoint(manifest: Path, file: Path, function: str) -> Any:
    digest = hashlib.sha256(str(file).encode()).hexdigest()[:16]
    module_name = f"sanctum_spells_{digest}"
    module_spec = importlib.util.spec_from_file_location(module_name, file)
    if module_spec is None or module_spec.loader is None:
        raise _fail(manifest, f"cannot import {file.name}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException as error:
        sys.modules.pop(module_name, None)
        if isinstance(error, KeyboardInterrupt):
            raise
        if isinstance(error, SystemExit):
            raise _fail(
                manifest, f"importing {file.name} called sys.exit({error.code!r})"
            ) from None
        raise _fail(
            manifest, f"importing {file.name} raised {type(error).__name__}: {error}"
        ) from error
    if not hasattr(module, function):
        raise _fail(manifest, f"{file.name} defines no {function!r}")
    return getattr(module, function)


def _required_fields(manifest: Path, content: dict[str, Any]) -> tuple[str, str]:
    """The manifest's ``name`` and ``entrypoint``, stripped, checked to be non-empty strings."""
    for key in ("name", "entrypoint"):
        if key not in content:
            raise _fail(manifest, f"missing required field {key!r}")
        if not isinstance(content[key], str) or not content[key].strip():
            raise _fail(manifest, f"field {key!r} must be a non-empty string")
    return content["name"].strip(), content["entrypoint"].strip()


def _load_manifest(manifest: Path) -> Spell:
    content = _read_manifest(manifest)
    _required_fields(manifest, content)
    description = content.get("description")
    if description is not None and not isinstance(description, str):
        raise _fail(manifest, "field 'description' must be a string")
    parameters = content.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise _fail(manifest, "field 'parameters' must be a JSON Schema object")
    file, function = _resolve_entrypoint(manifest, content["entrypoint"].strip())
    target = _import_entrypoint(manifest, file, function)
    if not isinstance(target, Spell) and not callable(target):
        raise _fail(manifest, f"entrypoint {function!r} is not callable")
    access, roles, repeatable = _labels(manifest, content)
    record = content.get("record", False)
    if not isinstance(record, bool):
        raise _fail(manifest, "field 'record' must be true or false")
    base = target if isinstance(target, Spell) else spell(target, name=content["name"])
    return Spell(
        name=content["name"].strip(),
        description=base.description if description is None else description,
        parameters=base.parameters if parameters is None else parameters,
        fn=base.fn,
        access=base.access if access is None else access,
        roles=base.roles if roles is None else roles,
        repeatable=base.repeatable or repeatable,
        record=base.record or record,
    )


def _labels(
    manifest: Path, content: dict[str, Any]
) -> tuple[str | None, frozenset[str] | None, bool]:
    """The manifest's ``access``, ``roles`` and ``repeatable``, checked."""
    access = content.get("access")
    if access is not None and access not in ACCESS_LEVELS:
        raise _fail(
            manifest, f"field 'access' must be one of {', '.join(ACCESS_LEVELS)}, not {access!r}"
        )
    roles = content.get("roles")
    if roles is not None and (
        not isinstance(roles, list) or not all(isinstance(r, str) and r for r in roles)
    ):
        raise _fail(manifest, "field 'roles' must be a list of role names (strings)")
    repeatable = content.get("repeatable", False)
    if not isinstance(repeatable, bool):
        raise _fail(manifest, "field 'repeatable' must be true or false")
    return access, None if roles is None else frozenset(roles), repeatable
