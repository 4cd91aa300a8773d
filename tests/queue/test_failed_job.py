"""A segment that fails: one line in the worker log, the reason in `sanctum queue`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import invoke
from tests.queue.harness import fresh_database, wait_for, workers

BROKEN = """\
sanctum: 1
name: broken
aether:
  out: {default: ""}
entry: a
sigils:
  a: {call: "tests.queue.qsteps:no_such_step", next: END}
"""


@pytest.mark.postgres
@pytest.mark.slow
def test_a_failed_segment_is_one_log_line_and_its_reason_is_listed(tmp_path: Path) -> None:
    from sanctum import api

    ritual = tmp_path / "broken.yaml"
    ritual.write_text(BROKEN, encoding="utf-8")
    with fresh_database() as url, workers(url, tmp_path, 1) as (worker,):
        (ident,) = api.submit(ritual, [{}], codex=url)
        (line,) = wait_for(lambda: worker.lines(ident), 30, worker.text)

        def failed() -> Any:
            shown = invoke(["queue", "--codex", url], tmp_path)
            return shown if "\tfailed\t" in shown.output else None

        listed = wait_for(failed, 30, worker.text)  # logged before the status is kept
    assert "outcome=failed" in line
    assert "no_such_step" in line.partition(" error=")[2]
    assert "Traceback" not in worker.text(), worker.text()
    assert listed.exit_code == 0, listed.output
    header, row = listed.output.strip().splitlines()
    assert header.split("\t") == [
        "JOB", "INVOCATION", "KIND", "QUEUE", "STATUS", "ATTEMPTS", "WORKER", "REASON"
    ]  # fmt: skip
    fields = row.split("\t")
    assert (fields[1], fields[4]) == (ident, "failed")
    assert "no_such_step" in fields[7]
