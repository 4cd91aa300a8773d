"""`submit --parts-from-worker` and `worker --project-dir`: parts from a checkout, checked."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from sanctum.errors import SealError
from tests.cli.helpers import invoke
from tests.queue.harness import fresh_database, wait_all, wait_for, workers

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

FLOW = """\
sanctum: 1
name: flow
inputs:
  "n": {type: integer}
aether:
  out: {default: 0}
  approved: {default: false}
  notes: {reducer: append, default: []}
entry: double
sigils:
  double: {call: "steps:double", next: ask}
  ask: {interrupt: "Approve {{ n }}?", until: "approved", next: finish}
  finish: {call: "steps:finish", next: END}
"""

STEPS = """\
FACTOR = %d


async def double(aether):
    return {"out": aether["n"] * FACTOR}


async def finish(aether):
    return {"notes": ["finished"]}
"""


def _project(folder: Path, factor: int) -> Path:
    """A project folder (pyproject.toml marks it) with a ritual and its module."""
    (folder / "rituals").mkdir(parents=True)
    (folder / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    (folder / "rituals" / "flow.yaml").write_text(FLOW, encoding="utf-8")
    _steps(folder, factor)
    return folder / "rituals" / "flow.yaml"


def _steps(folder: Path, factor: int) -> None:
    (folder / "rituals" / "steps.py").write_text(STEPS % factor, encoding="utf-8")


def _refused(url: str, ident: str, log: Any) -> str:
    """The reason `sanctum queue` shows for ``ident``'s failed job."""
    from sanctum import api

    def failed() -> str | None:
        for job in api.queue_jobs(codex=url, statuses=("failed",)):
            if job.invocation_id == ident and job.reason:
                return job.reason
        return None

    reason: str = wait_for(failed, 30, log)
    return reason


def test_a_worker_runs_the_parts_of_its_checkout_and_refuses_others(tmp_path: Path) -> None:
    from sanctum import api

    ritual = _project(tmp_path / "mine", 2)
    checkout = tmp_path / "checkout"
    shutil.copytree(tmp_path / "mine", checkout)
    with pytest.raises(SealError, match="--parts-from-worker"):
        api.submit(ritual, [{"n": 1}], codex="postgresql://nobody@127.0.0.1:1/none")
    logs = tmp_path / "logs"
    logs.mkdir()
    with (
        fresh_database() as url,
        workers(url, logs, 1, "-q", "proj", "--project-dir", str(checkout)) as (worker,),
        workers(url, logs, 1, "-q", "bare") as (bare,),
    ):
        (ident,) = api.submit(ritual, [{"n": 21}], codex=url, queue="proj", parts_from_worker=True)
        (paused,) = wait_all(url, [ident], "paused", 30).values()
        assert paused.aether["out"] == 42
        queued = api.queue_resume(ident, {"approved": True}, codex=url, queue="proj")
        assert not queued.already
        (head,) = wait_all(url, [ident], "done", 30).values()
        assert head.aether["notes"] == ["finished"]
        project = head.metadata["queue_project"]
        assert project["ritual"] == "rituals/flow.yaml"
        assert sorted(project["files"]) == ["rituals/flow.yaml", "rituals/steps.py"]

        (elsewhere,) = api.submit(
            ritual, [{"n": 1}], codex=url, queue="bare", parts_from_worker=True
        )
        assert "start the worker with --project-dir" in _refused(url, elsewhere, bare.text)

        _steps(tmp_path / "mine", 3)  # the submitter's copy moved on, the checkout did not
        (newer,) = api.submit(ritual, [{"n": 1}], codex=url, queue="proj", parts_from_worker=True)
        reason = _refused(url, newer, worker.text)
        assert reason.startswith(f"SealError: rituals/steps.py in {checkout.resolve()} differs")

        _steps(checkout, 3)  # checked out now, but this worker imported the old one
        (again,) = api.submit(ritual, [{"n": 1}], codex=url, queue="proj", parts_from_worker=True)
        assert "already imported another version of rituals/steps.py" in _refused(
            url, again, worker.text
        )

        (checkout / "rituals" / "steps.py").unlink()
        (gone,) = api.submit(ritual, [{"n": 1}], codex=url, queue="proj", parts_from_worker=True)
        assert "rituals/steps.py is missing from the project folder" in _refused(
            url, gone, worker.text
        )
        listed = invoke(["queue", "--codex", url, "--status", "failed"], tmp_path)
    assert listed.exit_code == 0, listed.output
    rows = {line.split("\t")[1]: line.split("\t") for line in listed.output.splitlines()[1:]}
    assert "is missing from the project folder" in rows[gone][7]
    assert "--project-dir" in rows[elsewhere][7]
    assert "Traceback" not in worker.text() + bare.text()
