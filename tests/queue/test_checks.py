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


@pytest.mark.parametrize("command", ["submit", "worker", "queue"])
def test_a_port_that_is_no_number_is_bad_usage(tmp_path: Path, command: str) -> None:
    pytest.importorskip("procrastinate")
    result = invoke(_command(command, "postgresql://postgres@127.0.0.1:notaport/x"), tmp_path)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "error: the port in the PostgreSQL URL must be a number from 1 to 65535, not "
        "'notaport'; write postgresql://user@host:port/dbname"
    ]


def test_submit_refuses_input_beside_inputs_and_an_empty_queue(tmp_path: Path) -> None:
    pytest.importorskip("procrastinate")
    (tmp_path / "good.jsonl").write_text('{"n": 1}\n', encoding="utf-8")
    both = ["submit", str(RITUAL), "-i", "n=1", "--inputs", "good.jsonl", "--codex", DEAD]
    result = invoke(both, tmp_path)
    assert result.exit_code == 2, result.output
    assert "--inputs queues one invocation per line; --input is for one invocation" in (
        result.output
    )
    empty = invoke(["submit", str(RITUAL), "-i", "n=1", "--queue", "", "--codex", DEAD], tmp_path)
    assert empty.exit_code == 2, empty.output
    assert empty.output.strip() == "error: a queue name cannot be empty (the default is 'sanctum')"


def test_submit_warns_of_a_repeated_input_as_run_does(tmp_path: Path) -> None:
    pytest.importorskip("procrastinate")
    result = invoke(["submit", str(RITUAL), "-i", "n=1", "-i", "n=2", "--codex", DEAD], tmp_path)
    assert result.exit_code == 1, result.output  # the dead server, after the warning
    assert "warning: --input n was given 2 times; the last value wins (n=2)" in result.output


def test_submit_lists_every_input_that_does_not_fit_at_its_line(tmp_path: Path) -> None:
    pytest.importorskip("procrastinate")
    batch = '{"n": 1}\n{"n": "x"}\n\n# a comment\n{"m": 2}\n'
    (tmp_path / "bad.jsonl").write_text(batch, encoding="utf-8")
    result = invoke(["submit", str(RITUAL), "--inputs", "bad.jsonl", "--codex", DEAD], tmp_path)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == "error: inputs do not fit the ritual (2 bad lines); nothing ran:"
    assert lines[1].startswith("bad.jsonl:2: input 'n' must be of type integer")
    assert lines[2].startswith("bad.jsonl:5: ten-supersteps declares no input 'm'")


def test_submit_reads_a_batch_from_stdin(tmp_path: Path) -> None:
    pytest.importorskip("procrastinate")
    args = ["submit", str(RITUAL), "--inputs", "-", "--codex", DEAD]
    result = invoke(args, tmp_path, input='{"n": 1}\nnot json\n')
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "error: bad batch file <stdin> (1 bad line); nothing ran:",
        "<stdin>:2: not JSON (Expecting value at column 1)",
    ]
    fine = invoke(args, tmp_path, input='{"n": 1}\n{"n": 2}\n')
    assert fine.exit_code == 1, fine.output  # read and bound: only the dead server is left
    assert "cannot use the PostgreSQL codex at 127.0.0.1:1/x" in fine.output


def test_run_refuses_concurrency_without_a_batch(tmp_path: Path) -> None:
    result = invoke(["run", str(RITUAL), "-i", "n=1", "--concurrency", "3"], tmp_path)
    assert result.exit_code == 2, result.output
    assert "--concurrency goes with --inputs (a batch), not one run" in result.output


@pytest.mark.parametrize(
    ("status", "hint"),
    [("bogus", ""), ("faild", "; did you mean 'failed'?")],
)
def test_queue_refuses_an_unknown_status(tmp_path: Path, status: str, hint: str) -> None:
    pytest.importorskip("procrastinate")
    result = invoke(["queue", "--codex", DEAD, "--status", status], tmp_path)
    assert result.exit_code == 2, result.output
    assert (
        f"unknown status {status!r}{hint} (choose from todo, doing, paused, failed, "
        "succeeded, aborted, cancelled)"
    ) in result.output


@pytest.mark.parametrize("command", ["worker", "submit", "queue"])
def test_each_queue_command_shows_its_own_exit_statuses(tmp_path: Path, command: str) -> None:
    result = invoke([command, "--help"], tmp_path, env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    tail = result.output.partition("Exit status:")[2]
    assert "  2    bad usage" in tail
    assert "paused by an interrupt" not in tail  # the table of a ritual's statuses
    if command == "worker":
        assert "  0    stopped by Ctrl-C, SIGTERM or SIGHUP: each running invocation" in tail
        assert "stopped before it took any job)" in tail
        assert "  130  a second Ctrl-C stopped it at once (143: a second SIGTERM, 129:" in tail


def test_an_endpoint_bound_past_4096_is_refused_by_validate(tmp_path: Path) -> None:
    ritual = tmp_path / "huge.yaml"
    ritual.write_text(HUGE.format(limit="99999999999999999999"), encoding="utf-8")
    result = invoke(["validate", str(ritual)], tmp_path)
    assert result.exit_code == 2, result.output
    assert "huge.yaml:6:" in result.output
    assert "4096" in result.output
    ritual.write_text(HUGE.format(limit="4096"), encoding="utf-8")
    assert invoke(["validate", str(ritual)], tmp_path).exit_code == 0


HUGE = """\
sanctum: 1
name: huge
oracles:
  gpu:
    provider: scripted
    max_concurrency: {limit}
aether:
  out: {{default: ""}}
entry: a
sigils:
  a: {{set: {{out: "'x'"}}, next: END}}
"""
