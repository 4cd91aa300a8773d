"""Tables for people: invocations, seals and ritual tests (rich is imported by the caller).

Every cell and title is a rich ``Text`` made with :func:`sanctum.cli._view.printable`:
a control character in an invocation id, a frontier or a reason is shown escaped
(``\\u001b``), and rich markup in it (``[bold]``, ``[/]``) is shown as written.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rich import box
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from sanctum.cli._common import printable

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from sanctum.api import InvocationSummary, Seal, TestResult

__all__ = [
    "TestReport",
    "format_time",
    "invocation_row",
    "invocations_table",
    "print_table",
    "seal_row",
    "seals_table",
    "test_table",
]


def format_time(epoch: float) -> str:
    """Epoch seconds as local ``MM-DD HH:MM:SS``."""
    return time.strftime("%m-%d %H:%M:%S", time.localtime(epoch))


def _ritual_of(metadata: Mapping[str, Any]) -> str:
    """The ritual's path as its user knows it (for a queued run: as submitted), or ""."""
    from sanctum.api import origin_of

    return origin_of(metadata).ritual or ""


def _display_path(path: str) -> str:
    """A ritual path relative to the working directory when it lies below it."""
    from pathlib import Path

    if not path:
        return ""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        parts = Path(path).parts
        return path if len(parts) <= 3 else "…/" + "/".join(parts[-2:])


def invocation_row(summary: InvocationSummary) -> dict[str, Any]:
    """One invocation as JSON-ready data.

    ``ritual`` is the path its user knows (a queued run's: as submitted, not the
    worker's private copy); ``queue`` the queue it was submitted to, or None.
    """
    from sanctum.api import origin_of

    interrupt = summary.metadata.get("interrupt")
    origin = origin_of(summary.metadata)
    return {
        "invocation_id": summary.invocation_id,
        "ritual": origin.ritual,
        "queue": origin.queue,
        "status": summary.status,
        "supersteps": summary.superstep,
        "seals": summary.seals,
        "frontier": list(summary.frontier),
        "updated": summary.updated,
        "reason": interrupt.get("reason") if isinstance(interrupt, Mapping) else None,
        "failure": _failure_of(summary.metadata),
    }


def _failure_of(metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    """The failure record a Seal holds (type, message, traceback...), or None."""
    record = metadata.get("failure")
    return dict(record) if isinstance(record, Mapping) else None


def invocations_table(summaries: Sequence[InvocationSummary], width: int = 80) -> Table:
    """Recent invocations: id, status, supersteps, last update, ritual — fitted to ``width``.

    The id and the time are always whole; the ritual's path is shortened, then the
    ritual, steps and status columns are dropped (in that order) when ``width``
    (columns) is too narrow for them.
    """
    colours = {
        "done": "green",
        "paused": "yellow",
        "failed": "red",
        "incomplete": "red",
        "running": "cyan",
    }
    columns = [
        _Column("invocation", [s.invocation_id for s in summaries], style="bold"),
        _Column("status", [s.status for s in summaries], drop=3),
        _Column("steps", [str(s.superstep) for s in summaries], drop=2, justify="right"),
        _Column("updated", [format_time(s.updated) for s in summaries]),
        _Column(
            "ritual",
            [_display_path(_ritual_of(s.metadata)) for s in summaries],
            drop=1,
            shrink_to=10,
        ),
    ]
    styles = [None, [colours.get(s.status, "white") for s in summaries], None, None, None]
    return _fitted_table("Invocations", columns, styles, width)


def _damage(message: str) -> str:
    """The problem out of a damaged-Seal message ("... is damaged: PROBLEM. Nothing ...")."""
    _head, found, rest = message.partition(" is damaged: ")
    return rest.split(". Nothing was changed")[0] if found else message


def seal_row(seal: Seal) -> dict[str, Any]:
    """One Seal as JSON-ready data (the Aether left out; see ``--values``); a Seal that
    cannot be read carries ``damaged`` (the problem) instead of its fields.

    ``metadata`` is the Seal's whole metadata as strict JSON data
    (:func:`sanctum.api.plain`): the ritual record, ``mandate_principal``, a failure,
    a queue worker's ``lease`` and ``queued`` records, and what a caller passed.
    """
    from sanctum.api import plain

    broken = seal.metadata.get("damaged")
    if isinstance(broken, str):
        return {"seal_id": seal.seal_id, "superstep": seal.superstep, "damaged": broken}
    interrupt = seal.interrupt
    return {
        "seal_id": seal.seal_id,
        "superstep": seal.superstep,
        "frontier": list(seal.frontier),
        "timestamp": seal.timestamp,
        "parent": seal.parent,
        "interrupt": dict(interrupt) if interrupt is not None else None,
        "metadata": plain(seal.metadata),
    }


def seals_table(invocation_id: str, seals: Sequence[Seal], width: int = 80) -> Table:
    """An invocation's history: seal id, superstep, time, frontier, interrupt reason.

    Fitted to ``width`` (columns): the seal id and the time are always whole; the
    interrupt reason and the frontier are shortened, then dropped, when too narrow.
    """
    reasons: list[str] = []
    for seal in seals:
        interrupt = seal.interrupt
        reason = ""
        failure = _failure_of(seal.metadata)
        broken = seal.metadata.get("damaged")
        if isinstance(broken, str):
            reason = printable(" ".join(f"damaged: {_damage(broken)}".split()))
            reason = reason if len(reason) <= 40 else reason[:39] + "…"
        elif interrupt is not None or failure is not None:
            if failure is not None:
                reason = f"failed: {failure.get('type', '')}: {failure.get('message', '')}"
            else:
                assert interrupt is not None
                reason = f"{interrupt.get('sigil', '')}: {interrupt.get('reason', '')}"
            reason = printable(" ".join(reason.split()))
            reason = reason if len(reason) <= 40 else reason[:39] + "…"
        reasons.append(reason)
    columns = [
        _Column("seal", [seal.seal_id for seal in seals], style="bold"),
        _Column("step", [str(seal.superstep) for seal in seals], drop=3, justify="right"),
        _Column("time", [format_time(seal.timestamp) for seal in seals]),
        _Column(
            "frontier",
            # a finished run's last Seal has the frontier (END,): shown as END, like ()
            [", ".join(n for n in seal.frontier if n != "__end__") or "END" for seal in seals],
            drop=2,
            shrink_to=8,
        ),
        _Column("interrupt", reasons, drop=1, shrink_to=12),
    ]
    row_styles = [
        "red"
        if _failure_of(seal.metadata) or "damaged" in seal.metadata
        else "yellow"
        if seal.interrupt is not None
        else None
        for seal in seals
    ]
    return _fitted_table(f"Seals of {printable(invocation_id)}", columns, None, width, row_styles)


def test_table(results: Sequence[TestResult]) -> TestReport:
    """Ritual test cases: pass/fail, file, case, status, time, and why a case failed.

    Returns:
        A renderable fitted to the width it is printed at (see :class:`TestReport`).
    """
    return TestReport(results)


class TestReport:
    """The ``sanctum test`` table, laid out for the width it is printed at.

    One line per case — ``PASS``/``FAIL``, file, case, status, time — and under a failed
    case its reason, wrapped at word boundaries across the whole width (indented under
    the case). When the width is short, status, then time, then file are left out (the
    file shrinks with ``…`` first), and a case name is cut with ``…``; the PASS/FAIL
    column is always kept.
    """

    __test__ = False  # not a pytest class, despite its name

    def __init__(self, results: Sequence[TestResult]) -> None:
        self.rows: list[tuple[bool, tuple[str, str, str, str], str]] = []
        for result in results:
            own = getattr(result, "secrets", None)
            masked = own.mask_text if own else str
            why = printable(masked(result.message), lines=True) if not result.passed else ""
            cells = (
                printable(masked(_display_path(result.file))),
                printable(masked(result.name)),
                printable(result.status),
                f"{result.duration * 1000:.0f}ms",
            )
            self.rows.append((result.passed, cells, why))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, 20)
        headers = ("", "file", "case", "status", "time")
        naturals = [
            max([cell_len(headers[i + 1]), *(cell_len(cells[i]) for _, cells, _ in self.rows)])
            for i in range(4)
        ]
        widths = _fit_test_columns(dict(zip(headers[1:], naturals, strict=True)), width)
        yield Text("Ritual tests")
        yield Text("")
        yield _test_line(("", *headers[1:]), widths, header=True)
        yield Text(" " + "─" * (min(width, _line_width(widths)) - 1))
        indent = " " * (1 + 4 + _GAP)
        for passed, cells, why in self.rows:
            mark = ("PASS", "green") if passed else ("FAIL", "bold red")
            yield _test_line((mark, *cells), widths)
            for part in why.splitlines():
                for line in _wrap(part, max(width - len(indent), 12)):
                    yield Text.assemble(indent, (line, "red"))
        yield Text("")


def _fit_test_columns(natural: dict[str, int], width: int) -> dict[str, int]:
    """Widths of the test table's columns that fit in ``width`` (PASS/FAIL and case kept).

    The case name keeps at least :data:`_CASE_FLOOR` cells (or its natural width): for
    that, status is left out first, then the file is cut to 12 cells, then time and
    file are left out; only then is the case name cut to what remains.
    """
    widths = dict(natural)
    floor = min(natural["case"], _CASE_FLOOR)

    def room() -> int:
        return width - (_line_width(widths) - widths["case"])

    for step in ("status", "file:12", "time", "file"):
        if room() >= floor:
            break
        column, _, cut = step.partition(":")
        if cut:
            widths[column] = min(widths[column], max(int(cut), cell_len(column)))
        else:
            del widths[column]
    widths["case"] = max(min(natural["case"], room()), 4)
    return widths


_CASE_FLOOR = 24
"""Cells a case name keeps before the file and time columns give way."""


def _line_width(widths: Mapping[str, int]) -> int:
    """Cells a test line of these columns takes: a space, PASS, then each column."""
    return 1 + 4 + sum(widths.values()) + _GAP * len(widths)


def _test_line(
    cells: Sequence[str | tuple[str, str]], widths: Mapping[str, int], *, header: bool = False
) -> Text:
    """One line of the test table: the mark, then each kept column, cut with ``…``."""
    names = ("file", "case", "status", "time")
    mark = cells[0]
    line = Text(" ")
    line.append(*mark) if isinstance(mark, tuple) else line.append(f"{mark:4}")
    for name, cell in zip(names, cells[1:], strict=True):
        if name not in widths:
            continue
        size = widths[name]
        text = Text(str(cell), style="bold" if header else "")
        text.truncate(size, overflow="ellipsis")
        pad = " " * (size - text.cell_len)
        line.append(" " * _GAP)
        line.append_text(Text(pad) + text if name == "time" else text + Text(pad))
    line.rstrip()
    return line


def _wrap(text: str, width: int) -> list[str]:
    """``text`` wrapped at spaces to ``width`` cells; a longer word is cut into pieces."""
    import textwrap

    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


# --------------------------------------------------------------------------- fitting

_GAP = 2
"""Columns between two table columns (collapsed padding plus the blank divider)."""


@dataclass
class _Column:
    """A table column and its plain cells (made printable), for fitting to a width.

    ``drop`` orders the columns that may be left out when the width is too small
    (1 first; 0 never). ``shrink_to`` lets a column be cut (with an ellipsis) down to
    that many cells before anything is dropped (None: never cut).
    """

    header: str
    cells: list[str]
    drop: int = 0
    shrink_to: int | None = None
    style: str | None = None
    justify: Literal["left", "right"] = "left"

    def __post_init__(self) -> None:
        self.cells = [printable(cell) for cell in self.cells]

    @property
    def natural(self) -> int:
        return max([cell_len(self.header), *(cell_len(c) for c in self.cells)])


def _fit(columns: Sequence[_Column], width: int) -> dict[int, int]:
    """``{column index: width}`` of the columns that fit in ``width`` cells."""
    widths = {i: c.natural for i, c in enumerate(columns)}

    def total() -> int:
        return sum(widths.values()) + _GAP * (len(widths) - 1)

    for index in sorted(
        (i for i, c in enumerate(columns) if c.shrink_to is not None),
        key=lambda i: columns[i].drop or 99,
    ):
        if total() <= width:
            break
        floor = max(columns[index].shrink_to or 0, cell_len(columns[index].header))
        widths[index] = max(floor, min(widths[index], widths[index] - (total() - width)))
    for index in sorted(
        (i for i, c in enumerate(columns) if c.drop), key=lambda i: columns[i].drop
    ):
        if total() <= width:
            break
        del widths[index]
    return widths


def _fitted_table(
    title: str,
    columns: Sequence[_Column],
    cell_styles: Sequence[Sequence[str] | None] | None,
    width: int,
    row_styles: Sequence[str | None] | None = None,
) -> Table:
    """A table of the columns that fit in ``width``, none of them wrapping."""
    widths = _fit(columns, width)
    table = Table(
        title=Text(title),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
    )
    kept = sorted(widths)
    for index in kept:
        column = columns[index]
        table.add_column(
            column.header,
            style=column.style,
            justify=column.justify,
            no_wrap=True,
            overflow="ellipsis",
            width=widths[index],
        )
    count = len(columns[0].cells) if columns else 0
    for row in range(count):
        cells: list[Text] = []
        for index in kept:
            styles = cell_styles[index] if cell_styles is not None else None
            cells.append(Text(columns[index].cells[row], style=styles[row] if styles else ""))
        table.add_row(*cells, style=row_styles[row] if row_styles is not None else None)
    return table


def print_table(console: Console, table: Table) -> None:
    """Print a table; off a terminal, without the padding spaces that end its lines.

    The table is printed at least as wide as it needs (ids and times are never cut
    by a narrow console): the width it was fitted to is the console's.
    """
    needed = console.measure(table).maximum
    options = {"width": max(needed, console.width), "crop": False}
    if console.is_terminal:
        console.print(table, **options)  # type: ignore[arg-type]
        return
    with console.capture() as captured:
        console.print(table, **options)  # type: ignore[arg-type]
    text = "\n".join(line.rstrip() for line in captured.get().splitlines())
    console.file.write(text + "\n")
    console.file.flush()
