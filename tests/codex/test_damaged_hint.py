"""A damaged Seal's message points at the command line's own option, ``--seal``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sanctum.codex import SqliteCodex
from sanctum.errors import SealError
from tests.codex.conformance import make_seal


async def test_a_damaged_middle_seal_names_itself_and_the_seal_option(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    codex = SqliteCodex(path)
    seals = [make_seal(1), make_seal(2), make_seal(3)]
    for seal in seals:
        await codex.put("inv", seal)
    await codex.aclose()
    db = sqlite3.connect(path)
    db.execute("UPDATE sanctum_seals SET frontier = '5' WHERE seal_id = ?", (seals[1].seal_id,))
    db.commit()
    db.close()
    codex = SqliteCodex(path)
    with pytest.raises(SealError) as caught:
        await codex.get_seal("inv", seals[1].seal_id)
    message = str(caught.value)
    assert seals[1].seal_id in message
    assert "frontier" in message
    assert "--seal SEAL_ID" in message
    assert caught.value.seal_id == seals[1].seal_id
    intact = await codex.get_seal("inv", seals[0].seal_id)  # earlier Seals still load
    assert intact is not None
    await codex.aclose()
