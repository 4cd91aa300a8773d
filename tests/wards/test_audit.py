"""AuditWard: one JSON Lines entry per delta, created lazily, never breaking a ritual."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from sanctum.wards import AuditWard


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_writes_one_entry_per_delta_and_passes_the_delta_through(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    ward = AuditWard(path)
    first = {"note": "hello", "count": 1}
    returned = await ward.after_sigil("greet", {"ignored": True}, first)
    await ward.after_sigil("count", {}, {"count": 2})
    assert returned is first
    entries = _lines(path)
    assert [e["sigil"] for e in entries] == ["greet", "count"]
    assert entries[0]["delta"] == {"note": "hello", "count": 1}
    assert set(entries[0]) == {"timestamp", "sigil", "delta"}
    assert isinstance(entries[0]["timestamp"], float)
    assert entries[0]["timestamp"] <= entries[1]["timestamp"]


async def test_file_and_parent_folders_are_created_on_first_write(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "audit.jsonl"
    ward = AuditWard(str(path))
    assert not path.parent.exists()
    await ward.after_sigil("s", {}, {"x": 1})
    assert path.is_file()
    assert len(_lines(path)) == 1


async def test_unserialisable_values_are_stringified(tmp_path: Path) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque-thing"

    path = tmp_path / "audit.jsonl"
    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    delta = {
        "obj": Opaque(),
        "raw": b"\x00bytes",
        "tags": {"b", "a"},
        "pair": (1, 2),
        "nan": math.nan,
        "inf": -math.inf,
        "keys": {1: "one", None: "none", (1, 2): "tuple"},
        "cyclic": cyclic,
        "huge": 10**5000,
    }
    await AuditWard(path).after_sigil("odd", {}, delta)
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text
    assert "Infinity" not in text
    logged = _lines(path)[0]["delta"]
    assert isinstance(logged, dict)
    assert logged["obj"] == "opaque-thing"
    assert logged["raw"] == str(b"\x00bytes")
    assert logged["tags"] == ["a", "b"]
    assert logged["pair"] == [1, 2]
    assert logged["nan"] == "nan"
    assert logged["inf"] == "-inf"
    assert logged["keys"] == {"1": "one", "null": "none", "(1, 2)": "tuple"}
    assert logged["cyclic"] == [1, "<cycle>"]
    assert logged["huge"].startswith("<int of ")


async def test_each_entry_stays_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    await AuditWard(path).after_sigil("s", {}, {"text": "line one\nline two\u2028three"})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["delta"]["text"] == "line one\nline two\u2028three"


async def test_appends_to_an_existing_trail(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"timestamp": 0, "sigil": "old", "delta": {}}\n', encoding="utf-8")
    await AuditWard(path).after_sigil("new", {}, {})
    assert [e["sigil"] for e in _lines(path)] == ["old", "new"]


async def test_a_folder_in_the_way_is_an_oserror_naming_the_path(tmp_path: Path) -> None:
    blocked = tmp_path / "audit.jsonl"
    blocked.mkdir()
    with pytest.raises(OSError, match=r"audit\.jsonl"):
        await AuditWard(blocked).after_sigil("s", {}, {"x": 1})


async def test_in_a_rite_every_applied_delta_is_logged_in_order(tmp_path: Path) -> None:
    from sanctum import END, START, Ritual

    ritual = Ritual()
    ritual.add_sigil("one", lambda aether: {"n": 1})
    ritual.add_sigil("two", lambda aether: {"n": aether["n"] + 1, "odd": object()})
    ritual.add_edge(START, "one").add_edge("one", "two").add_edge("two", END)
    path = tmp_path / "runs" / "audit.jsonl"
    result = await ritual.compile(wards=[AuditWard(path)]).ainvoke({})
    assert result["n"] == 2
    entries = _lines(path)
    assert [(e["sigil"], e["delta"]["n"]) for e in entries] == [("one", 1), ("two", 2)]
    assert str(entries[1]["delta"]["odd"]).startswith("<object object at")


# --------------------------------------------------------------------------- check


def test_check_creates_nothing_for_a_writable_path(tmp_path: Path) -> None:
    ward = AuditWard(tmp_path / "runs" / "audit.jsonl")
    ward.check()
    assert list(tmp_path.iterdir()) == []  # the file still appears on the first write


def test_check_refuses_a_folder(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError, match=r"is a folder; name a file such as .*audit\.jsonl"):
        AuditWard(tmp_path).check()


def test_check_refuses_a_file_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match="plain is a file, not a folder"):
        AuditWard(tmp_path / "plain" / "sub" / "audit.jsonl").check()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere"
)
def test_check_refuses_a_folder_it_may_not_write(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="is not writable"):
            AuditWard(locked / "audit.jsonl").check()
    finally:
        locked.chmod(0o700)
