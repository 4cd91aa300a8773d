"""Inputs of a run: ``key=value`` pairs, input files, declared inputs, oracle overrides."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sanctum.errors import RitualInputError

if TYPE_CHECKING:
    from sanctum.spec import RitualSpec

__all__ = [
    "RitualInputError",
    "check_inputs",
    "load_input_file",
    "parse_input_pairs",
    "parse_oracle_overrides",
]


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
