"""The ritual file: a YAML format for Rituals, validated, compiled, drawn and tested.

:func:`load` reads a ritual file once — parsed once, hashed once — into a
:class:`RitualFile` that checks it, binds inputs and updates, overrides oracles and
compiles it to a Rite. RitualSpec — the pydantic model of a ritual file.
:func:`load_ritual` reads a file strictly (positions kept for ``path:line:column``
messages), :func:`compile_ritual` seals it into a Rite through the engine's public
API, :func:`check_ritual` lists every problem without running user code,
:func:`ritual_graph` draws it (Mermaid or DOT), :func:`ritual_json_schema` gives the
JSON Schema editors use, and :class:`RitualTestSpec` is the model of a ``*.test.yaml``
file (``sanctum.api.run_tests`` runs its cases). :func:`load_yaml_data` reads
a plain YAML/JSON data document (an input file) with the same strictness.

The names are loaded on first use (PEP 562): ``from sanctum.ritualfile import check_ritual``
imports the compiler but not the test runner, the graph drawer or the JSON Schema, so
``sanctum validate`` starts quickly.
"""

from __future__ import annotations

import importlib
import typing

from sanctum.errors import ExpressionError, FileProblem, RitualFileError

if typing.TYPE_CHECKING:
    from sanctum.ritualfile.binding import InputText, OracleOverride
    from sanctum.ritualfile.compiler import check_ritual, compile_ritual, load_ritual
    from sanctum.ritualfile.file import RitualFile, load
    from sanctum.ritualfile.graph import ritual_graph
    from sanctum.ritualfile.loader import load_yaml_data
    from sanctum.ritualfile.models import RitualSpec
    from sanctum.ritualfile.schema import ritual_json_schema
    from sanctum.ritualfile.testcases import RitualTestSpec, TestResult

__all__ = [
    "ExpressionError",
    "FileProblem",
    "InputText",
    "OracleOverride",
    "RitualFile",
    "RitualFileError",
    "RitualSpec",
    "RitualTestSpec",
    "TestResult",
    "check_ritual",
    "compile_ritual",
    "load",
    "load_ritual",
    "load_yaml_data",
    "ritual_graph",
    "ritual_json_schema",
]

_HOMES = {
    "InputText": "sanctum.ritualfile.binding",
    "OracleOverride": "sanctum.ritualfile.binding",
    "RitualFile": "sanctum.ritualfile.file",
    "load": "sanctum.ritualfile.file",
    "RitualSpec": "sanctum.ritualfile.models",
    "RitualTestSpec": "sanctum.ritualfile.testcases",
    "TestResult": "sanctum.ritualfile.testcases",
    "check_ritual": "sanctum.ritualfile.compiler",
    "compile_ritual": "sanctum.ritualfile.compiler",
    "load_ritual": "sanctum.ritualfile.compiler",
    "load_yaml_data": "sanctum.ritualfile.loader",
    "ritual_graph": "sanctum.ritualfile.graph",
    "ritual_json_schema": "sanctum.ritualfile.schema",
}


def __getattr__(name: str) -> typing.Any:
    """Import a public name from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sanctum.ritualfile' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazily loaded ones included."""
    return sorted({*globals(), *__all__})
