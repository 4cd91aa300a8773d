"""A unique prefix of 8+ characters names an invocation wherever one is taken."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sanctum.codex.base import Seal
from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import SealError
from tests.cli.helpers import APPROVE, invoke, sanctum, write_ritual

TWINS = ("abcdef0123456789aaaa", "abcdef0123456789bbbb")


def _paused(cwd: Path, ident: str) -> None:
    ritual = write_ritual(cwd, "approve.yaml", APPROVE)
    ran = sanctum(["run", str(ritual), "-i", "name=Ada", "--invocation", ident], cwd)
    assert ran.returncode == 3, ran.stderr


def _seed_twins(directory: Path) -> None:
    async def write() -> None:
        codex = SqliteCodex(directory / ".sanctum" / "codex.db")
        for n, ident in enumerate(TWINS):
            seal = Seal({"n": n}, (), 1, timestamp=1_700_000_000.0 + n, seal_id=f"s{n}")
            await codex.put(ident, seal)
        await codex.aclose()

    (directory / ".sanctum").mkdir()
    asyncio.run(write())


def test_resume_takes_a_prefix_and_continues_the_whole_id(tmp_path: Path) -> None:
    ident = "0123456789abcdef0123456789abcdef"
    _paused(tmp_path, ident)
    answer = ["-u", "approved=true", "-u", "answered=true", "--json"]
    done = sanctum(["resume", "--invocation", ident[:8], *answer], tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["invocation_id"] == ident
    assert result["aether"]["status"] == "sent"


def test_seals_and_show_take_a_prefix(tmp_path: Path) -> None:
    ident = "feedc0de" + "9" * 24
    _paused(tmp_path, ident)
    seals = invoke(["seals", "--invocation", ident[:10]], tmp_path, env={"COLUMNS": "140"})
    assert seals.exit_code == 0, seals.output
    assert f"Seals of {ident}" in seals.stdout
    rows = invoke(["seals", "--invocation", ident[:8], "--json"], tmp_path).stdout.splitlines()
    assert len(rows) == 2
    shown = invoke(["invocations", "show", ident[:9]], tmp_path)
    assert shown.exit_code == 0, shown.output
    assert f"invocation  {ident}" in shown.stdout.splitlines()


def test_delete_takes_a_prefix_and_names_the_whole_id(tmp_path: Path) -> None:
    ident = "deadbeef" + "1" * 24
    _paused(tmp_path, ident)
    gone = invoke(["invocations", "delete", ident[:8], "--force"], tmp_path)
    assert gone.exit_code == 0, gone.output
    assert f"deleted paused invocation {ident}" in gone.stderr
    assert invoke(["invocations", "--json"], tmp_path).stdout == ""


def test_an_ambiguous_prefix_names_the_candidates_and_touches_nothing(tmp_path: Path) -> None:
    _seed_twins(tmp_path)
    for args in (
        ["seals", "--invocation", "abcdef01"],
        ["invocations", "show", "abcdef0123"],
        ["invocations", "delete", "abcdef01"],
        ["resume", "--invocation", "abcdef01"],
    ):
        result = invoke(args, tmp_path)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("error: 'abcdef01")
        assert "is the start of 2 invocations" in result.stderr
        assert all(ident in result.stderr for ident in TWINS)
        assert "give more of the id" in result.stderr
    listed = invoke(["invocations", "--json"], tmp_path).stdout.splitlines()
    assert sorted(json.loads(line)["invocation_id"] for line in listed) == sorted(TWINS)


def test_a_short_prefix_is_no_name(tmp_path: Path) -> None:
    _seed_twins(tmp_path)
    result = invoke(["seals", "--invocation", "abcdef0"], tmp_path)  # 7 characters
    assert result.exit_code == 2
    assert "unknown invocation 'abcdef0'" in result.stderr


def test_resolve_invocation_from_python(tmp_path: Path) -> None:
    from sanctum import api

    _seed_twins(tmp_path)
    codex = str(tmp_path / ".sanctum" / "codex.db")
    assert asyncio.run(api.resolve_invocation("abcdef0123456789b", codex)) == TWINS[1]
    assert asyncio.run(api.resolve_invocation(TWINS[0], codex)) == TWINS[0]
    assert asyncio.run(api.resolve_invocation("zzzzzzzzzz", codex)) == "zzzzzzzzzz"
    with pytest.raises(SealError, match="is the start of 2 invocations") as caught:
        asyncio.run(api.resolve_invocation("abcdef0123", codex))
    assert caught.value.invocation_id == "abcdef0123"
    assert api.MIN_PREFIX == 8


def test_an_exact_short_id_still_wins(tmp_path: Path) -> None:
    _paused(tmp_path, "t7")
    result = invoke(["seals", "--invocation", "t7", "--json"], tmp_path)
    assert result.exit_code == 0, result.output
