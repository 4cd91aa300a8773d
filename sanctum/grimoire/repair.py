"""Mending the Oracle's imperfect spell calls before they are cast.

Repair layer, applied to EVERY spell call (tool call) — native tool calling or
prompted — before execution. Three tiers: local repair (tolerant JSON extraction via
:func:`sanctum.oracle.robust.extract_json`, no model round trip), conversational
repair (a correction message returned to the Oracle through the transcript, written so
a small model knows exactly what to fix), and surrender (SpellCallParseError, raised
by the summon loop once max_repair_rounds is exhausted). Repairs and rejections
surface as SpellCallRepaired / SpellCallRejected Omens.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sanctum.codex.base import find_unserialisable
from sanctum.grimoire.tome import Tome
from sanctum.jsontypes import JSON_TYPES, has_json_type, json_type_of
from sanctum.oracle._mend import loads, looks_cut_off, top_level_objects
from sanctum.oracle.base import SpellCall
from sanctum.oracle.robust import call_from_object, extract_json_with_mend

__all__ = ["MALFORMED_KEY", "RepairOutcome", "repair_spell_call"]

MALFORMED_KEY = "__malformed_json__"
"""Argument key flagging a call whose arguments did not parse; its value is the raw text."""

_WRAPPER_KEYS = ("arguments", "args", "parameters", "input", "kwargs")
_NAME_PREFIXES = ("functions.", "function.", "tools.", "tool.", "spells.", "spell.")
_INTEGER = re.compile(r"[+-]?\d{1,30}")
_JSON_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
_PLACEHOLDERS: dict[str, Any] = {
    "string": "...",
    "integer": 0,
    "number": 0,
    "boolean": True,
    "array": [],
    "object": {},
}
_MAX_RAW = 2000


@dataclass(frozen=True, slots=True)
class RepairOutcome:
    """What the repair layer decided about one spell call.

    Exactly one of ``call``/``correction`` is set: ``call`` is the executable
    (possibly mended) SpellCall; ``correction`` is the message to return to the
    Oracle. ``repaired`` describes the local mend applied, if any; ``raw`` preserves
    the original text (the unparseable arguments, or the call as JSON when it was
    rejected) for debugging.

    Raises:
        ValueError: If both or neither of ``call`` and ``correction`` are given.
    """

    call: SpellCall | None = None
    correction: str | None = None
    repaired: str | None = None
    raw: str | None = None

    def __post_init__(self) -> None:
        if (self.call is None) == (self.correction is None):
            raise ValueError("RepairOutcome needs exactly one of call or correction")

    @property
    def ok(self) -> bool:
        """Whether the call can be cast."""
        return self.call is not None


def _dump(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        try:
            text = repr(value)
        except RecursionError:
            text = f"<{type(value).__name__} nested too deeply to show>"
    return text


def _quote(value: Any) -> str:
    text = _dump(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _types_of(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def _is(value: Any, kind: str) -> bool:
    """Whether ``value`` has JSON type ``kind``, as :mod:`sanctum.jsontypes` decides.

    A type name that is no JSON type (a schema's own word) accepts every value, as an
    absent ``type`` does.
    """
    return kind not in JSON_TYPES or has_json_type(value, kind)


_MISSING = object()


def _coerce(value: Any, kind: str) -> Any:
    """``value`` converted to JSON type ``kind`` when that is unambiguous, else _MISSING."""
    if kind == "integer":
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            return int(value.strip())
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif kind == "number" and isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return _MISSING
        if math.isfinite(number):
            return int(number) if _INTEGER.fullmatch(value.strip()) else number
    elif kind == "boolean" and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            return lowered == "true"
    elif kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    elif kind in ("array", "object") and isinstance(value, str) and len(value) <= 100_000:
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return _MISSING
        if _is(decoded, kind):
            return decoded
    return _MISSING


def _describe(schema: Mapping[str, Any]) -> str:
    kinds = [k for k in _types_of(schema) if k != "null"]
    return " or ".join(kinds) if kinds else "any value"


@dataclass(slots=True)
class _Check:
    arguments: dict[str, Any]
    problems: list[str]
    mends: list[str]


def _check_value(name: str, value: Any, schema: Mapping[str, Any], check: _Check) -> None:
    kinds = _types_of(schema)
    if kinds and not any(_is(value, k) for k in kinds):
        for kind in kinds:
            coerced = _coerce(value, kind)
            if coerced is not _MISSING:
                check.arguments[name] = coerced
                check.mends.append(f"converted argument {name!r} to {kind}")
                value = coerced
                break
        else:
            wanted = " or ".join(_JSON_TYPES.get(k, k) for k in kinds)
            check.problems.append(f'argument "{name}" must be {wanted}, got {_quote(value)}')
            return
    options = schema.get("enum")
    if isinstance(options, list) and options and value not in options:
        if isinstance(value, str):
            folded = [o for o in options if isinstance(o, str) and o.lower() == value.lower()]
            if len(folded) == 1:
                check.arguments[name] = folded[0]
                check.mends.append(f"matched argument {name!r} to {folded[0]!r}")
                return
        allowed = ", ".join(_quote(o) for o in options)
        check.problems.append(f'argument "{name}" must be one of {allowed}, got {_quote(value)}')


def _validate(arguments: dict[str, Any], parameters: Mapping[str, Any]) -> _Check:
    check = _Check(dict(arguments), [], [])
    raw_properties = parameters.get("properties")
    properties: dict[str, Any] | None = (
        dict(raw_properties) if isinstance(raw_properties, Mapping) else None
    )
    required = [r for r in parameters.get("required") or [] if isinstance(r, str)]
    open_ended = parameters.get("additionalProperties", False) not in (False, None)
    for key in required:
        if key not in check.arguments:
            schema = (properties or {}).get(key)
            kind = _describe(schema) if isinstance(schema, Mapping) else "any value"
            check.problems.append(f'missing required argument "{key}" ({kind})')
    if properties is not None and not open_ended:
        spare = [p for p in properties if p not in check.arguments]
        for key in list(check.arguments):
            if key in properties:
                continue
            close = difflib.get_close_matches(key, spare, n=1)
            hint = f' — did you mean "{close[0]}"?' if close else ""
            check.problems.append(f'unexpected argument "{key}"{hint}')
    for key, value in list(check.arguments.items()):
        schema = (properties or {}).get(key)
        if not isinstance(schema, Mapping):
            continue
        if value is None and key not in required and "null" not in _types_of(schema):
            del check.arguments[key]
            check.mends.append(f"dropped optional argument {key!r} sent as null")
            continue
        _check_value(key, value, schema, check)
    if not check.problems:
        check.problems.extend(_schema_problems(check.arguments, parameters))
    for key, value in check.arguments.items():
        # NaN, Infinity and 1e999 parse as floats but no Seal can hold them: a
        # correction, not a failed run.
        odd = find_unserialisable(value, str(key))
        if odd is not None:
            where, kind = odd
            check.problems.append(
                f'argument "{where}" holds {kind}, which is not plain JSON; send a finite '
                "number, a string, a boolean, null, a list or an object"
            )
    return check


_MAX_SCHEMA_PROBLEMS = 5


def _schema_problems(arguments: dict[str, Any], parameters: Mapping[str, Any]) -> list[str]:
    """What the full JSON Schema finds wrong beyond the checks above (nested values).

    The checks above cover names, required keys, top-level types and enums, with
    small-model mends; this validates everything else the schema says — array items,
    nested objects, bounds, patterns — with the jsonschema library (the dialect the
    schema declares, Draft 2020-12 otherwise). A schema jsonschema cannot read adds
    nothing.
    """
    import jsonschema  # lazy: only a spell call pays for loading it

    try:
        validator_class = jsonschema.validators.validator_for(
            parameters, default=jsonschema.Draft202012Validator
        )
        schema = dict(parameters)
        validator_class.check_schema(schema)
        validator_class = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
            validator_class, type_checker=_type_checker(validator_class.TYPE_CHECKER)
        )
        validator = validator_class(schema)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except (jsonschema.SchemaError, jsonschema.exceptions.UnknownType, TypeError, ValueError):
        return []
    problems = []
    for error in errors[:_MAX_SCHEMA_PROBLEMS]:
        where = _json_path(error.absolute_path)
        if not where:
            continue  # the top level is the simple checks' business
        problems.append(f'argument "{where}": {error.message}')
    return problems


def _type_checker(checker: Any) -> Any:
    """jsonschema's type checker, answering as :mod:`sanctum.jsontypes` does.

    Nested values then follow the same rules as top-level ones: a tuple is an array,
    any Mapping an object, a bool no number, and ``1.0`` no integer.
    """
    return checker.redefine_many({name: _same_as_sanctum(name) for name in JSON_TYPES})


def _same_as_sanctum(name: str) -> Callable[[Any, Any], bool]:
    return lambda _checker, instance: has_json_type(instance, name)


def _json_path(path: Any) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _signature(name: str, parameters: Mapping[str, Any]) -> str:
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return f"{name} takes no arguments."
    required = set(parameters.get("required") or [])
    parts = []
    for key, schema in properties.items():
        schema = schema if isinstance(schema, Mapping) else {}
        detail = [_describe(schema), "required" if key in required else "optional"]
        if isinstance(schema.get("enum"), list):
            detail.append("one of " + ", ".join(_quote(o) for o in schema["enum"]))
        parts.append(f"{key} ({', '.join(detail)})")
    return f"{name} takes these arguments: {'; '.join(parts)}."


def _example(arguments: Mapping[str, Any], parameters: Mapping[str, Any], good: bool) -> str:
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    example: dict[str, Any] = {}
    required = [r for r in parameters.get("required") or [] if isinstance(r, str)]
    for key in properties:
        schema = properties[key] if isinstance(properties[key], Mapping) else {}
        if good and key in arguments and _valid_alone(key, arguments[key], schema):
            example[key] = arguments[key]  # never a value that was itself rejected
        elif key in required:
            options = schema.get("enum")
            kinds = [k for k in _types_of(schema) if k != "null"] or ["string"]
            example[key] = (
                options[0]
                if isinstance(options, list) and options
                else _within_bounds(_PLACEHOLDERS.get(kinds[0], "..."), schema)
            )
    return _dump(example)


def _within_bounds(value: Any, schema: Mapping[str, Any]) -> Any:
    """A numeric placeholder moved inside the schema's ``minimum``/``maximum``."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return value
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, int | float) and not isinstance(low, bool) and value < low:
        value = low
    if isinstance(high, int | float) and not isinstance(high, bool) and value > high:
        value = high
    return value


def _valid_alone(key: str, value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether one argument passes every check of its own property's schema."""
    if find_unserialisable(value) is not None:
        return False
    alone = {"type": "object", "properties": {key: dict(schema)}}
    return not _validate({key: value}, alone).problems


def _available(tome: Tome | None) -> str:
    names = tome.names if tome is not None else []
    return ", ".join(names) if names else "none"


def _unknown_correction(name: str, tome: Tome | None) -> str:
    if tome is None or not len(tome):
        return (
            f'There is no spell named "{name}": no spells are available here. '
            "Answer directly, without casting a spell."
        )
    close = difflib.get_close_matches(name, tome.names, n=1, cutoff=0.5)
    hint = f' Did you mean "{close[0]}"?' if close else ""
    if not name:
        head = "Your spell call did not name a spell."
    else:
        head = f'There is no spell named "{name}".{hint}'
    return (
        f"{head} The available spells are: {_available(tome)}. Cast one of them by its "
        "exact name, or answer without casting a spell."
    )


def _why_unreadable(raw: str) -> str:
    """What is wrong with arguments text that yielded no object, for a small model."""
    text = raw.strip()
    if looks_cut_off(text):
        return "its arguments stop in the middle (the text was cut off before the end)"
    value = loads(text)
    if isinstance(value, list):
        return "its arguments are a JSON array, not one object of argument names to values"
    if value is not None:
        return f"its arguments are {_JSON_TYPES.get(_json_type(value), 'a value')}, not an object"
    if len(top_level_objects(text, 3)) > 1:
        return "its arguments are several JSON objects one after another (one call each)"
    return "its arguments are not valid JSON"


def _json_type(value: Any) -> str:
    return json_type_of(value) or "object"


def _unreadable_correction(name: str, tome: Tome | None, raw: str = "") -> str:
    why = _why_unreadable(raw)
    if tome is not None and name in tome:
        parameters = tome.get(name).parameters
        example = _dump({"spell": name, "arguments": json.loads(_example({}, parameters, False))})
        return (
            f"Your call to the spell {name} could not be read: {why}. Send the whole call "
            "again with the arguments as one JSON object, "
            f"using double quotes and no trailing commas, for example: {example}. "
            f"{_signature(name, parameters)}"
        )
    why = why.replace("its arguments are", "it is").replace("its arguments stop", "it stops")
    like = '{"spell": ..., "arguments": {...}}'
    if tome is not None and len(tome):
        first = tome.names[0]  # a real call, not a placeholder a small model copies back
        arguments = json.loads(_example({}, tome.get(first).parameters or {}, False))
        like = _dump({"spell": first, "arguments": arguments})
    return (
        f"Your spell call could not be read: {why}. Send it again as one JSON object with "
        f"double quotes, like {like}. "
        f"The available spells are: {_available(tome)}."
    )


def _match_name(name: str, tome: Tome) -> str | None:
    """A unique spell the model clearly meant (prefix, case or dash slip), else None."""
    bare = name
    for prefix in _NAME_PREFIXES:
        if bare.lower().startswith(prefix):
            bare = bare[len(prefix) :]
            break
    if bare in tome:
        return bare
    folded = bare.lower().replace("-", "_").replace(" ", "_")
    matches = [n for n in tome.names if n.lower().replace("-", "_") == folded]
    return matches[0] if len(matches) == 1 else None


def _is_arguments_of(name: str, recovered: Mapping[str, Any], tome: Tome | None) -> bool:
    """Whether ``recovered`` is the arguments of known spell ``name`` (not a full call)."""
    if tome is None or name not in tome:
        return False
    properties = tome.get(name).parameters.get("properties")
    if not isinstance(properties, Mapping) or not recovered:
        return False
    return all(key in properties for key in recovered)


def _unwrap(
    arguments: dict[str, Any], parameters: Mapping[str, Any]
) -> tuple[dict[str, Any], str] | None:
    """``{"arguments": {...}}`` (or its JSON string) nested once too deep -> the inner dict."""
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    if len(arguments) != 1:
        return None
    key, value = next(iter(arguments.items()))
    if key not in _WRAPPER_KEYS or key in properties:
        return None
    if isinstance(value, str):
        inner, _how = extract_json_with_mend(value[: _MAX_RAW * 50])
        if inner is None:
            return None
        return inner, f"decoded arguments nested under {key!r} as a JSON string"
    if isinstance(value, dict):
        return dict(value), f"unwrapped arguments nested under {key!r}"
    return None


def _concatenated(raw: str) -> bool:
    """Whether ``raw`` is several JSON objects one after another (``{...}{...}``).

    Some servers join the arguments of parallel calls into one string; taking the
    first object would drop the others without a word.
    """
    text = raw.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return False
    spans = top_level_objects(text, 3)
    return len(spans) > 1 and spans[0][0] == 0 and spans[-1][1] == len(text)


def _raw(value: Any) -> str:
    text = value if isinstance(value, str) else _dump(value)
    return text


def repair_spell_call(call: SpellCall, tome: Tome | None) -> RepairOutcome:
    """Validate and, when possible, mend one spell call.

    Checks in order: (1) arguments flagged ``"__malformed_json__"`` are recovered with
    ``extract_json`` — a recovered full call object (``{"spell": ..., "arguments":
    {...}}``) replaces both name and arguments; unrecoverable text becomes a
    correction with the original preserved. Arguments double-encoded as a JSON string,
    or nested once too deep under ``"arguments"``, are decoded. (2) Unknown Spell
    names get a correction listing the available Spells (with a did-you-mean); a
    name off only by a ``functions.`` prefix, letter case or dashes is mended. (3)
    Arguments are checked against the Spell's JSON schema — missing required or
    unexpected keys, and simple type mismatches, get a correction naming them;
    unambiguous conversions (``"3"`` for an integer, ``null`` for an optional
    argument) are mended. Corrections are phrased for a small model: they state
    exactly what to change.

    Args:
        call: The call as the Oracle produced it.
        tome: The Spells that may be cast (``None``: none).

    Returns:
        A :class:`RepairOutcome` holding the executable call or the correction.
    """
    try:
        return _repair(call, tome)
    except RecursionError:  # arguments nested thousands deep, built in Python
        return RepairOutcome(
            correction=(
                f"The spell {call.spell} was not cast because its arguments are nested too "
                "deeply to read. Send flat arguments: one JSON object of argument names to "
                "plain values."
            ),
            raw=f"<arguments of {call.spell!r} nested too deeply to show>",
        )


def _repair(call: SpellCall, tome: Tome | None) -> RepairOutcome:
    name = call.spell.strip() if isinstance(call.spell, str) else ""
    arguments: Any = call.arguments
    mends: list[str] = []
    raw: str | None = None
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        arguments = {MALFORMED_KEY: arguments}
    elif not isinstance(arguments, Mapping):
        arguments = {MALFORMED_KEY: _dump(arguments)}
    arguments = {k if isinstance(k, str) else _dump(k): v for k, v in arguments.items()}
    if len(arguments) == 1 and str(arguments.get(MALFORMED_KEY, "?")).strip() in ("", "null"):
        arguments = {}  # "arguments": "" or "null" on the wire: no arguments at all

    # (1) local repair of malformed JSON
    if MALFORMED_KEY in arguments:
        raw = _raw(arguments[MALFORMED_KEY])
        if _concatenated(raw):
            return RepairOutcome(correction=_unreadable_correction(name, tome, raw), raw=raw)
        recovered, how = extract_json_with_mend(raw)
        if recovered is None:
            return RepairOutcome(correction=_unreadable_correction(name, tome, raw), raw=raw)
        full = None if _is_arguments_of(name, recovered, tome) else call_from_object(recovered)
        if full is not None:
            if name and full.spell != name:
                mends.append(f"the text named spell {full.spell!r}, not {name!r}")
            name = full.spell
            arguments = dict(full.arguments)
            mends.append(f"recovered the full call from malformed text ({how})")
            if MALFORMED_KEY in arguments:
                inner, inner_how = extract_json_with_mend(_raw(arguments[MALFORMED_KEY]))
                if inner is None:
                    return RepairOutcome(
                        correction=_unreadable_correction(name, tome, raw), raw=raw
                    )
                arguments = inner
                mends.append(f"decoded arguments double-encoded as a JSON string ({inner_how})")
        else:
            arguments = recovered
            mends.append(f"recovered the arguments from malformed JSON ({how})")

    # (2) the Spell must exist
    if tome is None:
        rejected = raw if raw is not None else _dump({"spell": name, "arguments": arguments})
        return RepairOutcome(correction=_unknown_correction(name, tome), raw=rejected)
    if name not in tome:
        matched = _match_name(name, tome) if name else None
        if matched is None:
            rejected = raw if raw is not None else _dump({"spell": name, "arguments": arguments})
            return RepairOutcome(correction=_unknown_correction(name, tome), raw=rejected)
        mends.append(f"matched spell name {name!r} to {matched!r}")
        name = matched
    parameters = tome.get(name).parameters or {}

    # (3) the arguments must fit the schema
    check = _validate(arguments, parameters)
    if check.problems:
        unwrapped = _unwrap(arguments, parameters)
        if unwrapped is not None:
            retry = _validate(unwrapped[0], parameters)
            if not retry.problems:
                check = retry
                mends.append(unwrapped[1])
    if check.problems:
        rejected = raw if raw is not None else _dump({"spell": name, "arguments": arguments})
        problems = "\n".join(f"- {p}" for p in check.problems)
        example = _example(check.arguments, parameters, True)
        correction = (
            f"The spell {name} was not cast because its arguments are wrong:\n{problems}\n"
            f"{_signature(name, parameters)} Call {name} again with corrected arguments, "
            f"for example: {example}"
        )
        return RepairOutcome(correction=correction, raw=rejected)
    mends.extend(check.mends)
    return RepairOutcome(
        call=SpellCall(spell=name, arguments=check.arguments, call_id=call.call_id),
        repaired="; ".join(mends) if mends else None,
        raw=raw,
    )
