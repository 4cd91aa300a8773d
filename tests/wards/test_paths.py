"""nearest_folder: where an output file would be created, or why it cannot be."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.wards._paths import nearest_folder


def test_the_nearest_existing_folder_is_found(tmp_path: Path) -> None:
    assert nearest_folder(tmp_path / "a" / "b" / "out.jsonl", "audit path") == tmp_path
    (tmp_path / "a").mkdir()
    assert nearest_folder(tmp_path / "a" / "out.jsonl", "audit path") == tmp_path / "a"


def test_a_file_on_the_way_is_named(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match=r"trace path .*/blocker is a file, not a folder"):
        nearest_folder(tmp_path / "blocker" / "deeper" / "t.json", "trace path")
