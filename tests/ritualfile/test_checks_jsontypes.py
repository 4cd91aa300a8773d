"""Defaults and enum values of a ritual file are typed by sanctum.jsontypes."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import sanctum.jsontypes
from sanctum.ritualfile import checks
from tests.ritualfile.helpers import problems_of, write


def test_checks_use_the_shared_predicate() -> None:
    assert checks.has_json_type is sanctum.jsontypes.has_json_type
    # the deliberate changes the shared predicate brings: tuples are arrays, any
    # Mapping is an object, and None is null
    assert checks.has_json_type((1, 2), ("array",))
    assert checks.has_json_type(MappingProxyType({}), ("object",))
    assert not checks.has_json_type(True, ("integer", "number"))
    assert not checks.has_json_type(1.0, ("integer",))


def test_defaults_of_the_wrong_type_are_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: typed
        inputs:
          count: {type: integer, default: 1.5}
          flag: {type: number, enum: [1, true]}
        aether:
          total: {reducer: add, default: true}
          items: {reducer: append, default: {}}
          label: {type: string, default: 3}
        entry: a
        sigils:
          a:
            next: END
        """,
    )
    assert problems_of(path) == [
        "4:35: default of input 'count' must be of type integer",
        "5:34: enum value bool True of input 'flag' is not of type number",
        "7:34: default of conduit 'total' must be a number: its reducer add combines "
        "each write with it (got bool True)",
        "8:37: default of conduit 'items' must be a list: its reducer append combines "
        "each write with it (got dict {})",
        "9:34: default of conduit 'label' must be of type string",
    ]
