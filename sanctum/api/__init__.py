"""The facade: load, check, run, resume, list and render — what the command line uses.

A library user may call these too; nothing here draws on a terminal (no typer, no
rich) or reads YAML itself. The functions take typed values (paths, URLs, input
mappings, :class:`OracleOverride` values) and hand back sanctum objects: Omens, Seals,
:class:`InvocationSummary` rows and a :class:`RunResult`. Parsing command-line text
(``KEY=VALUE``, ``--oracle NAME=PROVIDER:MODEL``) is the command line's job.

The way a ``sanctum run`` takes: the CLI parses text into typed values → :func:`run`
→ ``sanctum.ritualfile.load`` / ``bind_inputs`` / ``compile`` → the ritual runner →
the Codex.

Running is a two-part conversation: :func:`run` and :func:`resume` return a
:class:`Performance` — an async iterator of Omens (Omen — a stream event) — whose
:attr:`Performance.result` is set once the iteration ends::

    performance = sanctum.api.run("rituals/hello.yaml", {"name": "Ada"})
    async for omen in performance:
        print(omen)
    print(performance.result.status, performance.result.aether)

Every Seal (Seal — a checkpoint) a run or a resume writes records the ritual file's
path and content hash in its metadata (key ``"ritual"``), so :func:`resume` finds the
file again and refuses to continue when it changed since, unless ``force=True``.
"""

from __future__ import annotations

import importlib
import typing

from sanctum.__about__ import __version__

if typing.TYPE_CHECKING:
    from sanctum.api._batch import BatchLine, BatchOutcome, read_batch, run_batch
    from sanctum.api._faults import OracleFault, classify_oracle_fault, oracle_hint
    from sanctum.api._files import TraceFileError, junit_xml, load_trace, render_trace_file
    from sanctum.api._inspect import code_references, graph, schema, schema_text, validate, watch
    from sanctum.api._manage import (
        InvocationDetail,
        delete_invocation,
        prune_invocations,
        show_invocation,
    )
    from sanctum.api._pending import PendingInvocation, pending
    from sanctum.api._perform import Performance
    from sanctum.api._queue import queue_jobs, queue_resume, submit, work
    from sanctum.api._results import (
        Origin,
        RunResult,
        RunStatus,
        omen_to_dict,
        origin_of,
        plain,
        resume_command,
        ritual_digest,
    )
    from sanctum.api._run import resume, run
    from sanctum.api._stores import (
        CODEX_FORMS,
        DEFAULT_CODEX_PATH,
        MIN_PREFIX,
        codex_path,
        list_invocations,
        list_seals,
        open_codex,
        resolve_invocation,
        seal_history,
    )
    from sanctum.api._testing import check_test_files, find_test_files, run_test_folder, run_tests
    from sanctum.api._warnings import validate_warnings
    from sanctum.codex.base import InvocationSummary, Seal
    from sanctum.errors import RitualInputError
    from sanctum.ritual.mandate import Mandate
    from sanctum.ritualfile.binding import InputText, OracleOverride, load_input_file
    from sanctum.ritualfile.file import RitualFile
    from sanctum.ritualfile.testcases import TestResult
    from sanctum.wards.secrets import Secrets

__all__ = [
    "CODEX_FORMS",
    "DEFAULT_CODEX_PATH",
    "MIN_PREFIX",
    "BatchLine",
    "BatchOutcome",
    "InputText",
    "InvocationDetail",
    "InvocationSummary",
    "Mandate",
    "OracleFault",
    "OracleOverride",
    "Origin",
    "PendingInvocation",
    "Performance",
    "RitualFile",
    "RitualInputError",
    "RunResult",
    "RunStatus",
    "Seal",
    "Secrets",
    "TestResult",
    "TraceFileError",
    "__version__",
    "check_test_files",
    "classify_oracle_fault",
    "code_references",
    "codex_path",
    "delete_invocation",
    "find_test_files",
    "graph",
    "junit_xml",
    "list_invocations",
    "list_seals",
    "load_input_file",
    "load_trace",
    "omen_to_dict",
    "open_codex",
    "oracle_hint",
    "origin_of",
    "pending",
    "plain",
    "prune_invocations",
    "queue_jobs",
    "queue_resume",
    "read_batch",
    "render_trace_file",
    "resolve_invocation",
    "resume",
    "resume_command",
    "ritual_digest",
    "run",
    "run_batch",
    "run_test_folder",
    "run_tests",
    "schema",
    "schema_text",
    "seal_history",
    "show_invocation",
    "submit",
    "validate",
    "validate_warnings",
    "watch",
    "work",
]

_HOMES = {
    "BatchLine": "sanctum.api._batch",
    "BatchOutcome": "sanctum.api._batch",
    "read_batch": "sanctum.api._batch",
    "run_batch": "sanctum.api._batch",
    "OracleFault": "sanctum.api._faults",
    "classify_oracle_fault": "sanctum.api._faults",
    "oracle_hint": "sanctum.api._faults",
    "TraceFileError": "sanctum.api._files",
    "junit_xml": "sanctum.api._files",
    "load_trace": "sanctum.api._files",
    "render_trace_file": "sanctum.api._files",
    "code_references": "sanctum.api._inspect",
    "graph": "sanctum.api._inspect",
    "schema": "sanctum.api._inspect",
    "schema_text": "sanctum.api._inspect",
    "validate": "sanctum.api._inspect",
    "watch": "sanctum.api._inspect",
    "InvocationDetail": "sanctum.api._manage",
    "delete_invocation": "sanctum.api._manage",
    "prune_invocations": "sanctum.api._manage",
    "show_invocation": "sanctum.api._manage",
    "PendingInvocation": "sanctum.api._pending",
    "pending": "sanctum.api._pending",
    "Performance": "sanctum.api._perform",
    "queue_jobs": "sanctum.api._queue",
    "queue_resume": "sanctum.api._queue",
    "submit": "sanctum.api._queue",
    "work": "sanctum.api._queue",
    "Origin": "sanctum.api._results",
    "RunResult": "sanctum.api._results",
    "RunStatus": "sanctum.api._results",
    "omen_to_dict": "sanctum.api._results",
    "origin_of": "sanctum.api._results",
    "plain": "sanctum.api._results",
    "resume_command": "sanctum.api._results",
    "ritual_digest": "sanctum.api._results",
    "resume": "sanctum.api._run",
    "run": "sanctum.api._run",
    "CODEX_FORMS": "sanctum.api._stores",
    "DEFAULT_CODEX_PATH": "sanctum.api._stores",
    "MIN_PREFIX": "sanctum.api._stores",
    "codex_path": "sanctum.api._stores",
    "list_invocations": "sanctum.api._stores",
    "list_seals": "sanctum.api._stores",
    "open_codex": "sanctum.api._stores",
    "resolve_invocation": "sanctum.api._stores",
    "seal_history": "sanctum.api._stores",
    "check_test_files": "sanctum.api._testing",
    "find_test_files": "sanctum.api._testing",
    "run_test_folder": "sanctum.api._testing",
    "run_tests": "sanctum.api._testing",
    "validate_warnings": "sanctum.api._warnings",
    "InvocationSummary": "sanctum.codex.base",
    "Seal": "sanctum.codex.base",
    "RitualInputError": "sanctum.errors",
    "Mandate": "sanctum.ritual.mandate",
    "InputText": "sanctum.ritualfile.binding",
    "OracleOverride": "sanctum.ritualfile.binding",
    "load_input_file": "sanctum.ritualfile.binding",
    "RitualFile": "sanctum.ritualfile.file",
    "TestResult": "sanctum.ritualfile.testcases",
    "Secrets": "sanctum.wards.secrets",
}
"""Where each public name lives. Nothing but the version is imported with the package:
each name's module is imported on first use (PEP 562), so ``sanctum validate`` and
``sanctum --help`` load only what they call (``_inspect``), never the runner, the
stores or the queue."""


def __getattr__(name: str) -> typing.Any:
    """Import a lazily exported name from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sanctum.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazily loaded ones included."""
    return sorted({*globals(), *__all__})
