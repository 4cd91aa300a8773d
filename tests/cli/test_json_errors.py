"""Under --json, every command's expected error is also one JSON line on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import invoke


@pytest.mark.parametrize(
    "args",
    [
        ["pending", "--codex", "garbage", "--json"],
        ["invocations", "--codex", "garbage", "--json"],
        ["invocations", "show", "nosuch", "--json"],
        ["seals", "--invocation", "nosuch", "--json"],
    ],
    ids=["pending", "invocations", "show", "seals"],
)
def test_an_error_under_json_is_one_line_on_stdout(tmp_path: Path, args: list[str]) -> None:
    done = invoke(args, tmp_path)
    assert done.exit_code == 2, done.output
    [line] = done.stdout.splitlines()
    error = json.loads(line)
    assert error["kind"] == "error"
    assert error["exit_status"] == 2
    assert error["error"] in done.stderr  # the same words a person reads
    assert done.stderr.count("error:") == 1


def test_run_reports_its_error_once(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(
        "sanctum: 1\nname: r\naether: {a: {}}\nentry: s\n"
        "sigils:\n  s: {set: {a: '1'}, next: END}\n",
        encoding="utf-8",
    )
    done = invoke(["run", "r.yaml", "--input", "nope=1", "--json"], tmp_path)
    assert done.exit_code == 2, done.output
    assert len([x for x in done.stdout.splitlines() if '"kind": "error"' in x]) == 1
