"""Looking at ritual files without performing them: validate, graph, schema, watch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sanctum.api._files import special_file_problem
from sanctum.api._results import ritual_digest
from sanctum.errors import FileProblem, RitualFileError

__all__ = ["code_references", "graph", "schema", "schema_text", "validate", "watch"]


def validate(path: str | Path, *, resolve: bool = False) -> list[FileProblem]:
    """Every problem of a ritual file, or of a ``NAME.test.yaml`` test file.

    A ritual file is loaded and compiled with placeholders (no user code runs unless
    ``resolve``); a test file is read and checked against the ritual it names. A named
    pipe or a device is refused without being read.

    Args:
        path: The file.
        resolve: Also import the Python code a ritual file names (runs code).

    Returns:
        The problems in file order, each printable as ``path:line:column: message``;
        empty when the file is sound.
    """
    from sanctum.ritualfile import load

    target = Path(path)
    test_file = target.name.endswith(".test.yaml")
    special = special_file_problem(target, what="test file" if test_file else "ritual file")
    if special is not None:
        return [special]
    try:
        if test_file:
            from sanctum.ritualfile.testcases import load_test_file

            load_test_file(target)
            return []
        return load(target).check(resolve=resolve)
    except RitualFileError as exc:
        return list(exc.problems)


def code_references(path: str | Path) -> list[str]:
    """The ``module:function`` names a ritual file gives (``call:``, Python reducers).

    ``validate`` without ``resolve`` finds their modules without importing them, so a
    misspelt *function* shows only when resolving; the command line says so when this
    is not empty.

    Returns:
        The references in file order; empty for a test file or a file that cannot be
        loaded.
    """
    from sanctum.ritualfile import load

    if Path(path).name.endswith(".test.yaml"):
        return []
    try:
        return [reference for _, reference in load(path).code_references()]
    except RitualFileError:
        return []


def graph(path: str | Path, format: str = "mermaid") -> str:
    """A ritual file's graph as Mermaid (renders on GitHub) or Graphviz dot source.

    Args:
        path: The ritual file.
        format: ``"mermaid"`` or ``"dot"``.

    Returns:
        The diagram's text, ending with a newline.

    Raises:
        RitualFileError: If the file is missing, no regular file, or malformed.
        ValueError: For an unknown format.
    """
    from sanctum.ritualfile import load, ritual_graph

    return ritual_graph(load(path).spec, format)


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ritual files, for editors."""
    from sanctum.ritualfile import ritual_json_schema

    return ritual_json_schema()


def schema_text() -> str:
    """The JSON Schema as ``schema/ritual.schema.json`` holds it, byte for byte.

    Sorted keys, two-space indent, UTF-8 text, one final newline: what
    ``sanctum schema`` prints and ``-o`` writes, so regenerating the checked-in copy
    through the command line keeps the drift test green.
    """
    from sanctum.ritualfile.schema import schema_text as text

    return text()


def watch(path: str | Path, *, debounce: int = 400) -> Iterator[Path]:
    """Yield ``path`` now, then each time its content changes (a save, a replace).

    The file's state decides, not the events: a save between the first yield and the
    watcher starting is still seen, and a touch that leaves the content alone is not.
    Stops when the consumer stops iterating (or on Ctrl-C, which passes through).

    Args:
        path: The ritual file.
        debounce: Milliseconds to wait for a burst of events to settle.

    Raises:
        RitualFileError: If ``path`` is a named pipe, a device or a socket.
    """
    import os

    from watchfiles import watch as changes_of

    from sanctum.api._files import check_regular_file

    target = Path(path)
    check_regular_file(target)  # a named pipe: reading it (to fingerprint it) never ends
    real = os.path.realpath(target)

    def fingerprint() -> tuple[int, str] | None:
        try:
            return target.stat().st_mtime_ns, ritual_digest(target)
        except OSError:
            return None

    seen = fingerprint()
    yield target
    for _changes in changes_of(
        target.resolve().parent,
        watch_filter=lambda _change, changed: os.path.realpath(changed) == real,
        debounce=debounce,
        step=50,
        rust_timeout=500,
        yield_on_timeout=True,
    ):
        now = fingerprint()
        if now == seen:
            continue
        seen = now
        yield target
