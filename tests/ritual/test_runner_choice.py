"""One runner per Rite: which one is chosen, and that its fast paths are taken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sanctum import END, START, Ritual, Ward
from sanctum.omens import Omen
from sanctum.ritual import _sigils, runner
from sanctum.ritual.emitter import Emitter, omen_hook_of
from sanctum.ritual.runner import RunContext, Runner
from sanctum.tracing import TraceRecorder
from sanctum.wards import Secrets


def _cycle(n: int = 6) -> Ritual:
    ritual = Ritual().add_sigil("tick", lambda aether: {"n": aether["n"] + 1})
    ritual.add_edge(START, "tick")
    return ritual.add_conditional_edge("tick", lambda aether: "tick" if aether["n"] < n else END)


class _Listener(Ward):
    async def on_omen(self, omen: Omen) -> None:
        pass


class _Hooking(Ward):
    async def before_sigil(self, name: str, aether: Any) -> None:
        pass


def _runner_of(rite: Any, *, streamed: bool = False) -> Runner:
    setup = rite._setup
    emitter = Emitter(setup.omen_hooks, None) if setup.omen_hooks or streamed else None
    ctx = RunContext("inv", emitter, setup.before, setup.after)
    chosen: Runner = setup.runner.runner(ctx, streamed=streamed)
    return chosen


def test_the_runner_follows_the_rite_s_wards(tmp_path: Path) -> None:
    ritual = _cycle()
    assert _runner_of(ritual.compile()).name == "bare"
    assert _runner_of(ritual.compile(), streamed=True).name == "observed"
    assert _runner_of(ritual.compile(wards=[_Listener()])).name == "observed"
    traced = ritual.compile(wards=[TraceRecorder(tmp_path)])
    assert _runner_of(traced).name == "superstep-hooks"
    assert _runner_of(traced, streamed=True).name == "observed"  # a stream needs every Omen
    mixed = ritual.compile(wards=[TraceRecorder(tmp_path), _Listener()])
    assert _runner_of(mixed).name == "observed"
    assert _runner_of(ritual.compile(wards=[_Hooking()])).name == "hooked"
    masked = ritual.compile(wards=[TraceRecorder(tmp_path)], secrets=Secrets(["sk-secret-value"]))
    assert _runner_of(masked).name == "hooked"  # Secrets mask every delta: a hook


def test_the_choice_is_made_once_when_the_rite_is_compiled(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path)
    rite = _cycle().compile(wards=[recorder])
    choice = rite._setup.runner
    assert choice.superstep_hooks == (recorder.superstep_hook(),)
    assert not choice.hooked


def _forbid(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make the general path's entry points fail: a run that needs them fails."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the fast path was not taken")

    for name in names:
        for module in (runner, _sigils):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, refuse)


async def test_a_bare_run_of_sync_sigils_takes_the_inline_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rite = _cycle().compile()
    _forbid(monkeypatch, "run_frontier", "perform", "run_observed", "new_superstep_began")
    assert await rite.ainvoke({"n": 0}) == {"n": 6}


async def test_a_recorded_run_takes_whole_supersteps_through_the_hook(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "t.sanctum-trace.json"
    recorder = TraceRecorder(path)
    taken: list[int] = []
    chronicle_tap = recorder.superstep_hook()
    assert chronicle_tap is not None

    def counting(*args: Any) -> None:
        taken.append(args[1])
        chronicle_tap(*args)

    monkeypatch.setattr(recorder, "superstep_hook", lambda: counting)
    rite = _cycle().compile(wards=[recorder])
    _forbid(
        monkeypatch,
        "run_frontier",
        "perform",
        "run_observed",
        "new_superstep_began",
        "new_sigil_began",
    )
    assert await rite.ainvoke({"n": 0}) == {"n": 6}
    assert taken == [1, 2, 3, 4, 5, 6]
    assert path.exists()


def test_a_ward_overriding_on_omen_is_awaited_even_with_observe() -> None:
    class Both(Ward):
        def observe(self, omen: Omen) -> None:
            pass

        def superstep_hook(self) -> None:
            return None

        async def on_omen(self, omen: Omen) -> None:
            pass

    assert callable(omen_hook_of(Both()))
    assert _runner_of(_cycle().compile(wards=[Both()])).name == "observed"
