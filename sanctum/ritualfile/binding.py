"""Binding values to a ritual file: inputs, resumption updates and input files.

An :class:`OracleOverride` names another provider or model for one of a file's
oracles. A run's values come as Python values (from a program) or as :class:`InputText` (typed on
a command line, not read yet); :func:`bind_inputs` and :func:`bind_updates` read and check
them against the ritual's declarations: declared names only (with a did-you-mean), the
declared JSON type (one predicate, :func:`sanctum.jsontypes.has_json_type`), enums,
defaults filled in, and nothing a Seal cannot store (NaN, ±Infinity, nesting deeper than
:data:`MAX_INPUT_DEPTH`, objects that are no JSON value, keys that are no strings,
integers too long to write), with the path inside the value. :func:`load_input_file`
reads a JSON or YAML file of values.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sanctum.errors import RitualInputError
from sanctum.jsontypes import has_json_type, json_type_of

if TYPE_CHECKING:
    from sanctum.ritualfile.models import RitualSpec

__all__ = [
    "MAX_INPUT_DEPTH",
    "MAX_INPUT_FILE_BYTES",
    "PROVIDERS",
    "InputText",
    "OracleOverride",
    "bind_inputs",
    "bind_updates",
    "load_input_file",
    "special_file_kind",
]


PROVIDERS = ("ollama", "openai", "llamacpp", "scripted")
"""The oracle providers an :class:`OracleOverride` may name."""


@dataclass(frozen=True, slots=True)
class OracleOverride:
    """Another model (and provider) for one of a ritual file's oracles.

    Attributes:
        provider: One of :data:`PROVIDERS`.
        model: The model name or tag, e.g. ``"qwen2.5:0.5b"``.
        base_url: The server's address (an ``http(s)://`` URL); None keeps the file's
            address when the provider stays the same.
        responses: For ``provider="scripted"``: the answers, a list (or, by sigil name,
            ``dict[str, list]``) of texts or ``{"text", "spell_calls"}`` mappings.
    """

    provider: str
    model: str
    base_url: str | None = None
    responses: Any = None

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


class InputText(str):
    """A value typed on the command line, not read yet.

    :func:`bind_inputs` and :func:`bind_updates` decide how to read it once the
    ritual is known: kept as the text itself when the input (or conduit) is declared
    ``type: string``, read as JSON otherwise (and kept as text when it is not JSON).
    """

    __slots__ = ()


MAX_INPUT_DEPTH = 64
"""How deeply an input (or update) value may nest lists and mappings.

The same limit the ritual format's YAML loader applies (``sanctum.ritualfile.loader.MAX_DEPTH``),
so a JSON input file, a YAML input file and a ``--input`` value are refused alike.
"""


MAX_INPUT_FILE_BYTES = 16 * 1024 * 1024
"""Largest input (or update) file read, in bytes (16 MiB); standard input too."""


class _NonFinite(Exception):
    """Internal: a JSON document spelled NaN, Infinity or -Infinity."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


def _too_deep(where: str, *, name: str | None, source: str) -> RitualInputError:
    return RitualInputError(
        f"{where}: nesting deeper than {MAX_INPUT_DEPTH} levels (lists and mappings inside "
        "each other); give a flatter value",
        name=name,
        source=source,
    )


def _parse_value(text: str, *, name: str, source: str) -> Any:
    """A value as JSON when it parses as JSON, else the string itself.

    Raises:
        RitualInputError: If the JSON holds a number that is not finite (NaN, ±Infinity)
            or nests deeper than :data:`MAX_INPUT_DEPTH`.
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except _NonFinite:
        value = math.nan
    except RecursionError:  # nested past the interpreter's limit: deeper than ours too
        raise _too_deep(f"{source} {name}", name=name, source=source) from None
    except ValueError:
        return text
    _require_finite(value, name=name, source=source)
    return value


def _storable_problem(value: Any) -> tuple[str, str] | None:
    """What keeps ``value`` out of a Seal, and where: ``(kind, path)`` or None.

    ``kind`` is ``"deep"``, ``"non-finite"``, or the words naming a value JSON cannot
    hold (a ``set``, an ``object``, a mapping key that is no string, an integer too long
    to write); ``path`` the place inside ``value`` (``"[0]"``, ``".a[2]"``, ``""`` for
    the value itself). Types are those of :func:`sanctum.jsontypes.json_type_of`. The walk
    is iterative, in order, and stops below :data:`MAX_INPUT_DEPTH`, so a value nested
    thousands deep (or a container that holds itself) is answered at once.
    """
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        kind = json_type_of(item)
        if kind is None:
            return f"{_shown(item)} of type {type(item).__name__} is no JSON value", path
        if kind == "number" and not math.isfinite(item):
            return "non-finite", path
        if kind == "integer" and _too_long(item):
            limit = sys.get_int_max_str_digits()
            return f"an integer of about {_digits(item)} digits (at most {limit})", path
        if kind not in ("array", "object"):
            continue
        if depth >= MAX_INPUT_DEPTH:
            return "deep", path
        if kind == "array":
            children = [(child, f"{path}[{i}]") for i, child in enumerate(item)]
        else:
            for key in item:
                if not isinstance(key, str):
                    return f"the key {_shown(key)} of type {type(key).__name__} is no string", path
            children = [(child, _key_path(path, key)) for key, child in item.items()]
        stack.extend((child, depth + 1, where) for child, where in reversed(children))
    return None


def _too_long(number: int) -> bool:
    """Whether ``str(number)`` passes the interpreter's digit limit (JSON writes it so)."""
    limit = sys.get_int_max_str_digits()
    return bool(limit) and _digits(number) > limit


def _digits(number: int) -> int:
    """Roughly how many decimal digits ``number`` has, without writing it out."""
    return int(abs(number).bit_length() * 0.30103) + 1


def _key_path(path: str, key: str) -> str:
    """``path`` followed by ``key``: ``.key`` for a plain name, ``["a key"]`` else."""
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _shown(value: Any) -> str:
    """``repr(value)``, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _require_finite(value: Any, *, name: str, source: str) -> None:
    """Refuse anything a Seal cannot store, naming the place inside the value.

    Seals store values as JSON: strings, numbers (finite, of at most the interpreter's
    digit limit), booleans, null, lists and mappings with string keys, nested at most
    :data:`MAX_INPUT_DEPTH` levels.

    Raises:
        RitualInputError: Naming the value, the path inside it and where it came from.
    """
    found = _storable_problem(value)
    if found is None:
        return
    problem, path = found
    where = f"{source} {name}{path}"
    if problem == "deep":
        raise _too_deep(f"{source} {name}", name=name, source=source)
    if problem == "non-finite":
        raise RitualInputError(
            f"{where}: NaN and Infinity are not allowed (a Seal stores values as "
            "JSON, which has no such numbers); give a finite number",
            name=name,
            source=source,
        )
    raise RitualInputError(
        f"{where}: {problem}; a Seal stores values as JSON, so give strings, numbers, "
        "true/false, null, lists and mappings with string keys",
        name=name,
        source=source,
    )


def _read_text(value: Any, type_name: Any, *, name: str, source: str) -> Any:
    """Read an :class:`InputText` for its declared type; other values pass through."""
    if not isinstance(value, InputText):
        return value
    if type_name == "string":
        return str(value)
    return _parse_value(str(value), name=name, source=source)


def load_input_file(path: str | Path, *, stdin: IO[str] | None = None) -> dict[str, Any]:
    """Read inputs from a JSON or YAML file (``"-"`` reads standard input).

    JSON is tried first; anything else is read with the ritual format's strict YAML
    loader. The document must be a mapping of names to values, with no NaN or
    Infinity in it.

    Args:
        path: The file, or ``"-"`` for ``stdin``.
        stdin: The stream ``"-"`` reads (default: the process's standard input, read
            as bytes and decoded as UTF-8).

    Returns:
        ``dict[str, Any]``, the document.

    Raises:
        RitualInputError: If the file is a named pipe or a device, larger than
            :data:`MAX_INPUT_FILE_BYTES`, not UTF-8, does not parse, is not a mapping,
            nests deeper than :data:`MAX_INPUT_DEPTH` or holds a number that is not
            finite.
        OSError: If the file cannot be read (e.g. FileNotFoundError).
    """
    source = str(path)
    label = "standard input" if source == "-" else source
    text = _read_input_text(path, stdin, label)
    try:
        data: Any = json.loads(text, parse_constant=_refuse_constant)
    except _NonFinite as exc:
        raise RitualInputError(
            f"{label}: {exc} is not allowed in inputs (a Seal stores values as JSON, "
            "which has no such numbers); give a finite number",
            source=source,
        ) from None
    except RecursionError:  # nested past the interpreter's limit: deeper than ours too
        raise _too_deep(label, name=None, source=source) from None
    except ValueError:
        data = _load_yaml_document(text, label)
    if data is None:
        data = {}
    if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
        raise RitualInputError(
            f'{source}: inputs must be a mapping of names to values (e.g. {{"name": '
            f'"Ada"}}), not {type(data).__name__}',
            source=source,
        )
    for key, value in data.items():
        _require_finite(value, name=key, source=label)
    return dict(data)


def _read_input_text(path: str | Path, stdin: IO[str] | None, label: str) -> str:
    """The text of an input file or of standard input, refusing what is not UTF-8.

    At most :data:`MAX_INPUT_FILE_BYTES` are read; a named pipe or a device given as
    a file is refused before it is opened (reading it might never end).
    """
    raw: bytes | str
    if str(path) == "-":
        if stdin is not None:
            raw = stdin.read(MAX_INPUT_FILE_BYTES + 1)
        else:
            buffer = getattr(sys.stdin, "buffer", None)
            raw = (
                buffer.read(MAX_INPUT_FILE_BYTES + 1)
                if buffer is not None
                else sys.stdin.read(MAX_INPUT_FILE_BYTES + 1)
            )
    else:
        kind = special_file_kind(path)
        if kind is not None:
            raise RitualInputError(
                f"{label}: it is {kind}, not a regular file; an input file holds one JSON "
                "or YAML mapping (use --input-file - to read standard input)",
                source=str(path),
            )
        with Path(path).open("rb") as handle:
            raw = handle.read(MAX_INPUT_FILE_BYTES + 1)
    if len(raw) > MAX_INPUT_FILE_BYTES:
        raise RitualInputError(
            f"{label}: larger than {MAX_INPUT_FILE_BYTES // (1024 * 1024)} MiB "
            f"({MAX_INPUT_FILE_BYTES} bytes), the limit of an input file",
            source=str(path),
        )
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RitualInputError(
            f"{label}: not UTF-8 text (byte {exc.start}); an input file holds one JSON or "
            "YAML mapping",
            source=str(path),
        ) from None


def _load_yaml_document(text: str, source: str) -> Any:
    """Parse a YAML inputs document through the YAML layer (which owns PyYAML)."""
    from sanctum.errors import RitualFileError
    from sanctum.ritualfile.loader import load_yaml_text

    try:
        return load_yaml_text(text, source, what="input file").data
    except RitualFileError as exc:
        raise RitualInputError(str(exc), source=source) from exc


def _type_ok(value: Any, type_name: str | None) -> bool:
    """Whether ``value`` has the declared JSON type (an undeclared or unknown type: yes)."""
    if type_name is None:
        return True
    try:
        return has_json_type(value, str(type_name))
    except ValueError:  # not a JSON type name: the model refuses it before this runs
        return True


def _type_problem(key: str, value: Any, type_name: Any, *, what: str) -> str:
    """The message for a value of the wrong type."""
    shown = json.dumps(value, ensure_ascii=False, default=repr)
    kind = "string" if isinstance(value, str) else type(value).__name__
    return f"{what} {key!r} must be of type {type_name}, got {kind} {shown}" + _type_hint(
        value, type_name
    )


def _type_hint(value: Any, type_name: Any) -> str:
    """What to write instead, for the mistakes people make most (or "")."""
    if type_name == "boolean":
        return "; give true or false"
    if type_name == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return (
            "; YAML and JSON read an unquoted number as a number (3.10 becomes 3.1): "
            "quote it to keep the text as written"
        )
    return ""


def _untyped_problem(key: str, value: Any, declaration: Any) -> str | None:
    """Why an update of an untyped conduit does not fit its boolean default, or None.

    An untyped conduit whose default is ``true`` or ``false`` is read as a switch (an
    ``until:`` tests it): ``--update approved=yes`` would store the text "yes", which
    no condition can read, so it is refused here rather than failing the run later.
    """
    default = _field(declaration, "default")
    if isinstance(default, bool) and not isinstance(value, bool):
        kind = "string" if isinstance(value, str) else type(value).__name__
        shown = json.dumps(value, ensure_ascii=False, default=repr)
        return (
            f"conduit {key!r} holds true or false (its default is {json.dumps(default)}), "
            f"got {kind} {shown}; give true or false"
        )
    return None


def _declared_inputs(spec: RitualSpec) -> dict[str, Any]:
    """``{name: declaration}`` of the ritual's inputs (declaration has type/default)."""
    declared = getattr(spec, "inputs", None) or {}
    return dict(declared)


def _field(declaration: Any, name: str) -> Any:
    if isinstance(declaration, Mapping):
        return declaration.get(name)
    return getattr(declaration, name, None)


def _unknown_name(key: str, known: Iterable[str], *, ritual: str, what: str) -> str:
    """``ritual declares no input 'x'; did you mean 'y'? (declared inputs: ...)``."""
    import difflib

    names = sorted(known)
    close = difflib.get_close_matches(key, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(names) or "none"
    return f"{ritual} declares no {what} {key!r}{hint} (declared {what}s: {listed})"


def _named(values: object, what: str, source: str) -> Mapping[str, Any]:
    """``values`` when it maps string names to values; refused otherwise.

    Raises:
        RitualInputError: For a list of pairs (or any non-mapping) or a name that is no
            string, saying what to give instead.
    """
    if not isinstance(values, Mapping):
        raise RitualInputError(
            f"{what}s must be a mapping of names to values, not {type(values).__name__} "
            f"{_shown(values)}; e.g. {{'n': 3}} (a list of pairs: dict(pairs))",
            source=source,
        )
    for key in values:
        if not isinstance(key, str):
            raise RitualInputError(
                f"{what} names must be strings, not {type(key).__name__} {_shown(key)}",
                source=source,
            )
    return values


def bind_inputs(spec: RitualSpec, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Check inputs against the ritual's declared ``inputs`` and fill in defaults.

    Values given as :class:`InputText` (text from a command line) are read
    here: as the text itself for an input declared ``type: string``, as JSON otherwise.

    Args:
        spec: The loaded ritual (``sanctum.ritualfile.load_ritual``).
        inputs: Values by input name.

    Returns:
        ``dict[str, Any]``: the inputs with declared defaults added.

    Raises:
        RitualInputError: For inputs that are no mapping or a name that is no string,
            an undeclared name (with a did-you-mean), a missing required input, a value
            whose type differs from the declaration, or anything a Seal cannot store (a
            number that is not finite, an object that is no JSON value, a key that is no
            string, an integer too long to write), naming the path inside the value.
    """
    declared = _declared_inputs(spec)
    name_of_ritual = getattr(spec, "name", None) or "the ritual"
    checked: dict[str, Any] = {}
    for key, value in _named(inputs, "input", "inputs").items():
        if key not in declared:
            raise RitualInputError(
                _unknown_name(key, declared, ritual=name_of_ritual, what="input"), name=key
            )
        type_name = _field(declared[key], "type")
        checked[key] = _read_text(value, type_name, name=key, source="input")
        _require_finite(checked[key], name=key, source="input")
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
                _type_problem(key, checked[key], type_name, what="input"), name=key
            )
        allowed = _field(declaration, "enum")
        if allowed is not None and checked[key] not in list(allowed):
            choices = ", ".join(json.dumps(v) for v in allowed)
            raise RitualInputError(
                f"input {key!r} must be one of {choices}, got {json.dumps(checked[key])}",
                name=key,
            )
    return checked


def bind_updates(spec: RitualSpec, updates: Mapping[str, Any]) -> dict[str, Any]:
    """Check resumption updates against the ritual's conduits and inputs.

    Every name must be a conduit (``aether:``) or an input of the ritual. Values given
    as :class:`InputText` are read for the declared type (text for ``type: string``,
    JSON otherwise). The value must fit the conduit: its declared type where the
    conduit overwrites or adds, a list for ``append``, a mapping for ``merge_dict``
    (a Python reducer is not checked); numbers must be finite.

    Args:
        spec: The loaded ritual.
        updates: Values by conduit name.

    Returns:
        ``dict[str, Any]``: the updates, read.

    Raises:
        RitualInputError: For updates that are no mapping, an undeclared name (with a
            did-you-mean), a value of the wrong type, or anything a Seal cannot store
            (as :func:`bind_inputs` says), naming the path inside the value.
    """
    conduits = dict(getattr(spec, "aether", None) or {})
    inputs = _declared_inputs(spec)
    name_of_ritual = getattr(spec, "name", None) or "the ritual"
    checked: dict[str, Any] = {}
    for key, value in _named(updates, "update", "--update").items():
        declaration = conduits.get(key, inputs.get(key))
        if declaration is None:
            raise RitualInputError(
                _unknown_name(key, {*conduits, *inputs}, ritual=name_of_ritual, what="conduit")
                + "; nothing was resumed",
                name=key,
                source="--update",
            )
        type_name = _field(declaration, "type")
        read = _read_text(value, type_name, name=key, source="update")
        _require_finite(read, name=key, source="update")
        reducer = _field(declaration, "reducer") if key in conduits else None
        problem = _update_problem(key, read, type_name, reducer)
        if problem is None and type_name is None and reducer in (None, "overwrite"):
            problem = _untyped_problem(key, read, declaration)
        if problem is not None:
            raise RitualInputError(problem + "; nothing was resumed", name=key, source="--update")
        checked[key] = read
    return checked


def _update_problem(key: str, value: Any, type_name: Any, reducer: Any) -> str | None:
    """Why an update does not fit its conduit's reducer and type, or None when it fits.

    ``overwrite`` (and an input) replaces the value: it must have the declared type.
    ``add`` sums it into the value: it must have the declared type too (a number for
    ``type: integer``/``number``). ``append`` takes a list of items, ``merge_dict`` a
    mapping. A Python reducer (``module:function``) decides for itself.
    """
    if reducer in (None, "overwrite", "add"):
        if _type_ok(value, type_name):
            return None
        problem = _type_problem(key, value, type_name, what="conduit")
        if reducer == "add":
            problem += f" (its reducer adds the update to the {type_name} value)"
        return problem
    kind = "string" if isinstance(value, str) else type(value).__name__
    shown = json.dumps(value, ensure_ascii=False, default=repr)
    if reducer == "append" and not isinstance(value, list | tuple):
        return (
            f"conduit {key!r} appends a list of items, got {kind} {shown}; wrap a single "
            f"item as [item] (e.g. --update '{key}=[...]')"
        )
    if reducer == "merge_dict" and not isinstance(value, Mapping):
        return f"conduit {key!r} merges a mapping into its value, got {kind} {shown}"
    return None


def special_file_kind(path: str | Path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a folder.

    Reading a named pipe (FIFO) waits for a writer forever and a device such as
    ``/dev/urandom`` never ends, so sanctum reads only regular files. Looking costs one
    ``stat`` and never blocks.

    Returns:
        ``"a named pipe (FIFO)"``, ``"a character device"``, ``"a block device"``,
        ``"a socket"``, or None for a regular file, a folder or a path that cannot be
        looked at (whoever reads it reports that).
    """
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None
