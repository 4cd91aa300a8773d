"""Turning what went wrong into ``path:line:column: message`` lines.

Collects :class:`~sanctum.errors.FileProblem` entries for one ritual file, converts
pydantic ``ValidationError`` entries into positioned, readable messages (pointing at
the offending key or value, with a did-you-mean for misspelled keys), and raises one
:class:`~sanctum.errors.RitualFileError` holding every problem of the file.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from sanctum.errors import FileProblem, RitualFileError
from sanctum.ritualfile._homes import where_it_belongs
from sanctum.ritualfile._suggest import did_you_mean, suggest
from sanctum.ritualfile.env import scrub
from sanctum.ritualfile.kinds.base import key_owners, kind_keys, kind_named, registered, sigil_keys
from sanctum.ritualfile.loader import YAML11_BOOLEANS, LoadedFile, YamlPath

__all__ = ["Problems", "data_path", "did_you_mean", "field_accepts", "suggest", "suggest_field"]


def suggest_field(model: Any, key: str, value: Any) -> str | None:
    """The key of ``model`` a misspelled ``key`` most likely meant.

    Keys whose type accepts ``value`` come first: ``retry: 1`` in a policy means
    ``retries`` (a number), not ``retry_on`` (a list), though the latter looks closer.

    Args:
        model: The pydantic model the key was written in.
        key: The unknown key.
        value: The value written under it.

    Returns:
        The best key, or None when nothing is close.
    """
    fields = _fields_of(model)
    synonym = _SYNONYMS.get(key)
    if synonym in fields:
        return synonym
    fitting = [f for f in fields if field_accepts(model, f, value)]
    return suggest(key, fitting) or suggest(key, fields)


_SYNONYMS = {
    "if": "when",
    "condition": "when",
    "goto": "to",
    "target": "to",
    # an oracle's address and model, as other clients and SDKs name them
    **dict.fromkeys(
        ("url", "endpoint", "api_base", "api_url", "base", "baseurl", "host", "server"),
        "base_url",
    ),
    **dict.fromkeys(("model_name", "model_id", "modelname"), "model"),
    **dict.fromkeys(("apikey", "api-key", "token", "api_token", "key"), "api_key"),
    **dict.fromkeys(("request_timeout", "timeout_seconds"), "timeout"),
    **dict.fromkeys(("context_length", "context_size", "max_context"), "context_window"),
}
"""Words from other tools that mean a key of this format (a route's ``if:``, an oracle's
``url:``); each is suggested only where the key it means is allowed."""

_OPTION_WORDS = frozenset(
    (
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "max_tokens",
        "num_predict",
        "num_ctx",
        "n_ctx",
        "seed",
        "stop",
        "repeat_penalty",
        "presence_penalty",
        "frequency_penalty",
    )
)
"""Sampling and model options, written under an oracle's ``options:``, not beside it."""


def field_accepts(model: type[BaseModel], key: str, value: Any) -> bool:
    """Whether ``value`` has the type of ``model``'s key ``key`` (strictly, no constraints)."""
    adapter = _adapter(model, key)
    if adapter is None:
        return False
    try:
        adapter.validate_python(value, strict=True)
    except (ValidationError, TypeError, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=256)
def _adapter(model: type[BaseModel], key: str) -> TypeAdapter[Any] | None:
    for name, info in model.model_fields.items():
        if (info.alias or name) == key:
            try:
                return TypeAdapter(Any if info.annotation is None else info.annotation)
            except Exception:  # pragma: no cover - every field type is adaptable
                return None
    return None


class Problems:
    """The problems found in one ritual file, raised together.

    Args:
        loaded: The file as read by the loader (for positions).
        secrets: Values never to repeat in a message.
    """

    def __init__(self, loaded: LoadedFile, secrets: Iterable[str] = ()) -> None:
        self.loaded = loaded
        self.secrets = set(secrets)
        self.items: list[FileProblem] = []
        self._seen: set[tuple[int, int, str]] = set()

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, path: YamlPath, message: str, *, key: bool = False) -> None:
        """Record a problem at the key or value found at ``path``.

        Args:
            path: Where in the document the problem is.
            message: What is wrong and how to fix it.
            key: Point at the mapping key rather than the value.
        """
        line, column = self.loaded.position(path, key=key)
        self.add_at(line, column, message)

    def add_at(self, line: int, column: int, message: str) -> None:
        """Record a problem at an explicit 1-based position."""
        message = scrub(message, self.secrets)
        marker = (line, column, message)
        if marker in self._seen:
            return
        self._seen.add(marker)
        self.items.append(FileProblem(self.loaded.path, line, column, message))

    def extend(self, problems: Iterable[FileProblem]) -> None:
        """Record problems found elsewhere (e.g. in a circle's file)."""
        for problem in problems:
            self.add_at(problem.line, problem.column, problem.message)

    def sorted(self) -> list[FileProblem]:
        """The problems in file order."""
        return sorted(self.items, key=lambda p: (p.line, p.column))

    def raise_if_any(self) -> None:
        """Raise every recorded problem as one RitualFileError.

        Raises:
            RitualFileError: When at least one problem was recorded.
        """
        if self.items:
            raise RitualFileError(self.sorted())

    def from_validation(self, error: ValidationError, root: type[BaseModel]) -> None:
        """Convert a pydantic ValidationError into positioned problems.

        Args:
            error: The error raised by ``root.model_validate``.
            root: The model that was validated.
        """
        entries = []
        for item in error.errors(include_url=False):
            path, model, tail = data_path(item["loc"], root)
            if item["type"] == "union_tag_not_found":
                value = item.get("input")
                if not isinstance(value, dict):  # a sigil or ward that is no mapping
                    empty = ", not empty" if value is None else ""
                    self.add(path, f"{_label(path)} should be a mapping{empty}", key=True)
                else:
                    self._missing_tag(path, value, item)
                continue
            entries.append((path, model, tail, item))
        by_path: dict[YamlPath, list[tuple[Any, ...]]] = {}
        for entry in entries:
            by_path.setdefault(entry[0], []).append(entry)
        for path, group in by_path.items():
            if _is_type_only(group) and any(
                other != path and other[: len(path)] == path for other in by_path
            ):
                continue  # a deeper error explains this union branch better
            if _is_type_only(group) and len(group) > 1:
                self.add(path, _type_message(path, [g[3] for g in group], self.loaded))
                continue
            deeper = any(other != path and other[: len(path)] == path for other in by_path)
            if deeper and all(
                g[3]["type"] == "literal_error" and not isinstance(g[3].get("input"), str)
                for g in group
            ):
                continue  # a mapping for `on`/`off`-or-a-mapping: its own errors say more
            if _is_choice_or_type(group):
                if not deeper:  # `on`, `off` or a mapping: one line says all three
                    self.add(path, _choice_message(path, [g[3] for g in group]))
                continue
            for _path, model, tail, item in group:
                self._one(path, model, tail, item)

    def _missing_tag(self, path: YamlPath, value: dict[str, Any], item: Any) -> None:
        """A mapping without the key that says which model it is (``provider``).

        Sigils, wards and scatter sigils choose their model by a kind key, checked (with
        a better message) before validation; a key-valued tag is reported here: as a
        misspelled key when one resembles it, else as a missing key.
        """
        tag = str((item.get("ctx") or {}).get("discriminator", ""))
        if not (tag.startswith("'") and tag.endswith("'")):
            return  # a kind-key union: reported by the kind checks
        tag = tag.strip("'")
        options = _tag_values().get(tag, ())
        choices = f" (one of {', '.join(options)})" if options else ""
        for key in value:
            if isinstance(key, str) and suggest(key, [tag]) == tag:
                self.add(
                    (*path, key),
                    f"unknown key {key!r}{_where(path)}; did you mean {tag!r}?",
                    key=True,
                )
                return
        self.add(path, f"missing required key {tag!r}{_where(path)}{choices}", key=True)

    def _one(self, path: YamlPath, model: Any, tail: str | None, item: Any) -> None:
        kind = item["type"]
        if kind == "extra_forbidden":
            key = str(path[-1])
            allowed = _fields_of(model)
            where = _where(path[:-1])
            value = item.get("input")
            if any(model is kind.model for kind in registered()):
                hint = _sigil_key_hint(key, model, value)
                self.add(path, f"unknown key {key!r}{where}{hint}", key=True)
                return
            best = suggest_field(model, key, value) if allowed else None
            if best:
                hint = f"; did you mean {best!r}?"
            elif key in _OPTION_WORDS and "options" in allowed:
                hint = f"; `{key}` is a model option: write it under `options:`"
            else:
                hint = where_it_belongs(key)
            self.add(
                path,
                f"unknown key {key!r}{where}{hint}"
                + (f" (allowed: {', '.join(sorted(allowed))})" if allowed else ""),
                key=True,
            )
            return
        if kind == "missing":
            name = tail or str(path[-1] if path else "")
            parent = path[:-1]
            if self._misspelt_beside(parent, model, name):
                return  # the unknown key's own line suggests this one
            self.add(parent, f"missing required key {name!r}{_where(parent)}", key=True)
            return
        if kind in ("literal_error", "union_tag_invalid"):
            ctx = item.get("ctx") or {}
            expected = str(ctx.get("expected", ctx.get("expected_tags", ""))).replace("'", "")
            value = item.get("input")
            if kind == "union_tag_invalid":
                value = ctx.get("tag", value)
                path = (*path, str(ctx.get("discriminator", "")).strip("'"))
            options = [o.strip() for o in expected.replace(" or ", ", ").split(",") if o.strip()]
            hint = did_you_mean(str(value), options) if isinstance(value, str) else ""
            self.add(path, f"{_label(path)} must be one of {', '.join(options)}{hint}")
            return
        if kind == "value_error":  # a model's own check: its message says it all
            error = (item.get("ctx") or {}).get("error")
            self.add(path, f"{_label(path)} {error}")
            return
        self.add(path, _type_message(path, [item], self.loaded))

    def _misspelt_beside(self, parent: YamlPath, model: Any, name: str) -> bool:
        """Whether the mapping at ``parent`` holds an unknown key that means ``name``.

        Then ``url:`` written for ``base_url:`` is one problem (the unknown key, with its
        did-you-mean), not two.
        """
        value: Any = self.loaded.data
        for step in parent:
            try:
                value = value[step]
            except (KeyError, IndexError, TypeError):
                return False
        if not isinstance(value, dict):
            return False
        fields = set(_fields_of(model))
        return any(
            isinstance(key, str)
            and key not in fields
            and suggest_field(model, key, written) == name
            for key, written in value.items()
        )


def _tag_values() -> dict[str, tuple[str, ...]]:
    """The values of each key that chooses a model (a discriminator field)."""
    from sanctum.ritualfile.models import ORACLE_PROVIDERS  # the models import the kinds

    return {"provider": ORACLE_PROVIDERS}


def _sigil_key_hint(key: str, model: type[BaseModel], value: Any) -> str:
    """A did-you-mean over every key a sigil can have, and the keys this one allows."""
    allowed = _fields_of(model)
    owners = key_owners(key)
    if owners:
        hint = f"; `{key}` belongs to {' and '.join(owners)} sigils"
    elif (best := suggest_field(model, key, value)) is not None:
        hint = f"; did you mean {best!r}?"
    elif (best := suggest(key, sigil_keys())) is not None:
        whose = [best] if best in kind_keys() else key_owners(best)
        hint = f"; did you mean {best!r}? (it belongs to {' and '.join(whose)} sigils)"
    else:
        hint = where_it_belongs(key)
    if model is kind_named("pass").model:
        return (
            f"{hint} (allowed: {', '.join(sorted(allowed))}, or one kind key: "
            f"{', '.join(kind_keys())})"
        )
    return f"{hint} (allowed: {', '.join(sorted(allowed))})"


_TYPE_WORDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean (true or false)",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


_BOUNDS = {
    "greater_than_equal": ("ge", "more"),
    "less_than_equal": ("le", "less"),
}
"""Range errors pydantic reports, as (its context key, the word after the bound)."""


def _type_message(path: YamlPath, items: Sequence[Any], loaded: LoadedFile) -> str:
    words: list[str] = []
    for item in items:
        word = _TYPE_WORDS.get(item["type"])
        bound = _BOUNDS.get(item["type"])
        if bound is not None:
            limit = (item.get("ctx") or {}).get(bound[0])
            return f"{_label(path)} should be {limit} or {bound[1]}, not {item.get('input')!r}"
        if word is None:
            return f"{_label(path)}: {item['msg'][0].lower()}{item['msg'][1:]}"
        if word not in words:
            words.append(word)
    value = items[0].get("input")
    message = f"{_label(path)} should be {' or '.join(words)}"
    if isinstance(value, str) and value in YAML11_BOOLEANS and path in loaded.plain_booleans:
        message += (
            f" — `{value}` is a string in YAML 1.2; write true or false"
            if "a boolean (true or false)" in words
            else ""
        )
    elif value is None and items[0]["type"] != "missing":
        message += ", not empty"
    return message


def _is_choice_or_type(group: Sequence[Any]) -> bool:
    """A union of fixed words and other types (``on``, ``off`` or a mapping) missed."""
    kinds = [g[3]["type"] for g in group]
    return (
        "literal_error" in kinds
        and any(k in _TYPE_WORDS for k in kinds)
        and all(k == "literal_error" or k in _TYPE_WORDS for k in kinds)
    )


def _choice_message(path: YamlPath, items: Sequence[Any]) -> str:
    words: list[str] = []
    for item in items:
        if item["type"] == "literal_error":
            expected = str((item.get("ctx") or {}).get("expected", "")).replace("'", "")
            words.extend(o.strip() for o in expected.replace(" or ", ", ").split(","))
        elif (word := _TYPE_WORDS[item["type"]]) not in words:
            words.append(word)
    words = [w for w in words if w]
    shown = ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)
    return f"{_label(path)} must be {shown}"


def _is_type_only(group: Sequence[Any]) -> bool:
    return all(g[3]["type"] in _TYPE_WORDS for g in group)


def _label(path: YamlPath) -> str:
    names = [p for p in path if isinstance(p, str)]
    if not names:
        return "the file"
    if len(path) >= 2 and path[0] == "sigils" and len(path) > 2:
        return f"`{'.'.join(str(p) for p in path[2:])}` of sigil {path[1]!r}"
    return f"`{'.'.join(str(p) for p in path)}`"


def _where(path: YamlPath) -> str:
    if len(path) >= 2 and path[0] == "sigils":
        inner = ".".join(str(p) for p in path[2:])
        return f" in sigil {path[1]!r}" + (f" ({inner})" if inner else "")
    if path:
        return f" in `{'.'.join(str(p) for p in path)}`"
    return " at the top level"


def _fields_of(model: Any) -> list[str]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [f.alias or name for name, f in model.model_fields.items()]
    return []


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if _is_union(tp):
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return _unwrap(members[0])
    return tp


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _labels(member: Any) -> set[str]:
    labels: set[str] = set()
    if typing.get_origin(member) is typing.Annotated:
        for meta in typing.get_args(member)[1:]:
            tag = getattr(meta, "tag", None)
            if isinstance(tag, str):
                labels.add(tag)
    base = _unwrap(member)
    if isinstance(base, type):
        labels.add(base.__name__)
        if issubclass(base, BaseModel):
            provider = base.model_fields.get("provider")
            if provider is not None:
                for literal in typing.get_args(provider.annotation):
                    labels.add(str(literal))
    origin = typing.get_origin(base)
    if origin is not None:
        name = f"{getattr(origin, '__name__', origin)}["
        labels.update((name, name.lower()))  # pydantic writes `literal['on','off']`
    return labels


def data_path(loc: Sequence[Any], root: type[BaseModel]) -> tuple[YamlPath, Any, str | None]:
    """Map a pydantic error location onto a document path, skipping union labels.

    Returns the data path, the model type at the last mapping (for key suggestions),
    and the missing field's name when the location ends on one.
    """
    tp: Any = root
    path: list[str | int] = []
    model: Any = root
    i = 0
    while i < len(loc):
        element = loc[i]
        tp = _unwrap(tp)
        if _is_union(tp):
            chosen = None
            for member in typing.get_args(tp):
                labels = _labels(member)
                if element in labels or (
                    isinstance(element, str)
                    and any(lab.endswith("[") and element.startswith(lab) for lab in labels)
                ):
                    chosen = member
                    break
            if chosen is not None:
                tp = chosen
                i += 1
                continue
            tp = Any
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            model = tp
            fields = {f.alias or n: f for n, f in tp.model_fields.items()}
            path.append(element)
            field = fields.get(str(element))
            tp = field.annotation if field is not None else Any
            i += 1
            continue
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is dict and len(args) == 2:
            model = None
            path.append(element)
            tp = args[1]
        elif origin is list and args:
            path.append(element)
            tp = args[0]
        else:
            path.append(element)
            tp = Any
        i += 1
    return tuple(path), model, (str(loc[-1]) if loc else None)
