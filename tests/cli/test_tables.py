"""The tables of ``invocations``, ``seals`` and ``test``: run data printed as text, escaped."""

from __future__ import annotations

import re

from sanctum.cli import _tables
from sanctum.cli._tables import invocations_table, print_table, seals_table
from sanctum.codex.base import InvocationSummary, Seal
from sanctum.ritualfile import TestResult
from tests.cli.render import console, text_of

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""Control characters, less the newline that ends each printed line."""

HOSTILE = "\x1b[2J\x9b1m\x7f"
"""A screen clear, a C1 CSI and DEL."""
E = "\\u001b[2J\\u009b1m\\u007f"
"""How :data:`HOSTILE` is printed."""


def test_the_seals_table_prints_ids_frontiers_and_reasons_escaped() -> None:
    seal = Seal(
        {},
        (f"a{HOSTILE}", "[/]"),
        1,
        timestamp=0.0,
        metadata={"interrupt": {"sigil": "[bold]", "reason": f"ok{HOSTILE}"}},
        seal_id=f"s{HOSTILE}",
    )
    target = console(width=200)
    print_table(target, seals_table(f"inv{HOSTILE}[red]", [seal], 200))
    out = text_of(target)
    assert _CONTROL.findall(out) == []
    assert f"Seals of inv{E}[red]" in out
    assert f"s{E}" in out
    assert f"a{E}, [/]" in out
    assert f"[bold]: ok{E}" in out


def test_the_invocations_table_prints_ids_escaped() -> None:
    summary = InvocationSummary(
        invocation_id=f"i{HOSTILE}[/]",
        seals=1,
        superstep=1,
        frontier=(),
        updated=0.0,
        metadata={"ritual": {"path": f"r{HOSTILE}.yaml"}},
    )
    target = console(width=200)
    print_table(target, invocations_table([summary], 200))
    out = text_of(target)
    assert _CONTROL.findall(out) == []
    assert f"i{E}[/]" in out
    assert f"r{E}.yaml" in out


def test_the_test_table_shows_markup_in_names_and_messages_as_written() -> None:
    results = [
        TestResult(file="t.test.yaml", name="[bold]x[/bold]", passed=True, status="done"),
        TestResult(
            file=f"f{HOSTILE}.test.yaml",
            name=f"[/]{HOSTILE}",
            passed=False,
            message=f"expected [red]{HOSTILE}\nsecond line",
            status="failed",
        ),
    ]
    target = console(width=200)
    target.print(_tables.test_table(results))  # imported by module: pytest would collect it
    out = text_of(target)
    assert _CONTROL.findall(out) == []
    rows = [line.split() for line in out.splitlines()]
    assert ["PASS", "t.test.yaml", "[bold]x[/bold]", "done", "0ms"] in rows
    assert ["FAIL", f"f{E}.test.yaml", f"[/]{E}", "failed", "0ms"] in rows
    assert ["expected", f"[red]{E}"] in rows
    assert ["second", "line"] in rows  # a message keeps its lines
