"""A queued invocation as the listings show it: its ritual as submitted, resumed via the queue."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from sanctum.codex.base import Seal
from sanctum.codex.sqlite import SqliteCodex
from tests.cli.helpers import GREET, invoke, write_ritual
from tests.queue.harness import RITUAL, fresh_database, wait_all, workers

IDENT = "3f0c9a51d2e84b7f9a0c6d1e2b3a4c5d"
CACHED = "/var/cache/sanctum/ab12cd34/triage.yaml"


def _seed(directory: Path) -> None:
    """A paused invocation as a queue worker leaves it (``queued`` and ``lease`` records)."""

    async def write() -> None:
        codex = SqliteCodex(directory / ".sanctum" / "codex.db")
        metadata = {
            "ritual": {"path": CACHED, "sha256": "sha256:00"},
            "queued": {"ritual": str(directory / "rituals" / "triage.yaml"), "queue": "gpu"},
            "lease": {"epoch": 1, "holder": "box1-4242-a1b2c3"},
            "interrupt": {"reason": "Approve?", "sigil": "ask"},
        }
        seal = Seal({"q": "?"}, ("ask",), 1, timestamp=1_700_000_000.0, metadata=metadata)
        await codex.put(IDENT, seal)
        await codex.aclose()

    (directory / ".sanctum").mkdir()
    asyncio.run(write())


def test_the_listing_shows_the_ritual_as_submitted_not_the_worker_s_copy(
    tmp_path: Path,
) -> None:
    _seed(tmp_path)
    table = invoke(["invocations"], tmp_path, env={"COLUMNS": "140"})
    assert table.exit_code == 0, table.output
    assert "rituals/triage.yaml" in table.stdout
    assert "ab12cd34" not in table.stdout
    (line,) = invoke(["invocations", "--json"], tmp_path).stdout.splitlines()
    row = json.loads(line)
    assert row["ritual"] == str(tmp_path / "rituals" / "triage.yaml")
    assert row["queue"] == "gpu"


def test_show_names_the_queue_and_resumes_through_it(tmp_path: Path) -> None:
    _seed(tmp_path)
    shown = invoke(["invocations", "show", IDENT], tmp_path)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert "ritual      rituals/triage.yaml" in lines
    assert "queue       gpu" in lines
    assert f"resume with: sanctum resume --invocation {IDENT} --executor queue" in lines


def test_pending_resumes_a_queued_invocation_through_the_queue(tmp_path: Path) -> None:
    _seed(tmp_path)
    (line,) = invoke(["pending", "--json"], tmp_path).stdout.splitlines()
    entry = json.loads(line)
    assert entry["queued"] is True
    assert entry["resume"] == f"sanctum resume --invocation {IDENT} --executor queue"


def test_run_names_the_queued_resume_of_an_id_already_taken(tmp_path: Path) -> None:
    _seed(tmp_path)
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    shutil.copy(tmp_path / ".sanctum" / "codex.db", tmp_path / "other.db")
    for extra, codex in (([], ""), (["--codex", "other.db"], " --codex other.db")):
        taken = invoke(["run", str(ritual), "--invocation", IDENT, *extra], tmp_path)
        assert taken.exit_code == 2, taken.output
        assert (
            f"continue it with `sanctum resume --invocation {IDENT}{codex} --executor queue`"
            in taken.stderr
        )


def test_a_local_run_is_not_taken_for_a_queued_one(tmp_path: Path) -> None:
    from sanctum.api import origin_of

    local = origin_of({"ritual": {"path": "/p/r.yaml"}})
    assert (local.ritual, local.queue, local.queued) == ("/p/r.yaml", None, False)
    leased = origin_of({"ritual": {"path": CACHED}, "lease": {"epoch": 2, "holder": "w"}})
    assert (leased.ritual, leased.queued) == (CACHED, True)  # submitted before the record
    assert origin_of({}).ritual is None


@pytest.mark.postgres
@pytest.mark.slow
def test_a_submitted_ritual_is_listed_by_its_path_and_resumed_by_the_printed_command(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "rituals"
    folder.mkdir()
    ritual = folder / "ten.yaml"
    shutil.copy(RITUAL, ritual)
    with fresh_database() as url, workers(url, tmp_path, 1):
        submitted = invoke(["submit", "rituals/ten.yaml", "--codex", url, "-i", "n=3"], tmp_path)
        assert submitted.exit_code == 0, submitted.output
        ident = submitted.stdout.strip()
        wait_all(url, [ident], "paused", 30)

        listed = invoke(["invocations", "--codex", url, "--json"], tmp_path)
        (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
        assert row["ritual"] == str(ritual.resolve())
        assert row["queue"] == "sanctum"
        table = invoke(["invocations", "--codex", url], tmp_path, env={"COLUMNS": "140"})
        assert "rituals/ten.yaml" in table.stdout

        waiting = invoke(["pending", "--codex", url, "--json"], tmp_path)
        (entry,) = [json.loads(line) for line in waiting.stdout.splitlines()]
        assert entry["resume"].endswith(" --executor queue")
        words = entry["resume"].split()[1:]
        answered = invoke([*words, "-u", "approved=true", "-u", 'notes=["ok"]'], tmp_path)
        assert answered.exit_code == 0, answered.output
        assert f"queued a resume of invocation {ident} (job " in answered.stdout
        (head,) = wait_all(url, [ident], "done", 30).values()
        assert head.aether["notes"] == ["ok"]

        history = invoke(["seals", "--invocation", ident[:8], "--codex", url, "--json"], tmp_path)
        rows = [json.loads(line) for line in history.stdout.splitlines()]
        assert rows, history.output
        assert {row["metadata"]["queued"]["ritual"] for row in rows} == {str(ritual.resolve())}
