"""Trace files and ritual test files (load, render, run, report as JUnit XML); special files."""

from __future__ import annotations

import builtins
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sanctum.errors import FileProblem, RitualFileError, TraceFileError

if TYPE_CHECKING:
    from sanctum.ritualfile import TestResult
    from sanctum.wards.secrets import Secrets

__all__ = [
    "TraceFileError",
    "check_regular_file",
    "check_test_files",
    "find_test_files",
    "junit_xml",
    "load_trace",
    "render_trace_file",
    "run_tests",
    "special_file_kind",
    "special_file_problem",
]


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read a ``.sanctum-trace.json`` file written by ``sanctum run --trace``.

    Returns:
        The trace document (format in :mod:`sanctum.tracing.document`).

    Raises:
        FileNotFoundError: If the file does not exist.
        TraceFileError: If it is not a sanctum trace of a supported version, or no
            regular file (a named pipe, a device).
    """
    from sanctum.tracing.render import load_trace as read

    kind = special_file_kind(path)
    if kind is not None:
        raise TraceFileError(f"{path}: it is {kind}, not a regular file", path=str(path))
    try:
        return read(path)
    except FileNotFoundError:
        raise
    except ValueError as exc:
        raise TraceFileError(str(exc), path=str(path)) from exc


def render_trace_file(path: str | Path, output: str | Path | None = None) -> Path:
    """Render a trace file as one self-contained HTML page.

    Args:
        path: The ``.sanctum-trace.json`` file.
        output: Where to write (default: ``path`` with an ``.html`` suffix).

    Returns:
        The written HTML file's path.

    Raises:
        FileNotFoundError: If the trace does not exist.
        TraceFileError: If it is not a sanctum trace.
        OSError: If the page cannot be written.
    """
    from sanctum.tracing import render_trace

    kind = special_file_kind(path)
    if kind is not None:
        raise TraceFileError(f"{path}: it is {kind}, not a regular file", path=str(path))
    try:
        return render_trace(path, output)
    except FileNotFoundError:
        raise
    except ValueError as exc:
        raise TraceFileError(str(exc), path=str(path)) from exc


# --------------------------------------------------------------------------- special files


def special_file_kind(path: str | Path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a folder.

    Reading a named pipe (FIFO) waits for a writer forever and a device such as
    ``/dev/urandom`` never ends, so sanctum reads only regular files. Looking costs one
    ``stat`` and never blocks.

    Returns:
        ``"a named pipe (FIFO)"``, ``"a character device"``, ``"a block device"``,
        ``"a socket"``, or None for a regular file, a folder or a path that cannot be
        looked at (whoever reads it reports that).
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def special_file_problem(path: str | Path, *, what: str = "ritual file") -> FileProblem | None:
    """The ``path:1:1: cannot read the ritual file: …`` problem of a special file, or None.

    Args:
        path: The file about to be read.
        what: What it should be, for the message (``"ritual file"``, ``"test file"``).
    """
    kind = special_file_kind(path)
    if kind is None:
        return None
    return FileProblem(str(path), 1, 1, f"cannot read the {what}: it is {kind}, not a regular file")


def check_regular_file(path: str | Path, *, what: str = "ritual file") -> None:
    """Refuse a FIFO, a device or a socket before reading it (see :func:`special_file_kind`).

    Raises:
        RitualFileError: ``path:1:1: cannot read the ritual file: it is a named pipe
            (FIFO), not a regular file``.
    """
    problem = special_file_problem(path, what=what)
    if problem is not None:
        raise RitualFileError([problem])


# --------------------------------------------------------------------------- ritual tests


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
    unique: builtins.list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def check_test_files(files: Sequence[str | Path]) -> None:
    """Read test files (and the rituals they name) strictly, before running any case.

    A malformed test file is bad input, not a failing test: every problem of every
    file is reported at once, each as ``path:line:column: message``.

    Raises:
        RitualFileError: If a test file is malformed or no regular file, names a ritual
            file that does not exist or is no regular file, or that ritual file is
            malformed.
    """
    from sanctum.ritualfile import load_ritual
    from sanctum.ritualfile.loader import load_yaml_file
    from sanctum.ritualfile.testcases import load_test_file

    problems: builtins.list[FileProblem] = []
    for item in files:
        file = Path(item)
        special = special_file_problem(file, what="test file")
        if special is not None:  # one found in a folder: reading it would never end
            problems.append(special)
            continue
        try:
            spec = load_test_file(file)
        except RitualFileError as exc:
            problems.extend(exc.problems)
            continue
        ritual = file.parent / spec.ritual
        special = special_file_problem(ritual)
        if special is not None:
            problems.append(special)
            continue
        if not ritual.is_file():
            line, column = load_yaml_file(file).position(("ritual",))
            problems.append(
                FileProblem(
                    str(file),
                    line,
                    column,
                    f"ritual: no such file {ritual} (the path is relative to the test file)",
                )
            )
            continue
        try:
            load_ritual(ritual)
        except RitualFileError as exc:
            problems.extend(exc.problems)
    if problems:
        raise RitualFileError(problems)


def run_tests(
    paths: Sequence[str | Path], *, record: Literal["all", "missing"] | None = None
) -> builtins.list[TestResult]:
    """Run the ritual test cases the paths name (see :func:`find_test_files`).

    Every test file is checked first (:func:`check_test_files`), so a malformed one
    stops the run before any case. ``record`` (re-)records the cassettes of the
    ``cassette:`` cases against the real oracles: ``"all"`` of them, or the
    ``"missing"`` ones; None replays them offline.

    Returns:
        One ``sanctum.ritualfile.TestResult`` per case, in file and case order.

    Raises:
        RitualFileError: If a test file or the ritual it names is malformed.
        FileNotFoundError: If a path does not exist, or a ritual has no test file.
    """
    from sanctum.ritualfile import run_ritual_tests

    files = find_test_files(paths)
    check_test_files(files)
    results: builtins.list[TestResult] = []
    for file in files:
        results.extend(run_ritual_tests(file, record=record))
    return results


_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry at all, even escaped (most C0 controls, lone
surrogates, U+FFFE and U+FFFF)."""


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as a ``\\uXXXX`` escape.

    ElementTree escapes ``<``, ``&`` and quotes but writes ESC or U+0001 as they are,
    which makes the document unreadable to every XML parser.
    """
    return _XML_FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def junit_xml(results: Sequence[TestResult], *, secrets: Secrets | None = None) -> str:
    """The results as a JUnit XML report (one testsuite per test file).

    Names and messages are written with the characters XML 1.0 forbids escaped as
    ``\\uXXXX`` text (:func:`xml_text`), so the report always parses. Every text is
    masked with each result's own ``secrets`` (those of its ritual and test file) and
    with ``secrets`` given here, whatever produced the results.
    """
    from xml.etree import ElementTree as ET

    from sanctum.wards.secrets import Secrets

    root = ET.Element("testsuites", name="sanctum")
    suites: dict[str, ET.Element] = {}
    for result in results:
        masks = (getattr(result, "secrets", None) or Secrets()) | secrets

        def clean(text: str, masks: Secrets = masks) -> str:
            return xml_text(masks.mask_text(text))

        suite = suites.get(result.file)
        if suite is None:
            suite = ET.SubElement(root, "testsuite", name=clean(result.file))
            suites[result.file] = suite
        case = ET.SubElement(
            suite,
            "testcase",
            classname=clean(Path(result.file).name.removesuffix(".yaml").replace(".", "_")),
            name=clean(result.name),
            time=f"{result.duration:.3f}",
        )
        if not result.passed:
            message = clean(result.message)
            failure = ET.SubElement(case, "failure", message=message, type=result.status)
            failure.text = message
    for element in [root, *suites.values()]:
        cases = element.iter("testcase")
        total = failed = 0
        seconds = 0.0
        for case in cases:
            total += 1
            failed += case.find("failure") is not None
            seconds += float(case.get("time", "0"))
        element.set("tests", str(total))
        element.set("failures", str(failed))
        element.set("errors", "0")
        element.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
