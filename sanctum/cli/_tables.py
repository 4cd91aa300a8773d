"""Tables for people: invocations and seals (rich is imported by the caller's command)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.table import Table

if TYPE_CHECKING:
    from sanctum.codex.base import InvocationSummary, Seal
    from sanctum.spec import TestResult

__all__ = [
    "format_time",
    "invocation_row",
    "invocations_table",
    "seal_row",
    "seals_table",
    "test_table",
]


def format_time(epoch: float) -> str:
    """Epoch seconds as local ``MM-DD HH:MM:SS``."""
    return time.strftime("%m-%d %H:%M:%S", time.localtime(epoch))


def _ritual_of(metadata: Mapping[str, Any]) -> str:
    record = metadata.get("ritual")
    if isinstance(record, Mapping) and isinstance(record.get("path"), str):
        return str(record["path"])
    return ""


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
    """One invocation as JSON-ready data."""
    interrupt = summary.metadata.get("interrupt")
    return {
        "invocation_id": summary.invocation_id,
        "ritual": _ritual_of(summary.metadata) or None,
        "status": summary.status,
        "supersteps": summary.superstep,
        "seals": summary.seals,
        "frontier": list(summary.frontier),
        "updated": summary.updated,
        "reason": interrupt.get("reason") if isinstance(interrupt, Mapping) else None,
    }


def invocations_table(summaries: Sequence[InvocationSummary]) -> Table:
    """Recent invocations: id, ritual, status, supersteps, last update."""
    table = Table(title="Invocations", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("invocation", style="bold", no_wrap=True)
    table.add_column("ritual", no_wrap=True, overflow="ellipsis", ratio=1)
    table.add_column("status", no_wrap=True, min_width=10)
    table.add_column("steps", justify="right", no_wrap=True, min_width=5)
    table.add_column("updated", no_wrap=True, min_width=14)
    colours = {"done": "green", "paused": "yellow", "incomplete": "red"}
    for summary in summaries:
        status = summary.status
        table.add_row(
            summary.invocation_id,
            _display_path(_ritual_of(summary.metadata)),
            f"[{colours.get(status, 'white')}]{status}[/]",
            str(summary.superstep),
            format_time(summary.updated),
        )
    return table


def seal_row(seal: Seal) -> dict[str, Any]:
    """One Seal as JSON-ready data (the Aether left out; see ``--values``)."""
    interrupt = seal.interrupt
    return {
        "seal_id": seal.seal_id,
        "superstep": seal.superstep,
        "frontier": list(seal.frontier),
        "timestamp": seal.timestamp,
        "parent": seal.parent,
        "interrupt": dict(interrupt) if interrupt is not None else None,
    }


def seals_table(invocation_id: str, seals: Sequence[Seal]) -> Table:
    """An invocation's history: seal id, superstep, frontier, time, interrupt reason."""
    table = Table(
        title=f"Seals of {invocation_id}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False
    )
    table.add_column("seal", style="bold", no_wrap=True)
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("frontier", overflow="fold")
    table.add_column("time", no_wrap=True)
    table.add_column("interrupt", overflow="fold")
    for seal in seals:
        interrupt = seal.interrupt
        reason = ""
        if interrupt is not None:
            reason = f"{interrupt.get('sigil', '')}: {interrupt.get('reason', '')}"
            reason = reason if len(reason) <= 40 else reason[:39] + "…"
        table.add_row(
            seal.seal_id,
            str(seal.superstep),
            ", ".join(seal.frontier) or "END",
            format_time(seal.timestamp),
            reason,
            style="yellow" if interrupt is not None else None,
        )
    return table


def test_table(results: Sequence[TestResult]) -> Table:
    """Ritual test cases: pass/fail, file, case, status, time, and why a case failed."""
    table = Table(title="Ritual tests", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column("file", no_wrap=True)
    table.add_column("case", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    for result in results:
        mark = "[green]PASS[/]" if result.passed else "[bold red]FAIL[/]"
        table.add_row(
            mark,
            _display_path(result.file),
            result.name,
            result.status,
            f"{result.duration * 1000:.0f}ms",
        )
        if not result.passed and result.message:
            table.add_row("", "", f"[red]{_escape(result.message)}[/]", "", "")
    return table


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
