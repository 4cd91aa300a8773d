"""How new energy folds into each Conduit of the Aether.

Built-in reducers — pure merge functions ``(current, update) -> new``. ``overwrite``
(the default) replaces, ``append`` concatenates lists, ``add`` sums numbers and
``merge_dict`` shallow-merges dicts. Any callable with the same signature is a valid
reducer. Reducers are only called when the Conduit already holds a value; a delta to a
missing key sets it directly. No reducer mutates its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Reducer", "add", "append", "merge_dict", "overwrite"]

Reducer = Callable[[Any, Any], Any]
"""A Conduit's merge function: ``(current, update) -> new value``."""


def overwrite(current: Any, update: Any) -> Any:
    """Replace the current value with the update (the default reducer)."""
    return update


def append(current: Any, update: Any) -> list[Any]:
    """Concatenate the update list after the current list.

    The update must be a list (or tuple) of items to append: wrap single items.
    Returns a new list; neither input is mutated.

    Raises:
        TypeError: If ``update`` is not a list or tuple, or ``current`` is not one.
    """
    if not isinstance(update, (list, tuple)):
        raise TypeError(
            f"append reducer needs a list of items to append, got {type(update).__name__}; "
            "wrap a single item as [item]"
        )
    if not isinstance(current, (list, tuple)):
        raise TypeError(
            f"append reducer needs the current value to be a list, got {type(current).__name__}"
        )
    return [*current, *update]


def add(current: Any, update: Any) -> Any:
    """Sum the update into the current value (numeric accumulation)."""
    return current + update


def merge_dict(current: Any, update: Any) -> dict[Any, Any]:
    """Shallow-merge the update dict over the current dict.

    Keys present in both take the update's value. Returns a new dict; neither input is
    mutated.

    Raises:
        TypeError: If either value is not a mapping.
    """
    if not isinstance(current, Mapping) or not isinstance(update, Mapping):
        raise TypeError(
            "merge_dict reducer needs two mappings, got "
            f"{type(current).__name__} and {type(update).__name__}"
        )
    return {**current, **update}
