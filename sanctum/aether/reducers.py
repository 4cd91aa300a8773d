"""How new energy folds into each Conduit of the Aether.

Built-in reducers — pure merge functions ``(current, update) -> new``. ``overwrite``
(the default) replaces, ``append`` concatenates lists, ``add`` sums numbers and
``merge_dict`` shallow-merges dicts. Any callable with the same signature is a valid
reducer. Reducers are only called when the Conduit already holds a value; a delta to a
missing key sets it directly. No reducer mutates its inputs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Reducer", "add", "append", "appended_from", "merge_dict", "overwrite"]

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
    result = [*current, *update]
    _note_append(result, current)
    return result


_PROVENANCE_SIZE = 32
_provenance: OrderedDict[int, tuple[list[Any], Any, int]] = OrderedDict()
_provenance_lock = threading.Lock()


def _note_append(result: list[Any], current: Any) -> None:
    """Remember that ``result`` is ``current`` (then ``len(current)`` long) plus items.

    The entry holds ``result`` itself, so its ``id`` cannot be reused while remembered;
    only the latest :data:`_PROVENANCE_SIZE` results are kept.
    """
    with _provenance_lock:
        _provenance[id(result)] = (result, current, len(current))
        if len(_provenance) > _PROVENANCE_SIZE:
            _provenance.popitem(last=False)


def appended_from(value: Any) -> tuple[Any, int] | None:
    """The list :func:`append` built ``value`` from, and that list's length then.

    Returns ``(current, length)`` when ``value`` is one of the latest results of
    :func:`append` (so its first ``length`` items are ``current``'s items, the very
    same objects), else None. A Codex uses it to store only the new items of a
    transcript without comparing its whole prefix.
    """
    entry = _provenance.get(id(value))
    if entry is None or entry[0] is not value:
        return None
    return entry[1], entry[2]


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
