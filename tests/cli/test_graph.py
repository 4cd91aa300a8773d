"""``sanctum graph``: Mermaid and dot."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import GREET, invoke, write_ritual


def test_mermaid_by_default(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["graph", str(ritual)], tmp_path)
    assert result.exit_code == 0
    assert result.stdout.startswith("flowchart")
    assert "greet" in result.stdout


def test_dot_to_a_file(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["graph", str(ritual), "--format", "dot", "-o", "g.dot"], tmp_path)
    assert result.exit_code == 0
    text = (tmp_path / "g.dot").read_text(encoding="utf-8")
    assert text.startswith("digraph")
    assert "greet" in text


def test_bad_format_and_bad_file(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    bad = invoke(["graph", str(ritual), "--format", "svg"], tmp_path)
    assert bad.exit_code == 2
    assert "'svg' is not one of 'mermaid', 'dot'" in bad.stderr
    assert "Value error" not in bad.stderr
    missing = invoke(["graph", "nope.yaml"], tmp_path)
    assert missing.exit_code == 2
    assert "nope.yaml:1:1:" in missing.stderr
