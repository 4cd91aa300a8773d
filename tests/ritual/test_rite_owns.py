"""Rite.aclose: a Rite releases what it owns (the clients of the Oracles it built)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sanctum import END, Ritual
from sanctum.oracle.ollama import OllamaOracle
from sanctum.ritualfile import compile_ritual


class _Closable:
    def __init__(self, log: list[str], name: str, fail: bool = False) -> None:
        self.log, self.name, self.fail = log, name, fail

    async def aclose(self) -> None:
        self.log.append(self.name)
        if self.fail:
            raise RuntimeError(f"{self.name} would not close")


def _rite(**options: Any) -> Any:
    async def step(aether: dict[str, Any]) -> dict[str, Any]:
        return {"n": 1}

    ritual = Ritual().add_sigil("step", step).set_entry_point("step")
    ritual.add_edge("step", END)
    return ritual.compile().with_options(**options)


def test_aclose_closes_every_owned_object_and_reports_the_first_failure() -> None:
    log: list[str] = []
    owned = [_Closable(log, "a"), _Closable(log, "b", fail=True), _Closable(log, "c", True)]
    rite = _rite(owns=owned)
    with pytest.raises(RuntimeError, match="b would not close"):
        asyncio.run(rite.aclose())
    assert log == ["a", "b", "c"]


def test_with_options_keeps_what_the_rite_owns_and_a_python_rite_owns_nothing() -> None:
    log: list[str] = []
    rite = _rite(owns=[_Closable(log, "a")]).with_options(recursion_limit=5)
    asyncio.run(rite.aclose())
    assert log == ["a"]
    asyncio.run(_rite().aclose())  # nothing to close, nothing raised


def test_a_ritual_files_rite_closes_the_oracles_it_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []

    async def record_close(self: OllamaOracle) -> None:
        closed.append(self.model)

    monkeypatch.setattr(OllamaOracle, "aclose", record_close)
    path = tmp_path / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: r\ninputs: {q: {type: string}}\n"
        "oracles:\n  local: {provider: ollama, model: tiny, base_url: 'http://127.0.0.1:9'}\n"
        "aether: {a: {}}\nentry: ask\n"
        "sigils:\n  ask: {oracle: local, prompt: '{{ q }}', output: a, next: END}\n",
        encoding="utf-8",
    )
    rite = compile_ritual(path)
    asyncio.run(rite.aclose())
    assert closed == ["tiny"]
