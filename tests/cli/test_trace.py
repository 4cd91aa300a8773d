"""``sanctum trace show`` and ``render`` on a trace recorded by a real run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sanctum.tracing.timeline import decode_rows, encode_rows
from tests.cli.helpers import APPROVE, invoke, write_ritual


def _recorded(tmp_path: Path) -> Path:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    paused = invoke(
        ["run", str(ritual), "-i", "name=Ada", "--invocation", "t1", "--trace", "t.json"],
        tmp_path,
    )
    assert paused.exit_code == 3
    return tmp_path / "t.json"


def _freeze(value: Any) -> Any:
    """Fix every time and seal id in a trace so its drawing is deterministic."""
    if isinstance(value, dict):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if key == "timeline":  # every Sigil ran 12.5 ms, from 1.0 s after the epoch
                rows = [
                    (
                        n,
                        sigil,
                        10**9,
                        None if end is None else 10**9 + 12_500_000,
                        delta,
                        status,
                        tries,
                    )
                    for n, sigil, _began, end, delta, status, tries in decode_rows(item)
                ]
                frozen[key] = encode_rows(rows)
            elif key in ("duration", "started_at", "ended_at", "timestamp") and item is not None:
                frozen[key] = 0.0125 if key == "duration" else 1.0
            elif key == "seal_id" and item is not None:
                frozen[key] = "SEAL"
            else:
                frozen[key] = _freeze(item)
        return frozen
    if isinstance(value, list):
        return [_freeze(item) for item in value]
    return value


def test_show_golden(tmp_path: Path) -> None:
    trace = _recorded(tmp_path)
    frozen = _freeze(json.loads(trace.read_text(encoding="utf-8")))
    trace.write_text(json.dumps(frozen), encoding="utf-8")
    result = invoke(["trace", "show", str(trace)], tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "trace t1  interrupted  12.5ms\n"
        "├── superstep 1  greet  12.5ms\n"
        "│   └── ✓ greet  completed  12.5ms  → greeting\n"
        "├── superstep 2  approve  —\n"  # the interrupted superstep never finished
        "│   └── ⏸ approve  interrupted  —\n"
        "├── seals [2]\n"
        "│   ├── SEAL  superstep 1\n"
        "│   └── SEAL  superstep 1  (interrupt)\n"
        "└── ⏸ interrupt at approve: Send hello Ada?\n"
    )


def test_render_writes_html(tmp_path: Path) -> None:
    trace = _recorded(tmp_path)
    result = invoke(["trace", "render", str(trace), "-o", "out/t.html"], tmp_path)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "t.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "t1" in page
    assert result.stdout == ""  # the "wrote" line is on stderr, as for graph and schema
    assert result.stderr.splitlines() == ["wrote out/t.html"]


def test_not_a_trace(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[]", encoding="utf-8")
    result = invoke(["trace", "show", "x.json"], tmp_path)
    assert result.exit_code == 2
    assert "not a sanctum trace" in result.stderr
    missing = invoke(["trace", "render", "nope.json"], tmp_path)
    assert missing.exit_code == 2
    assert "no such file: nope.json" in missing.stderr


def test_show_prints_text_the_terminal_cannot_encode_escaped(tmp_path: Path) -> None:
    import subprocess

    from sanctum import END, START, Ritual
    from sanctum.tracing import TraceRecorder
    from tests.cli.helpers import console_script

    trace = tmp_path / "sur.json"
    ritual = Ritual().add_sigil("s", lambda a: {"s": "bad \ud800"})
    ritual.add_edge(START, "s").add_edge("s", END).compile(wards=[TraceRecorder(trace)]).invoke({})
    done = subprocess.run(
        [*console_script(), "trace", "show", str(trace)],
        capture_output=True,
        text=True,
        errors="replace",
        env={**os.environ, "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "bad \\ud800" in done.stdout
    assert "Traceback" not in done.stderr


def test_show_folds_a_long_timeline_unless_all(tmp_path: Path) -> None:
    from sanctum import END, Ritual
    from sanctum.codex import MemoryCodex
    from sanctum.tracing import TraceRecorder

    trace = tmp_path / "long.json"
    ritual = Ritual().add_sigil("tick", lambda a: {"n": a["n"] + 1}).set_entry_point("tick")
    ritual.add_conditional_edge("tick", lambda a: "tick" if a["n"] < 250 else END)
    rite = ritual.compile(recursion_limit=300, codex=MemoryCodex(), wards=[TraceRecorder(trace)])
    rite.invoke({"n": 0})
    folded = invoke(["trace", "show", str(trace)], tmp_path)
    assert folded.exit_code == 0, folded.output
    assert "… 150 supersteps not shown (--all shows every one)" in folded.stdout
    assert "superstep 50 " in folded.stdout
    assert "superstep 51 " not in folded.stdout
    assert "superstep 250 " in folded.stdout
    seals = len(json.loads(trace.read_text(encoding="utf-8"))["seals"])
    assert seals >= 250  # one a superstep
    assert f"├── seals [{seals}]\n" in folded.stdout
    assert f"… {seals - 100} seals not shown (--all shows every one)" in folded.stdout
    assert folded.stdout.count("  superstep ") == 100  # a seal line: "<seal id>  superstep N"
    whole = invoke(["trace", "show", str(trace), "--all"], tmp_path)
    assert whole.exit_code == 0
    assert "not shown" not in whole.stdout
    assert "superstep 51 " in whole.stdout
    assert whole.stdout.count("  superstep ") == seals


HOSTILE_PY = """\
def step(aether):
    return {"out": {"k\\x1b]0;PWNED\\x07\\x1b[2J": "v\\x9b1m", "[bold]x[/bold]": 1, "[/]": 2}}
"""

HOSTILE_RITUAL = """\
sanctum: 1
name: hostile
aether:
  out: {type: object}
entry: step
sigils:
  step:
    call: "hostile_keys_step:step"
    next: END
"""


def test_run_and_show_print_keys_from_the_run_escaped(tmp_path: Path) -> None:
    (tmp_path / "hostile_keys_step.py").write_text(HOSTILE_PY, encoding="utf-8")
    ritual = write_ritual(tmp_path, "hostile.yaml", HOSTILE_RITUAL)
    ran = invoke(["run", str(ritual), "--codex", "memory:", "--trace", "t.json"], tmp_path)
    assert ran.exit_code == 0, ran.output
    shown = invoke(["trace", "show", "t.json"], tmp_path)
    assert shown.exit_code == 0, shown.output
    for out in (ran.stdout, shown.stdout):
        assert "\x1b" not in out
        assert "\x07" not in out
        assert "\x9b" not in out
        assert '── k\\u001b]0;PWNED\\u0007\\u001b[2J = "v\\u009b1m"\n' in out
        assert "── [bold]x[/bold] = 1\n" in out
        assert "── [/] = 2\n" in out
