"""Trace files (load, render), special files, and JUnit XML reports of ritual tests."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanctum.errors import FileProblem, RitualFileError, TraceFileError
from sanctum.ritualfile.binding import special_file_kind

if TYPE_CHECKING:
    from sanctum.ritualfile import TestResult
    from sanctum.wards.secrets import Secrets

__all__ = [
    "TraceFileError",
    "check_regular_file",
    "junit_xml",
    "load_trace",
    "render_trace_file",
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
