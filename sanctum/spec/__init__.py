"""The ritual file: a YAML format for Rituals, validated, compiled, drawn and tested.

RitualSpec — the pydantic model of a ritual file. :func:`load_ritual` reads a file
strictly (positions kept for ``path:line:column`` messages), :func:`compile_ritual`
seals it into a Rite through the engine's public API, :func:`check_ritual` lists every
problem without running user code, :func:`ritual_graph` draws it (Mermaid or DOT),
:func:`ritual_json_schema` gives the JSON Schema editors use, and
:func:`run_ritual_tests` runs ``*.test.yaml`` smoke cases. :func:`load_yaml_data` reads
a plain YAML/JSON data document (an input file) with the same strictness.
"""

from sanctum.errors import FileProblem, RitualFileError
from sanctum.spec.compiler import check_ritual, compile_ritual, load_ritual
from sanctum.spec.expressions import ExpressionError
from sanctum.spec.graph import ritual_graph
from sanctum.spec.loader import load_yaml_data
from sanctum.spec.models import RitualSpec
from sanctum.spec.schema import ritual_json_schema
from sanctum.spec.testcases import RitualTestSpec, TestResult, run_ritual_tests

__all__ = [
    "ExpressionError",
    "FileProblem",
    "RitualFileError",
    "RitualSpec",
    "RitualTestSpec",
    "TestResult",
    "check_ritual",
    "compile_ritual",
    "load_ritual",
    "load_yaml_data",
    "ritual_graph",
    "ritual_json_schema",
    "run_ritual_tests",
]
