"""One answer to "is this value of JSON type T", for every layer that asks.

Inputs and updates of a ritual file, reducer defaults, and spell (tool) arguments all
check Python values against the seven JSON Schema type names. They share this module so
they agree on the edge cases:

* a ``bool`` is a ``"boolean"``, never an ``"integer"`` or a ``"number"``;
* an ``int`` is both an ``"integer"`` and a ``"number"``; a ``float`` is a ``"number"``
  only (``1.0`` is not an ``"integer"``; a ritual that wants one says so);
* any :class:`~collections.abc.Mapping` is an ``"object"``; a ``list`` or a ``tuple`` is
  an ``"array"`` (a ``str``/``bytes`` is never one);
* ``None`` is ``"null"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["JSON_TYPES", "has_json_type", "json_type_of"]

JSON_TYPES: Final = ("string", "integer", "number", "boolean", "array", "object", "null")
"""The JSON Schema type names, in the order messages list them."""


def json_type_of(value: object) -> str | None:
    """The JSON type name of ``value`` (``"integer"`` for an int), or None when it has none.

    A float that is not finite is still a ``"number"``; callers that refuse NaN say so.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return None


def has_json_type(value: object, types: str | Iterable[str]) -> bool:
    """Whether ``value`` is of the JSON type ``types`` names, or of one of them.

    ``types`` is one name or several; ``"any"`` accepts everything. An unknown name
    raises :class:`ValueError` (a typo must not accept every value).
    """
    names = (types,) if isinstance(types, str) else tuple(types)
    found = json_type_of(value)
    for name in names:
        if name == "any":
            return True
        if name not in JSON_TYPES:
            raise ValueError(f"unknown JSON type {name!r}; expected one of {', '.join(JSON_TYPES)}")
        if name == found or (name == "number" and found == "integer"):
            return True
    return False
