"""Ritual test cases (``NAME.test.yaml``), performed through :func:`run` and :func:`resume`.

Each case is one :func:`~sanctum.api.run` of the ritual file (inputs from the case, its
oracles scripted, Seals in a MemoryCodex), then one :func:`~sanctum.api.resume` per
update the case lists while the run pauses — the very path ``sanctum run`` takes.
"""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sanctum.api._files import check_regular_file
from sanctum.api._run import resume, run
from sanctum.errors import RitualFileError, SanctumError

if TYPE_CHECKING:
    from sanctum.api._results import RunResult
    from sanctum.ritualfile.testcases import RitualTestCase, TestResult

__all__ = ["check_test_files", "find_test_files", "run_tests"]

RecordMode = Literal["all", "missing"] | None
"""``sanctum test --record`` (all) / ``--record-missing`` (missing), or None: replay."""

_INVOCATION = "sanctum-test"


def find_test_files(paths: Sequence[str | Path]) -> builtins.list[Path]:
    """The ``NAME.test.yaml`` files the paths name.

    A test file stands for itself, a ritual file for its sibling ``NAME.test.yaml``,
    a folder for every test file below it (sorted).

    Raises:
        FileNotFoundError: If a path does not exist, or a ritual has no test file.
        RitualFileError: If a path is a named pipe, a device or a socket.
    """
    found: builtins.list[Path] = []
    for item in paths:
        path = Path(item)
        check_regular_file(path, what="test file" if path.name.endswith(".test.yaml") else "file")
        if path.is_dir():
            found.extend(sorted(path.rglob("*.test.yaml")))
        elif path.name.endswith(".test.yaml"):
            if not path.is_file():
                raise FileNotFoundError(2, "no such test file", str(path))
            found.append(path)
        elif path.is_file():
            sibling = path.with_name(path.name.rsplit(".", 1)[0] + ".test.yaml")
            if not sibling.is_file():
                raise FileNotFoundError(
                    2, f"no test cases for {path} (write them in {sibling.name})", str(sibling)
                )
            found.append(sibling)
        else:
            raise FileNotFoundError(2, "no such file or folder", str(path))
    return list(dict.fromkeys(found))


def check_test_files(files: Sequence[str | Path]) -> None:
    """Read test files (and the rituals they name) strictly, before running any case.

    A malformed test file is bad input, not a failing test: every problem of every
    file is reported at once, each as ``path:line:column: message``.

    Raises:
        RitualFileError: If a test file is malformed or no regular file, names a ritual
            file that does not exist or is no regular file, or that ritual file is
            malformed.
    """
    from sanctum.ritualfile.testcases import check_test_files as check

    check(files)


def run_tests(
    paths: Sequence[str | Path], *, record: RecordMode = None
) -> builtins.list[TestResult]:
    """Run the ritual test cases the paths name (see :func:`find_test_files`).

    Every test file is checked first (:func:`check_test_files`), so a malformed one
    stops the run before any case. ``record`` (re-)records the cassettes of the
    ``cassette:`` cases against the real oracles: ``"all"`` of them, or the
    ``"missing"`` ones; None replays them offline.

    Returns:
        One ``TestResult`` per case, in file and case order.

    Raises:
        RitualFileError: If a test file or the ritual it names is malformed.
        FileNotFoundError: If a path does not exist, or a ritual has no test file.
        RuntimeError: If called from a running event loop.
    """
    files = find_test_files(paths)
    check_test_files(files)
    return asyncio.run(_perform_files(files, record, lenient=False))


def run_test_folder(path: str | Path, *, record: RecordMode = None) -> builtins.list[TestResult]:
    """Run every case of a test file, or of every ``*.test.yaml`` under a folder.

    Unlike :func:`run_tests`, a test file that cannot be read (or names a ritual with
    problems) yields one failed result carrying the ``path:line:column`` messages.

    Raises:
        RuntimeError: If called from a running event loop.
    """
    target = Path(path)
    files = sorted(target.rglob("*.test.yaml")) if target.is_dir() else [target]
    return asyncio.run(_perform_files(files, record, lenient=True))


async def _perform_files(
    files: Sequence[Path], record: RecordMode, *, lenient: bool
) -> builtins.list[TestResult]:
    from sanctum.ritualfile import testcases
    from sanctum.wards.secrets import Secrets

    results: builtins.list[TestResult] = []
    for file in files:
        try:
            spec = testcases.load_test_file(file)
        except RitualFileError as exc:
            if not lenient:
                raise
            results.append(testcases.TestResult(str(file), file.name, False, str(exc), "failed"))
            continue
        if not spec.cases:
            results.append(testcases.no_cases_result(file))
            continue
        ritual = file.parent / spec.ritual
        for case in spec.cases:
            masks = Secrets(spec._secrets)
            results.append(await _perform_case(ritual, case, str(file), record, masks))
    return results


async def _perform_case(
    ritual: Path, case: RitualTestCase, file: str, record: RecordMode, masks: Any
) -> TestResult:
    """One case: a run, then a resume per update while it pauses; judged at the end."""
    from sanctum.codex.memory import MemoryCodex
    from sanctum.ritualfile import load, testcases

    started = time.perf_counter()
    status, message = "done", ""
    aether: dict[str, Any] = {}
    reasons: list[str] = []
    unused = 0
    try:
        tape = testcases.case_cassette(file, case, record)
        loaded = load(ritual)
        masks = loaded.secrets | masks
        oracles = testcases.case_oracles(case)
        store = MemoryCodex()
        common: dict[str, Any] = {"codex": store, "modes": (), "oracles": oracles}
        result = await run(
            loaded, dict(case.inputs), invocation_id=_INVOCATION, cassette=tape, **common
        ).wait()
        updates = list(case.resume)
        while result.status == "paused":
            reasons.extend(_reasons(result))
            if not updates:
                break
            performance = resume(
                _INVOCATION, updates=updates.pop(0), cassette=_next_session(tape), **common
            )
            result = await performance.wait()
        unused = len(updates)
        status, message, aether = _outcome(result)
    except (SanctumError, ValueError, TypeError, RuntimeError) as exc:
        status, message = "failed", f"{type(exc).__name__}: {exc}"
    seen = dict(aether)
    failures = testcases.judge(case, status, message, seen, reasons)
    if unused:
        failures.append(_unused_updates(len(case.resume), unused, status))
    # The engine masked what the run wrote; the expectations, the reasons compared and
    # the case's name come from the test file, and are masked here.
    return testcases.TestResult(
        file=file,
        name=masks.mask_text(case.name),
        passed=not failures,
        message=masks.mask_text("; ".join(failures)),
        status=status,
        duration=time.perf_counter() - started,
        aether=masks.mask(seen),
        secrets=masks or None,
    )


def _unused_updates(listed: int, unused: int, status: str) -> str:
    """Why a case whose ``resume:`` updates were not all used fails.

    Args:
        listed: How many updates the case's ``resume:`` lists.
        unused: How many of them were never given, the run having ended first.
        status: How the run ended (``done``, ``failed``, ``interrupted``).
    """
    used = listed - unused
    updates = "update" if listed == 1 else "updates"
    if not used:
        return (
            f"resume: lists {listed} {updates}, but the run never paused (it ended "
            f"{status}); remove resume: or make the ritual interrupt"
        )
    paused = "once" if used == 1 else f"{used} times"
    return (
        f"resume: lists {listed} {updates}, but the run paused only {paused} (it ended "
        f"{status}); {unused} never used"
    )


def _reasons(result: RunResult) -> builtins.list[str]:
    """The reasons of a pause, in sigil order (one per sigil that paused)."""
    if result.reasons:
        return list(result.reasons.values())[:1]
    return [result.reason or ""]


def _next_session(tape: Any) -> Any:
    """The cassette a resume of the case uses: the same recorder or player."""
    return tape


def _outcome(result: RunResult) -> tuple[str, str, dict[str, Any]]:
    """``(status, message, aether)`` of a case from how its last performance ended."""
    if result.status == "paused":
        return "interrupted", "", dict(result.aether)
    if result.status == "failed":
        return "failed", f"{result.error_type}: {result.error}", {}
    return "done", "", dict(result.aether)
