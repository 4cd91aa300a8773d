"""`sanctum seals --json` carries each Seal's metadata, as strict JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.helpers import APPROVE, sanctum, write_ritual


def _strict(line: str) -> Any:
    def refuse(word: str) -> Any:
        raise AssertionError(f"not strict JSON: {word}")

    return json.loads(line, parse_constant=refuse)


def test_every_row_has_the_seal_s_metadata(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    args = ["run", str(ritual), "-i", "name=Ada", "--as", "alice", "--invocation", "m1"]
    ran = sanctum(args, tmp_path)
    assert ran.returncode == 3, ran.stderr
    listed = sanctum(["seals", "--invocation", "m1", "--json"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [_strict(line) for line in listed.stdout.splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["metadata"]["mandate_principal"] == "alice"
        assert row["metadata"]["ritual"]["path"] == str(ritual.resolve())
        assert row["metadata"]["ritual"]["sha256"].startswith("sha256:")
    assert rows[-1]["metadata"]["interrupt"] == rows[-1]["interrupt"]
    assert rows[-1]["metadata"]["parent"] == rows[0]["seal_id"]


def test_metadata_is_made_json_safe() -> None:
    from sanctum.api import plain

    assert plain({"a": (1, float("nan")), 2: {"b": frozenset({3})}}) == {
        "a": [1, "NaN"],
        "2": {"b": [3]},
    }
