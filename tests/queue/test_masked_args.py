"""A queued run's inputs and updates rest in PostgreSQL masked, as its Seals are."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.queue.harness import fresh_database, query, wait_all, workers

SECRET = "SEKRIT-queue-4242"

RITUAL = """\
sanctum: 1
name: secretive
inputs:
  question: {type: string}
aether:
  note: {default: ""}
  keyed: {default: false}
entry: ask
sigils:
  ask: {set: {keyed: "${QUEUE_TOKEN} != ''"}, next: wait}
  wait: {interrupt: "Note for {{ question }}?", until: "note != ''", next: END}
"""


@pytest.mark.postgres
@pytest.mark.slow
def test_queued_inputs_and_updates_are_masked_in_the_job_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sanctum import api

    monkeypatch.setenv("QUEUE_TOKEN", SECRET)
    ritual = tmp_path / "secretive.yaml"
    ritual.write_text(RITUAL, encoding="utf-8")
    with fresh_database() as url, workers(url, tmp_path, 1):
        (ident,) = api.submit(ritual, [{"question": f"about {SECRET}"}], codex=url)
        (paused,) = wait_all(url, [ident], "paused", 30).values()
        assert paused.aether["keyed"] is True  # the worker read the secret from its env
        args = ["resume", "--invocation", ident, "--executor", "queue", "--codex", url]
        result = invoke([*args, "-u", f"note=done with {SECRET}"], tmp_path)
        assert result.exit_code == 0, result.output
        (done,) = wait_all(url, [ident], "done", 30).values()
        stored = query(url, "SELECT args::text FROM procrastinate_jobs")
    assert len(stored) >= 2
    assert all(SECRET not in row[0] for row in stored)
    assert any("about [REDACTED]" in row[0] for row in stored)
    assert any("done with [REDACTED]" in row[0] for row in stored)
    assert done.aether["note"] == "done with [REDACTED]"
