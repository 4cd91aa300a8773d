"""`max_concurrency_global` across two real `sanctum worker` processes (PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.oracle.counting import InFlight
from tests.oracle.servers import ModelServer
from tests.queue.harness import fresh_database, wait_all, workers

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

RITUAL = """\
sanctum: 1
name: shared-gpu
inputs:
  q: {{type: string}}
aether:
  a: {{}}
oracles:
  gpu: {{provider: openai, base_url: "{url}/v1", model: m, max_concurrency: 2, {bound}}}
entry: ask
sigils:
  ask: {{oracle: gpu, prompt: "{{{{ q }}}}", output: a, next: END}}
"""


def test_two_workers_together_never_pass_the_global_bound(
    server: ModelServer, tmp_path: Path
) -> None:
    """Each worker alone may send 2 at once; together they share 2 advisory-lock slots."""
    from sanctum import api

    counter = InFlight(crowd=3, hold=0.3)
    server.respond = counter
    ritual = tmp_path / "shared.yaml"
    ritual.write_text(
        RITUAL.format(url=server.url, bound="max_concurrency_global: 2"), encoding="utf-8"
    )
    with fresh_database() as url, workers(url, tmp_path, 2) as crew:
        ids = api.submit(ritual, [{"q": str(n)} for n in range(10)], codex=url)
        heads = wait_all(url, ids, "done", 60)
        logs = [worker.text() for worker in crew]
    assert all(head.aether["a"] == "an answer" for head in heads.values())
    assert counter.seen == 10
    assert counter.most == 2, logs  # reached, never passed by the two together
    assert all("Traceback" not in log for log in logs), logs
    assert all("warning" not in log.lower() for log in logs), logs  # slots were installed
