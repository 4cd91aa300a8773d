"""``sanctum schema``: the ritual JSON Schema, to stdout or a file."""

from __future__ import annotations

import json
from pathlib import Path

from sanctum.ritualfile import ritual_json_schema
from tests.cli.helpers import invoke


def test_prints_the_schema(tmp_path: Path) -> None:
    result = invoke(["schema"], tmp_path)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == ritual_json_schema()


def test_writes_a_file(tmp_path: Path) -> None:
    result = invoke(["schema", "-o", "s.json"], tmp_path)
    assert result.exit_code == 0
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8")) == ritual_json_schema()
    assert "wrote s.json" in result.stderr
