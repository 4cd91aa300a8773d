"""The facade: load, check, run, resume, list and render — what the command line uses.

A library user may call these too; nothing here draws on a terminal (no typer, no
rich). The functions take plain values (paths, URLs, ``key=value`` strings) and hand
back sanctum objects: Omens, Seals, :class:`InvocationSummary` rows and a
:class:`RunResult`.

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

from sanctum.api._files import (
    TraceFileError,
    check_test_files,
    find_test_files,
    junit_xml,
    load_trace,
    render_trace_file,
    run_tests,
)
from sanctum.api._inputs import (
    InputText,
    RitualInputError,
    check_inputs,
    check_updates,
    load_input_file,
    parse_input_pairs,
    parse_oracle_overrides,
)
from sanctum.api._perform import Performance, resume, run
from sanctum.api._results import (
    RunResult,
    RunStatus,
    omen_to_dict,
    resume_command,
    ritual_digest,
)
from sanctum.api._stores import (
    CODEX_FORMS,
    DEFAULT_CODEX_PATH,
    codex_path,
    list_invocations,
    list_seals,
    open_codex,
    seal_history,
)
from sanctum.wards.secrets import Secrets

__all__ = [
    "CODEX_FORMS",
    "DEFAULT_CODEX_PATH",
    "InputText",
    "Performance",
    "RitualInputError",
    "RunResult",
    "RunStatus",
    "Secrets",
    "TraceFileError",
    "check_inputs",
    "check_test_files",
    "check_updates",
    "codex_path",
    "find_test_files",
    "junit_xml",
    "list_invocations",
    "list_seals",
    "load_input_file",
    "load_trace",
    "omen_to_dict",
    "open_codex",
    "parse_input_pairs",
    "parse_oracle_overrides",
    "render_trace_file",
    "resume",
    "resume_command",
    "ritual_digest",
    "run",
    "run_tests",
    "seal_history",
]
