"""SqliteCodex on hostile media: reads take no write lock, and each failure says its cause.

Real files, real mounts and real processes: a read-only bind mount (and ``chattr +i``,
which stops even root) for read-only media, a file and a folder; another process
holding the write lock; a small tmpfs filled to the brim; a file of another format; a
file damaged where ``PRAGMA quick_check`` sees it. Tests needing ``mount`` or
``chattr`` skip, saying why, where those are not allowed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sanctum.codex import SqliteCodex
from sanctum.errors import CodexUnavailableError, SealError
from tests.codex.conformance import make_seal


async def _fill(path: Path, seals: int = 3) -> list[str]:
    codex = SqliteCodex(path)
    ids: list[str] = []
    parent = None
    for step in range(1, seals + 1):
        seal = make_seal(step, {"n": step, "text": "x" * 300 * step}, parent=parent)
        await codex.put("inv", seal)
        ids.append(seal.seal_id)
        parent = seal.seal_id
    await codex.aclose()
    return ids


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sanctum", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
    )


def _tool(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"`{' '.join(command)}` is not allowed here: {done.stderr.strip()}")


@contextmanager
def _immutable(path: Path) -> Iterator[None]:
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: cannot make a file read-only for root")
    _tool("chattr", "+i", str(path))
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


@contextmanager
def _mounted(*command: str, at: Path) -> Iterator[None]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting needs root and mount(8)")
    _tool(*command)
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(at)], check=False)


async def _reads_work(path: Path, ids: list[str]) -> None:
    codex = SqliteCodex(path)
    try:
        history = [seal async for seal in codex.history("inv", values=False)]
        assert [seal.seal_id for seal in history] == ids
        latest = await codex.get("inv")
        assert latest is not None
        assert latest.seal_id == ids[-1]
        assert [summary.invocation_id for summary in await codex.invocations()] == ["inv"]
    finally:
        await codex.aclose()


async def _write_fails(path: Path, *words: str) -> SealError:
    codex = SqliteCodex(path)
    try:
        with pytest.raises(SealError) as caught:
            await codex.put("inv", make_seal(9))
    finally:
        await codex.aclose()
    message = str(caught.value)
    for word in words:
        assert word in message, message
    assert "not a SQLite database" not in message
    assert "move it aside" not in message
    return caught.value


async def test_a_read_only_filesystem_is_read_and_named_when_written(tmp_path: Path) -> None:
    source, media = tmp_path / "disk", tmp_path / "media"
    source.mkdir()
    media.mkdir()
    ids = await _fill(source / "codex.db")
    with _mounted("mount", "--bind", "-o", "ro", str(source), str(media), at=media):
        path = media / "codex.db"
        before = path.read_bytes()
        await _reads_work(path, ids)
        seals = _run("seals", "--invocation", "inv", "--codex", str(path), cwd=tmp_path)
        assert seals.returncode == 0, seals.stderr
        assert ids[-1] in seals.stdout
        listed = _run("invocations", "--codex", str(path), cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        err = await _write_fails(path, "read-only filesystem", str(path))
        assert not isinstance(err, CodexUnavailableError)
        assert path.read_bytes() == before


async def test_a_read_only_file_is_read_and_named_when_written(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    ids = await _fill(path)
    before = path.read_bytes()
    with _immutable(path):
        await _reads_work(path, ids)
        await _write_fails(path, "the file is read-only")
    assert path.read_bytes() == before


async def test_a_read_only_folder_is_read_and_named_when_written(tmp_path: Path) -> None:
    folder = tmp_path / "shelf"
    folder.mkdir()
    path = folder / "codex.db"
    ids = await _fill(path)
    before = path.read_bytes()
    with _immutable(folder):
        await _reads_work(path, ids)
        await _write_fails(path, f"its folder {folder} is read-only")
    assert path.read_bytes() == before


_HOLD = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT INTO sanctum_migrations (name, applied_at) VALUES ('zz_holder', 0)")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""


def _hold_lock(path: Path, *, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the codex's write lock (it prints "holding" then)."""
    return subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )


async def test_readers_never_wait_for_a_held_write_lock_and_writers_name_the_holder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "codex.db"
    ids = await _fill(path)
    holder = _hold_lock(path, seconds=30)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        began = time.monotonic()
        seals = _run("seals", "--invocation", "inv", "--codex", str(path), cwd=tmp_path)
        assert seals.returncode == 0, seals.stderr
        assert ids[0] in seals.stdout
        assert time.monotonic() - began < 9  # the default lock wait is 10 s: no wait
        codex = SqliteCodex(path, busy_timeout=0.3)
        await _reads_work(path, ids)
        with pytest.raises(CodexUnavailableError) as caught:
            await codex.put_next("inv", make_seal(4, parent=ids[-1]), expected_latest=ids[-1])
        await codex.aclose()
        message = str(caught.value)
        assert "another process holds its write lock" in message
        assert f"pid {holder.pid}" in message
        assert "damaged" not in message
        assert "not a SQLite database" not in message
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    codex = SqliteCodex(path)
    assert [s.seal_id for s in await codex.list("inv")] == ids  # nothing was written
    await codex.aclose()


async def test_a_full_disk_is_named_and_nothing_is_lost(tmp_path: Path) -> None:
    media = tmp_path / "small"
    media.mkdir()
    with _mounted("mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(media), at=media):
        path = media / "codex.db"
        ids = await _fill(path, seals=2)
        filler = media / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass  # the disk is full
        finally:
            os.close(fd)
        codex = SqliteCodex(path)
        big = make_seal(3, {"n": 3, "text": "y" * 200_000}, parent=ids[-1])
        with pytest.raises(CodexUnavailableError) as caught:
            await codex.put("inv", big)
        await codex.aclose()
        assert "the disk is full" in str(caught.value)
        filler.unlink()
        again = SqliteCodex(path)
        assert [s.seal_id for s in await again.list("inv")] == ids
        await again.aclose()


async def test_a_file_of_another_format_is_named_and_never_written(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 40)  # a zip file's start
    before = path.read_bytes()
    codex = SqliteCodex(path)
    for attempt in (codex.get("inv"), codex.put("inv", make_seal(1))):
        with pytest.raises(SealError) as caught:
            await attempt
        assert "not a SQLite database" in str(caught.value)
        assert not isinstance(caught.value, CodexUnavailableError)
    await codex.aclose()
    assert path.read_bytes() == before
    listed = _run("invocations", "--codex", str(path), cwd=tmp_path)
    assert listed.returncode == 2
    assert "not a SQLite database" in listed.stderr


async def test_a_file_that_fails_quick_check_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "codex.db"
    await _fill(path, seals=40)
    import sqlite3

    db = sqlite3.connect(path)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'sanctum_values'"
    ).fetchone()[0]
    db.close()
    data = bytearray(path.read_bytes())
    # Scribble over the cell pointers of the values table's root page: SQLite still
    # opens the file (page 1 is intact), but the b-tree no longer adds up.
    start = (root - 1) * page_size + 12
    data[start : start + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    codex = SqliteCodex(path)
    with pytest.raises(SealError) as caught:
        await codex.put("other", make_seal(1))
    await codex.aclose()
    message = str(caught.value)
    assert "quick_check" in message
    assert "nothing was written" in message
    assert path.read_bytes() == before
    await asyncio.sleep(0)
