"""``sanctum schema``: the ritual JSON Schema, to stdout or a file."""

from __future__ import annotations

import json
from pathlib import Path

from sanctum.ritualfile import ritual_json_schema
from tests.cli.helpers import REPO, invoke


def test_prints_the_schema(tmp_path: Path) -> None:
    result = invoke(["schema"], tmp_path)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == ritual_json_schema()


def test_writes_a_file(tmp_path: Path) -> None:
    result = invoke(["schema", "-o", "s.json"], tmp_path)
    assert result.exit_code == 0
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8")) == ritual_json_schema()
    assert "wrote s.json" in result.stderr


def test_the_file_is_byte_for_byte_the_checked_in_schema(tmp_path: Path) -> None:
    result = invoke(["schema", "-o", "s.json"], tmp_path)
    assert result.exit_code == 0
    checked_in = (REPO / "schema" / "ritual.schema.json").read_bytes()
    assert (tmp_path / "s.json").read_bytes() == checked_in
    assert invoke(["schema"], tmp_path).stdout.encode("utf-8") == checked_in
    assert result.stdout == ""  # "wrote s.json" is on stderr
