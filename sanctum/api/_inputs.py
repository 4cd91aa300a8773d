"""Inputs of a run: ``key=value`` pairs, input files, declared inputs, oracle overrides."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sanctum.errors import RitualInputError

if TYPE_CHECKING:
    from sanctum.ritualfile import RitualSpec

__all__ = [
    "MAX_INPUT_DEPTH",
    "MAX_INPUT_FILE_BYTES",
    "InputText",
    "RitualInputError",
    "check_inputs",
    "check_updates",
    "load_input_file",
    "parse_input_pairs",
    "parse_oracle_overrides",
]


# --------------------------------------------------------------------------- inputs


class InputText(str):
    """A value typed on the command line, not read yet.

    :func:`check_inputs` and :func:`check_updates` decide how to read it once the
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


def _storable_problem(value: Any) -> str | None:
    """What keeps ``value`` out of a Seal: ``"deep"``, ``"non-finite"`` or None.

    The walk is iterative and stops below :data:`MAX_INPUT_DEPTH`, so a value nested
    thousands deep (or a container that holds itself) is answered at once.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return "non-finite"
            continue
        if isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= MAX_INPUT_DEPTH:
            return "deep"
        stack.extend((child, depth + 1) for child in children)
    return None


def _require_finite(value: Any, *, name: str, source: str) -> None:
    """Refuse NaN, ±Infinity and too-deep nesting anywhere in a value.

    Seals store values as JSON, which has no such numbers; nesting is capped at
    :data:`MAX_INPUT_DEPTH` levels.

    Raises:
        RitualInputError: Naming the value and where it came from.
    """
    problem = _storable_problem(value)
    if problem == "deep":
        raise _too_deep(f"{source} {name}", name=name, source=source)
    if problem is not None:
        raise RitualInputError(
            f"{source} {name}: NaN and Infinity are not allowed (a Seal stores values as "
            "JSON, which has no such numbers); give a finite number",
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


def parse_input_pairs(
    pairs: Iterable[str], *, option: str = "--input", raw: bool = False
) -> dict[str, Any]:
    """Read ``key=value`` pairs into a mapping.

    The value is parsed as JSON when it parses (``n=3`` gives the int 3, ``ok=true`` a
    bool, ``xs=[1,2]`` a list, ``s='"3"'`` the string "3") and kept as the string
    otherwise (``name=Ada``). Later pairs win over earlier ones. With ``raw=True``
    every value is kept as an :class:`InputText` instead, read later by
    :func:`check_inputs`/:func:`check_updates` for the declared type (so an input
    declared ``type: string`` receives ``42`` as the text "42"); the command line
    works this way.

    Args:
        pairs: Strings of the form ``key=value``.
        option: The command-line option the pairs came from, for messages.
        raw: Keep the values as unread text (see above).

    Returns:
        ``dict[str, Any]`` mapping each key to its value.

    Raises:
        RitualInputError: If a pair has no ``=`` or an empty key, or (unless ``raw``)
            its JSON value holds NaN or ±Infinity.
    """
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise RitualInputError(
                f"{option} {pair!r} is not of the form key=value (e.g. {option} name=Ada)",
                source=option,
            )
        values[key] = InputText(text) if raw else _parse_value(text, name=key, source=option)
    return values


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
        from sanctum.api._files import special_file_kind

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
    import inspect

    from sanctum.errors import RitualFileError
    from sanctum.ritualfile.loader import load_yaml_text

    if "what" not in inspect.signature(load_yaml_text).parameters:  # an older YAML layer
        try:
            return load_yaml_text(text, source).data
        except RitualFileError as exc:
            raise RitualInputError(
                f"cannot read inputs: {exc} (an input file holds one JSON or YAML mapping)",
                source=source,
            ) from exc
    try:
        return load_yaml_text(text, source, what="input file").data
    except RitualFileError as exc:
        raise RitualInputError(str(exc), source=source) from exc


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


def _type_problem(key: str, value: Any, type_name: Any, *, what: str) -> str:
    """The message for a value of the wrong type."""
    shown = json.dumps(value, ensure_ascii=False, default=repr)
    kind = "string" if isinstance(value, str) else type(value).__name__
    return f"{what} {key!r} must be of type {type_name}, got {kind} {shown}"


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


def check_inputs(spec: RitualSpec, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Check inputs against the ritual's declared ``inputs`` and fill in defaults.

    Values given as :class:`InputText` (``parse_input_pairs(..., raw=True)``) are read
    here: as the text itself for an input declared ``type: string``, as JSON otherwise.

    Args:
        spec: The loaded ritual (``sanctum.ritualfile.load_ritual``).
        inputs: Values by input name.

    Returns:
        ``dict[str, Any]``: the inputs with declared defaults added.

    Raises:
        RitualInputError: For an undeclared name (with a did-you-mean), a missing
            required input, a value whose type differs from the declaration, or a
            number that is not finite (NaN, ±Infinity).
    """
    declared = _declared_inputs(spec)
    name_of_ritual = getattr(spec, "name", None) or "the ritual"
    checked: dict[str, Any] = {}
    for key, value in inputs.items():
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


def check_updates(spec: RitualSpec, updates: Mapping[str, Any]) -> dict[str, Any]:
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
        RitualInputError: For an undeclared name (with a did-you-mean), a value of the
            wrong type or a number that is not finite.
    """
    conduits = dict(getattr(spec, "aether", None) or {})
    inputs = _declared_inputs(spec)
    name_of_ritual = getattr(spec, "name", None) or "the ritual"
    checked: dict[str, Any] = {}
    for key, value in updates.items():
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
        RitualInputError: If a pair is not of the form ``NAME=provider:model``, or its
            ``@URL`` is not an http(s) URL with a host (``@ftp://x``).
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
        if at and head and "://" in address:
            entry["model"], entry["base_url"] = head, _oracle_address(pair, address)
        overrides[name.strip()] = entry
    return overrides


def _oracle_address(pair: str, address: str) -> str:
    """Check the ``@URL`` part of an ``--oracle`` override: http(s) with a host.

    Raises:
        RitualInputError: For another scheme or a URL without a host.
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018 - reading it validates the port
    except ValueError as exc:
        raise RitualInputError(
            f"--oracle {pair!r}: the address {address!r} is not a valid URL ({exc}); "
            "write e.g. @http://127.0.0.1:8080/v1",
            source="--oracle",
        ) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise RitualInputError(
            f"--oracle {pair!r}: the address {address!r} must be an http:// or https:// "
            "URL with a host, e.g. @http://127.0.0.1:8080/v1",
            source="--oracle",
        )
    return address
