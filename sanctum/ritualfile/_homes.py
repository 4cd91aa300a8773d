"""Where a key belongs: every place of the ritual file format that has a key of a name.

An unknown key is often a real key written at the wrong level (``redact:`` at the top
of the file, where it is a ward: ``wards: [{redact: ...}]``). :func:`key_homes` walks
the file's pydantic models once and answers, for a key name, the paths where the
format accepts it, written as ``wards[].redact`` (``[]``: an entry of a list) and
``oracles.<name>.base_url`` (``<name>``: any name of a mapping).
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any

from pydantic import BaseModel

__all__ = ["key_homes", "where_it_belongs"]

MAX_HOMES = 3
"""Homes a message names at most (the shallowest first)."""


def key_homes(key: str) -> list[str]:
    """The places of the format where ``key`` is a key, shallowest first.

    Args:
        key: A key name as written in YAML.

    Returns:
        Paths such as ``["wards[].redact"]``; empty when no model has the key.
    """
    return list(_homes().get(key, ()))


def where_it_belongs(key: str, *, exclude: str | None = None) -> str:
    """A ``"; `redact` belongs at wards[].redact"`` suffix, or ``""`` when it is nowhere.

    Args:
        key: The unknown key.
        exclude: A home pattern not to name (the place the key was written, when that
            place has the key under another form).

    Returns:
        The suffix naming at most :data:`MAX_HOMES` places (``… and N more``).
    """
    homes = [home for home in key_homes(key) if home != exclude]
    if not homes:
        return ""
    shown = ", ".join(homes[:MAX_HOMES])
    more = f" and {len(homes) - MAX_HOMES} more" if len(homes) > MAX_HOMES else ""
    return f"; `{key}` belongs elsewhere: {shown}{more}"


@functools.cache
def _homes() -> dict[str, tuple[str, ...]]:
    from sanctum.ritualfile.models import RitualSpec

    found: dict[str, list[str]] = {}
    _walk(RitualSpec, "", found, frozenset())
    return {
        key: tuple(sorted(set(paths), key=lambda p: (p.count(".") + p.count("[]"), p)))
        for key, paths in found.items()
    }


def _walk(
    model: type[BaseModel], prefix: str, found: dict[str, list[str]], seen: frozenset[type]
) -> None:
    if model in seen:
        return
    seen = seen | {model}
    for name, info in model.model_fields.items():
        key = info.alias or name
        path = f"{prefix}{key}"
        found.setdefault(key, []).append(path)
        _descend(info.annotation, path, found, seen)


def _descend(tp: Any, path: str, found: dict[str, list[str]], seen: frozenset[type]) -> None:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        _descend(args[0], path, found, seen)
    elif origin in (typing.Union, types.UnionType):
        for member in args:
            _descend(member, path, found, seen)
    elif origin is dict and len(args) == 2:
        _descend(args[1], f"{path}.<name>", found, seen)
    elif origin is list and args:
        _descend(args[0], f"{path}[]", found, seen)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        _walk(tp, f"{path}.", found, seen)
