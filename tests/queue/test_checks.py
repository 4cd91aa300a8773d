"""What `submit`, `worker`, `queue` and a queued resume refuse, each in one line."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.cli.helpers import invoke
from tests.queue.harness import RITUAL, fresh_database, query

DEAD = "postgresql://postgres@127.0.0.1:1/x"

BESIDE = """\
sanctum: 1
name: beside
aether:
  out: {default: ""}
entry: a
sigils:
  a: {call: "steps:a", next: END}
"""


def _command(name: str, codex: str) -> list[str]:
    if name == "submit":
        return ["submit", str(RITUAL), "-i", "n=1", "--codex", codex]
    return [name, "--codex", codex]


@pytest.mark.parametrize("command", ["submit", "worker", "queue"])
@pytest.mark.parametrize("codex", [".sanctum/codex.db", "memory:"])
def test_a_codex_that_is_not_postgresql_is_refused_in_one_line(
    tmp_path: Path, command: str, codex: str
) -> None:
    pytest.importorskip("procrastinate")
    result = invoke(_command(command, codex), tmp_path)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"error: a queue needs a PostgreSQL codex: --codex postgresql://user@host:port/dbname "
        f"(not {codex!r}; workers on other machines share it)"
    ]
    assert 'missing "="' not in result.output


@pytest.mark.parametrize("command", ["submit", "worker", "queue"])
def test_a_dead_server_is_one_line_and_status_1(tmp_path: Path, command: str) -> None:
    pytest.importorskip("procrastinate")
    result = invoke(_command(command, DEAD), tmp_path)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: cannot use the PostgreSQL codex at 127.0.0.1:1/x: ")
    assert "pool-1" not in result.output


def test_a_ritual_with_python_code_beside_it_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("procrastinate")
    (tmp_path / "r.yaml").write_text(BESIDE, encoding="utf-8")
    (tmp_path / "steps.py").write_text("def a(aether):\n    return {}\n", encoding="utf-8")
    result = invoke(["submit", "r.yaml", "--codex", DEAD], tmp_path)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "cannot submit r.yaml: it needs Python modules beside it (steps)" in line
    assert "carries only the YAML" in line


def test_a_ritual_with_circles_and_tomes_is_refused(tmp_path: Path) -> None:
    from sanctum.errors import SealError
    from sanctum.queue._jobs import refuse_uncarried

    file = SimpleNamespace(
        path=tmp_path / "r.yaml",
        circles={"inner": object()},
        spec=SimpleNamespace(tomes={"kit": object()}),
        code_references=lambda: [(("sigils", "a", "call"), "os.path:join")],
    )

    with pytest.raises(SealError) as raised:
        refuse_uncarried(file)
    assert "spell folders (tomes: kit) and circle files (inner)" in str(raised.value)
    assert "Python modules" not in str(raised.value)  # os.path is installed, not beside


def test_the_ritual_cache_is_private(tmp_path: Path) -> None:
    from sanctum.errors import SealError
    from sanctum.queue._app import materialise, private_folder

    made = private_folder(None)
    try:
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
        assert made.stat().st_uid == os.getuid()
        path = materialise("x.yaml", "sanctum: 1\n", made)
        assert path.read_text(encoding="utf-8") == "sanctum: 1\n"
        assert path.parent.parent == made
        assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0
    finally:
        import shutil

        shutil.rmtree(made)
    given = private_folder(tmp_path / "cache" / "rituals")
    assert stat.S_IMODE(given.stat().st_mode) == 0o700
    open_one = tmp_path / "open"
    open_one.mkdir()
    open_one.chmod(0o777)
    with pytest.raises(SealError, match="open to other users"):
        private_folder(open_one)
    link = tmp_path / "link"
    link.symlink_to(given)
    with pytest.raises(SealError, match="not a folder"):
        private_folder(link)


@pytest.mark.postgres
def test_a_second_resume_while_a_segment_is_queued_or_running_is_refused(
    tmp_path: Path,
) -> None:
    from sanctum import api

    with fresh_database() as url:
        (ident,) = api.submit(RITUAL, [{"n": 1}], codex=url)
        args = ["resume", "--invocation", ident, "--executor", "queue", "--codex", url]
        for status in ("todo", "doing"):
            changed = query(url, "UPDATE procrastinate_jobs SET status = %s RETURNING id", status)
            assert len(changed) == 1
            result = invoke([*args, "-u", "approved=true"], tmp_path)
            assert result.exit_code == 1, result.output
            assert (
                f"a start or resume of invocation {ident} is already queued or running; wait for it"
            ) in result.output
            assert query(url, "SELECT count(*) FROM procrastinate_jobs") == [(1,)]
