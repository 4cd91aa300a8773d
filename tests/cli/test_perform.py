"""``run_interruptibly``: Ctrl-C lands where the CLI can handle it, never inside asyncio."""

from __future__ import annotations

import asyncio
import gc
import signal
import warnings

import pytest

from sanctum.cli._perform import run_interruptibly


def test_returns_the_result_and_restores_the_sigint_handler() -> None:
    before = signal.getsignal(signal.SIGINT)

    async def work() -> int:
        await asyncio.sleep(0)
        return 7

    assert run_interruptibly(work) == 7
    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_while_running_cancels_the_coroutine_then_raises() -> None:
    cleaned: list[str] = []

    async def work() -> None:
        try:
            signal.raise_signal(signal.SIGINT)
            await asyncio.sleep(30)
        finally:
            cleaned.append("finally ran")

    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(work)
    assert cleaned == ["finally ran"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_after_the_coroutine_finished_is_deferred_not_lost() -> None:
    async def work() -> int:
        signal.raise_signal(signal.SIGINT)  # no await follows: the task ends first
        return 1

    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(work)


def test_ctrl_c_while_the_coroutine_is_made_still_stops_and_leaks_nothing() -> None:
    async def work() -> None:
        await asyncio.sleep(30)

    def make():  # type: ignore[no-untyped-def]
        signal.raise_signal(signal.SIGINT)
        return work()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gc.collect()  # what earlier tests left behind is theirs, not this run's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            run_interruptibly(make)
        gc.collect()
    assert [str(w.message) for w in caught] == []


def test_background_tasks_are_cancelled_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def work() -> None:
        async def forever() -> None:
            await asyncio.sleep(30)

        background = asyncio.create_task(forever())
        await asyncio.sleep(0)
        signal.raise_signal(signal.SIGINT)
        await background

    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(work)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
