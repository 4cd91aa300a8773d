"""`sanctum queue` on a codex whose queue nobody used yet, and after a submit (PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.queue.harness import RITUAL, fresh_database, query

pytestmark = pytest.mark.postgres


def test_queue_of_an_unused_codex_says_nothing_is_there(tmp_path: Path) -> None:
    with fresh_database() as url:
        result = invoke(["queue", "--codex", url], tmp_path)
        assert result.exit_code == 0, result.output
        assert "nothing queued, running, paused or failed" in result.output
        tables = query(url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        assert tables == [(0,)]  # listing created nothing


def test_queue_lists_submitted_invocations_waiting(tmp_path: Path) -> None:
    from sanctum import api

    with fresh_database() as url:
        ids = api.submit(RITUAL, [{"n": 1}, {"n": 2}], codex=url)
        result = invoke(["queue", "--codex", url], tmp_path)
        assert result.exit_code == 0, result.output
        header, *rows = [line.split("\t") for line in result.output.splitlines() if "\t" in line]
        assert header[:7] == ["JOB", "INVOCATION", "KIND", "QUEUE", "STATUS", "ATTEMPTS", "WORKER"]
        assert [(row[1], row[2], row[4], row[6], row[7]) for row in rows] == [
            (ident, "start", "todo", "-", "-") for ident in ids
        ]
