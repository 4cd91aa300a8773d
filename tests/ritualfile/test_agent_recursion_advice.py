"""An `agent:` loop of a ritual file that reaches its recursion limit advises the YAML
keys that fix it (`max_turns:`, `recursion_limit:`), not the Python API."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli.helpers import sanctum

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "approval"


def test_the_inner_recursion_limit_names_the_agent_keys(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "approval")
    ritual = tmp_path / "approval" / "ticket.yaml"
    text = ritual.read_text(encoding="utf-8")
    for old, new in (("      max_turns: 4\n", "      recursion_limit: 3\n"), ("[write]", "[]")):
        assert old in text
        text = text.replace(old, new)
    ritual.write_text(text, encoding="utf-8")
    done = sanctum(["run", str(ritual), "--as", "a", "--role", "support"], tmp_path)
    assert done.returncode == 1
    assert "of circle 'work' reached the recursion limit of 3 supersteps" in done.stderr
    assert (
        "Give sigil 'work' a turn budget (`max_turns:` under its `agent:`, after which it "
        "answers without spells), or raise `recursion_limit:` under its `agent:` (now 3)"
    ) in done.stderr
    assert "compile(recursion_limit" not in done.stderr
