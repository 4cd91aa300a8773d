"""SqliteCodex passes the conformance suite, plus file-level behaviour."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sanctum.codex import Codex, SealError, SqliteCodex
from sanctum.codex._sqlite_schema import MIGRATIONS
from tests.codex.conformance import CodexConformance, Reopen, make_seal
from tests.codex.crash import kill_and_resume, partial_run, race
from tests.codex.cycle_worker import expected_final


@pytest.fixture
async def codex(tmp_path: Path) -> AsyncIterator[Codex]:
    store = SqliteCodex(tmp_path / "codex.db")
    yield store
    await store.aclose()


@pytest.fixture
def reopen() -> Reopen:
    def again(codex: Codex) -> Codex:
        assert isinstance(codex, SqliteCodex)
        return SqliteCodex(codex.path)

    return again


class TestSqliteConformance(CodexConformance):
    """The shared suite, on SqliteCodex."""


async def test_file_and_schema_are_created_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    codex = SqliteCodex(path)
    assert not path.exists()
    assert await codex.get("inv") is None
    assert path.exists()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    names = [row[0] for row in db.execute("SELECT name FROM sanctum_migrations")]
    assert names == [fn.__name__ for fn in MIGRATIONS]
    db.close()
    await codex.aclose()


async def test_history_survives_a_new_object(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    first = SqliteCodex(path)
    seals = [make_seal(i, {"messages": list(range(i))}) for i in range(1, 4)]
    for seal in seals:
        await first.put("inv", seal)
    await first.aclose()
    second = SqliteCodex(str(path))
    assert await second.list("inv") == seals
    await second.aclose()


async def test_a_seal_is_committed_when_put_returns(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    codex = SqliteCodex(path)
    seal = make_seal(1, {"x": "committed"})
    await codex.put("inv", seal)
    # Another connection (as another process would) sees it while the codex stays open.
    db = sqlite3.connect(path)
    assert db.execute("SELECT seal_id FROM sanctum_seals").fetchall() == [(seal.seal_id,)]
    db.close()
    await codex.aclose()


async def test_conversation_storage_grows_linearly(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    codex = SqliteCodex(path, synchronous="NORMAL")
    messages: list[dict[str, str]] = []
    prev: str | None = None
    for step in range(1, 201):
        messages.append({"role": "user", "content": f"{step:05d}" + "m" * 1000})
        seal = make_seal(step, {"messages": messages, "turn": step}, parent=prev)
        await codex.put_next("inv", seal, expected_latest=prev)
        prev = seal.seal_id
    await codex.aclose()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stored = db.execute("SELECT sum(length(body)) FROM sanctum_values").fetchone()[0]
    db.close()
    message_bytes = sum(len(m["content"]) + len(m["role"]) for m in messages)
    assert stored < 1.2 * message_bytes  # the transcript is kept once, not 200 times
    assert path.stat().st_size < 3 * message_bytes
    reopened = SqliteCodex(path)
    history = await reopened.list("inv")
    assert [len(s.aether["messages"]) for s in history] == list(range(1, 201))
    assert history[-1].aether["messages"] == messages
    await reopened.aclose()


async def test_unchanged_values_are_not_stored_again(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    codex = SqliteCodex(path)
    document = "d" * 50_000
    prev: str | None = None
    for step in range(1, 21):
        seal = make_seal(step, {"document": document, "step": step}, parent=prev)
        await codex.put_next("inv", seal, expected_latest=prev)
        prev = seal.seal_id
    await codex.aclose()
    db = sqlite3.connect(path)
    stored = db.execute("SELECT sum(length(body)) FROM sanctum_values").fetchone()[0]
    db.close()
    assert stored < 51_000


async def test_foreign_sqlite_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)")
    db.execute("INSERT INTO orders (item) VALUES ('tea')")
    db.commit()
    db.close()
    before = path.read_bytes()
    codex = SqliteCodex(path)
    with pytest.raises(SealError) as caught:
        await codex.put("inv", make_seal(1))
    message = str(caught.value)
    assert str(path) in message
    assert "another application" in message
    assert "--codex" in message
    assert caught.value.location == str(path)
    assert path.read_bytes() == before
    await codex.aclose()


async def test_corrupt_file_names_the_path_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    path.write_bytes(b"this is not a database at all\n" * 200)
    before = path.read_bytes()
    codex = SqliteCodex(path)
    with pytest.raises(SealError) as caught:
        await codex.get("inv")
    message = str(caught.value)
    assert str(path) in message
    assert "not a SQLite database" in message
    assert "backup" in message
    assert path.read_bytes() == before


async def test_file_from_a_newer_sanctum_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    codex = SqliteCodex(path)
    await codex.put("inv", make_seal(1))
    await codex.aclose()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO sanctum_migrations VALUES ('m999_from_the_future', 0)")
    db.commit()
    db.close()
    with pytest.raises(SealError) as caught:
        await SqliteCodex(path).get("inv")
    assert "newer sanctum" in str(caught.value)
    assert "m999_from_the_future" in str(caught.value)


def _write_m001_file(path: Path) -> None:
    """A codex file exactly as the m001 schema wrote it (before m002_keyed_seals)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE sanctum_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    MIGRATIONS[0](db)
    db.execute("INSERT INTO sanctum_migrations VALUES (?, 0)", (MIGRATIONS[0].__name__,))
    db.execute(
        "INSERT INTO sanctum_values (id, digest, prev, body) VALUES (7, x'01', NULL, ?)",
        ('"' + "d" * 300 + '"',),
    )
    rows = [
        ("old", 1, "o1", 1, '{"parent":null}', '{"doc":7,"n":[1]}', 10),
        ("old", 2, "o2", 2, '{"parent":"o1"}', '{"doc":7,"n":[2]}', 30),
        ("newer", 1, "w1", 1, '{"parent":null}', '{"n":[5]}', 20),
    ]
    for inv, seq, sid, step, meta, aether, written in rows:
        db.execute(
            "INSERT INTO sanctum_seals (invocation_id, seq, seal_id, superstep, timestamp, "
            "frontier, metadata, aether, written) VALUES (?, ?, ?, ?, ?, '[\"think\"]', ?, ?, ?)",
            (inv, seq, sid, step, 1_700_000_000.0 + step, meta, aether, written),
        )
    db.close()


async def test_a_file_from_before_keyed_seals_is_upgraded_and_stays_readable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    _write_m001_file(path)
    codex = SqliteCodex(path)
    history = await codex.list("old")
    assert [s.seal_id for s in history] == ["o1", "o2"]
    assert history[1].aether == {"doc": "d" * 300, "n": 2}
    assert history[1].parent == "o1"
    assert await codex.get_seal("newer", "w1") is not None
    assert [s.invocation_id for s in await codex.invocations()] == ["old", "newer"]
    # The upgraded history goes on: the check still refuses a stale expectation.
    third = make_seal(3, {"doc": "d" * 300, "n": 3}, parent="o2")
    await codex.put_next("old", third, expected_latest="o2")
    with pytest.raises(SealError, match="another writer"):
        await codex.put_next("old", make_seal(3), expected_latest="o2")
    assert [s.seal_id for s in await codex.list("old")] == ["o1", "o2", third.seal_id]
    await codex.aclose()
    db = sqlite3.connect(path)
    names = [row[0] for row in db.execute("SELECT name FROM sanctum_migrations ORDER BY name")]
    assert names == [fn.__name__ for fn in MIGRATIONS]
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert not any("m001" in name for name in tables)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()


async def test_the_successor_of_a_seal_is_written_once_across_objects(tmp_path: Path) -> None:
    # Two objects over one file, each with its own cache of the latest Seal: the
    # table's key refuses the second successor even though neither re-reads first.
    path = tmp_path / "codex.db"
    one, two = SqliteCodex(path), SqliteCodex(path)
    first = make_seal(1)
    await two.put_next("inv", first, expected_latest=None)  # two caches first as its tip
    second = make_seal(2, parent=first.seal_id)
    await one.put_next("inv", second, expected_latest=first.seal_id)
    rival = make_seal(2, {"rival": True}, parent=first.seal_id)
    with pytest.raises(SealError) as caught:
        await two.put_next("inv", rival, expected_latest=first.seal_id)
    assert second.seal_id in str(caught.value)
    assert await two.get_seal("inv", rival.seal_id) is None
    # one's cached tip is still right after two's failed attempt.
    third = make_seal(3, parent=second.seal_id)
    await one.put_next("inv", third, expected_latest=second.seal_id)
    assert [s.seal_id for s in await two.list("inv")] == [
        first.seal_id,
        second.seal_id,
        third.seal_id,
    ]
    await one.aclose()
    await two.aclose()


def test_synchronous_must_be_known(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        SqliteCodex(tmp_path / "x.db", synchronous="OFF")


# ---------------------------------------------------------------- crashes and races


async def test_sigkill_at_random_supersteps_then_resume_gives_the_same_aether(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crash.db"
    turns = 10
    final, killed_after = kill_and_resume(str(path), "crashy", turns, kills=4, seed=20240611)
    assert final == await expected_final(turns), f"killed after supersteps {killed_after}"
    # Every kill struck mid-run, each after more progress than the one before.
    assert killed_after == sorted(set(killed_after)), killed_after
    assert killed_after[0] > 0, killed_after
    assert killed_after[-1] < turns * 3, killed_after
    codex = SqliteCodex(path)
    history = await codex.list("crashy")
    # One unbroken chain: every Seal continues from the one written before it.
    assert [s.parent for s in history] == [None] + [s.seal_id for s in history[:-1]]
    assert history[-1].frontier == ("__end__",)  # END: the run finished
    assert history[-1].aether == final
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    await codex.aclose()


async def test_two_processes_resuming_at_once_exactly_one_continues(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    turns = 6
    assert partial_run(str(path), "contested", turns, seals=2) == 2
    results = race(str(path), "contested", turns, tmp_path / "go")
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 3], results
    loser = next(out for code, out, _ in results if code == 3)
    assert "SEALERROR" in loser
    assert "contested" in loser
    assert "another" in loser
    codex = SqliteCodex(path)
    history = await codex.list("contested")
    # The history never forks: one chain, the winner's Seals after the seeded two.
    assert [s.parent for s in history] == [None] + [s.seal_id for s in history[:-1]]
    assert [s.superstep for s in history] == list(range(1, turns * 3 + 1))
    assert history[-1].aether == await expected_final(turns)
    await codex.aclose()


async def test_a_non_str_key_is_refused_even_when_its_text_matches_the_previous_seal(
    tmp_path: Path,
) -> None:
    from sanctum.codex.base import Seal
    from sanctum.codex.sqlite import SqliteCodex
    from sanctum.errors import SealError

    codex = SqliteCodex(tmp_path / "keys.db")
    try:
        first = Seal({"m": {"1": "a"}}, ("x",), 1, seal_id="s1")
        await codex.put_next("inv", first, expected_latest=None)
        second = Seal({"m": {1: "a"}}, ("x",), 2, metadata={"parent": "s1"}, seal_id="s2")
        with pytest.raises(SealError, match="int key"):
            await codex.put_next("inv", second, expected_latest="s1")
        assert [s.seal_id for s in await codex.list("inv")] == ["s1"]
    finally:
        await codex.aclose()


async def test_the_codex_folder_is_created_as_the_command_line_does(tmp_path: Path) -> None:
    from sanctum.codex import SqliteCodex

    target = tmp_path / ".sanctum" / "deeper" / "codex.db"
    codex = SqliteCodex(str(target))
    await codex.put("inv", make_seal(1))
    assert target.is_file()
    await codex.aclose()
    (tmp_path / "blocker").write_text("x", encoding="utf-8")
    blocked = SqliteCodex(str(tmp_path / "blocker" / "codex.db"))
    with pytest.raises(SealError, match=r"blocker/codex\.db.*cannot be created"):
        await blocked.put("inv", make_seal(1))
