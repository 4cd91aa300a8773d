"""At 30 columns the lines people copy (ids, resume commands) stay whole."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import invoke

RITUAL = """\
sanctum: 1
name: ask
aether: {approved: {type: boolean, default: false}}
entry: ask
sigils:
  ask: {interrupt: "Light the lanterns?", until: approved, next: END}
"""


def test_a_pause_at_30_columns_keeps_the_id_and_the_command_on_one_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "ask.yaml").write_text(RITUAL, encoding="utf-8")
    ident = "lanterns-0123456789abcdef0123456789"
    done = invoke(["run", "ask.yaml", "--invocation", ident], tmp_path, env={"COLUMNS": "30"})
    assert done.exit_code == 3, done.output
    lines = done.stdout.splitlines()
    assert any(line.startswith("⏸ paused") and line.endswith(ident) for line in lines)
    assert f"resume with: sanctum resume --invocation {ident}" in lines
