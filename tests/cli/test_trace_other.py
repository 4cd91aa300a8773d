"""``--trace FILE`` never silently replaces the trace of another invocation."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import APPROVE, GREET, invoke, write_ritual


def _traced(path: Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8"))["invocation_id"])


def test_run_refuses_another_invocations_trace_without_force(tmp_path: Path) -> None:
    write_ritual(tmp_path, "greet.yaml", GREET)
    first = invoke(["run", "greet.yaml", "--trace", "t.json", "--invocation", "aaa"], tmp_path)
    assert first.exit_code == 0, first.output
    again = invoke(["run", "greet.yaml", "--trace", "t.json", "--invocation", "bbb"], tmp_path)
    assert again.exit_code == 2
    assert again.stderr.splitlines() == [
        "error: --trace t.json holds the trace of invocation aaa, not of this invocation "
        "bbb; name another file, or pass --force to replace it"
    ]
    assert again.stdout == ""
    assert _traced(tmp_path / "t.json") == "aaa"
    forced = invoke(
        ["run", "greet.yaml", "--trace", "t.json", "--invocation", "ccc", "--force"], tmp_path
    )
    assert forced.exit_code == 0, forced.output
    assert _traced(tmp_path / "t.json") == "ccc"


def test_resume_continues_its_own_trace_and_refuses_another(tmp_path: Path) -> None:
    write_ritual(tmp_path, "approve.yaml", APPROVE)
    for ident in ("p1", "p2"):
        paused = invoke(
            [
                "run",
                "approve.yaml",
                "-i",
                "name=Ada",
                "--invocation",
                ident,
                "--trace",
                f"{ident}.json",
            ],
            tmp_path,
        )
        assert paused.exit_code == 3, paused.output
    wrong = invoke(
        ["resume", "--invocation", "p2", "--update", "answered=true", "--trace", "p1.json"],
        tmp_path,
    )
    assert wrong.exit_code == 2
    assert wrong.stderr.splitlines()[-1] == (
        "error: --trace p1.json holds the trace of invocation p1, not of this invocation "
        "p2; name another file, or pass --force to replace it"
    )
    own = invoke(
        ["resume", "--invocation", "p1", "--update", "answered=true", "--trace", "p1.json"],
        tmp_path,
    )
    assert own.exit_code == 0, own.output
    assert _traced(tmp_path / "p1.json") == "p1"
