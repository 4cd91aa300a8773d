"""`sanctum run RITUAL --inputs batch.jsonl`: a batch in one process (no PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from tests.conftest import REPO_ROOT
from tests.oracle.counting import InFlight
from tests.oracle.servers import ModelServer

HELLO = REPO_ROOT / "rituals" / "hello.yaml"
TEN = Path(__file__).with_name("ten.yaml")


def _batch(folder: Path, rows: list[dict[str, object]]) -> Path:
    path = folder / "batch.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "\n", encoding="utf-8")
    return path


def test_a_batch_runs_every_line_and_prints_each_id_and_status(tmp_path: Path) -> None:
    from sanctum import api

    path = _batch(tmp_path, [{"name": "Ada"}, {"name": "Grace"}, {}])
    result = invoke(["run", str(HELLO), "--inputs", str(path), "--concurrency", "2"], tmp_path)
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.output.splitlines()]
    assert [row[1] for row in rows] == ["done", "done", "done"]
    stored = {row.invocation_id for row in asyncio.run(api.list_invocations())}
    assert stored == {row[0] for row in rows}


def test_a_paused_invocation_makes_the_batch_leave_with_status_3(tmp_path: Path) -> None:
    path = _batch(tmp_path, [{"n": 1}, {"n": 2}])
    result = invoke(["run", str(TEN), "--inputs", str(path), "--json"], tmp_path)
    assert result.exit_code == 3, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [line["status"] for line in lines] == ["paused", "paused"]
    assert len({line["invocation_id"] for line in lines}) == 2


def test_a_line_that_does_not_fit_runs_nothing(tmp_path: Path) -> None:
    path = _batch(tmp_path, [{"name": "Ada"}, {"nope": 1}])
    result = invoke(["run", str(HELLO), "--inputs", str(path)], tmp_path)
    assert result.exit_code == 2
    assert "nope" in result.output
    assert not (tmp_path / ".sanctum").exists()  # not even the codex was made


def test_one_run_options_are_refused_with_a_batch(tmp_path: Path) -> None:
    path = _batch(tmp_path, [{}])
    result = invoke(["run", str(HELLO), "--inputs", str(path), "--invocation", "x"], tmp_path)
    assert result.exit_code == 2
    assert "--invocation is for one run" in result.output


def test_run_batch_refuses_a_concurrency_below_one() -> None:
    from sanctum import api

    with pytest.raises(ValueError, match="at least 1"):
        api.run_batch(HELLO, [{}], concurrency=0)


GLOBAL = """\
sanctum: 1
name: one-gpu
inputs:
  q: {{type: string}}
aether:
  a: {{}}
oracles:
  gpu: {{provider: openai, base_url: "{url}/v1", model: m, max_concurrency_global: 1}}
entry: ask
sigils:
  ask: {{oracle: gpu, prompt: "{{{{ q }}}}", output: a, next: END}}
"""


@pytest.mark.postgres
def test_a_batch_on_a_postgresql_codex_holds_the_global_slots(
    server: ModelServer, tmp_path: Path
) -> None:
    """No warning (the suite makes one an error): the batch took advisory-lock slots."""
    from sanctum import api
    from tests.queue.harness import fresh_database

    counter = InFlight(crowd=2, hold=0.2)
    server.respond = counter
    ritual = tmp_path / "one.yaml"
    ritual.write_text(GLOBAL.format(url=server.url), encoding="utf-8")
    with fresh_database() as url:
        outcomes = api.run_batch(ritual, [{"q": str(n)} for n in range(4)], codex=url)
    assert [one.status for one in outcomes] == ["done"] * 4
    assert counter.most == 1


def test_a_global_bound_without_postgresql_warns_and_bounds_the_batch(
    server: ModelServer, tmp_path: Path
) -> None:
    from sanctum import api

    counter = InFlight(crowd=2, hold=0.2)
    server.respond = counter
    ritual = tmp_path / "one.yaml"
    ritual.write_text(GLOBAL.format(url=server.url), encoding="utf-8")
    with pytest.warns(RuntimeWarning, match="bounds this process only"):
        outcomes = api.run_batch(ritual, [{"q": str(n)} for n in range(4)], codex="memory:")
    assert [one.status for one in outcomes] == ["done"] * 4
    assert counter.most == 1
