"""The compiled graph: call plans, signature detection, manifest."""

from __future__ import annotations

import functools
from typing import Any

from sanctum import END, START, Ritual, SigilPolicy
from sanctum.ritual.graph import detect_async, detect_writer
from tests.ritual.helpers import noop


def test_detect_writer() -> None:
    def one(a: Any) -> Any: ...
    def two(a: Any, pen: Any) -> Any: ...
    def defaulted(a: Any, w: Any = None) -> Any: ...
    def named(a: Any, writer: Any = None) -> Any: ...
    def kwonly(a: Any, *, w: Any = None) -> Any: ...

    class Callable2:
        def __call__(self, a: Any, w: Any) -> Any: ...

        def method(self, a: Any) -> Any: ...

    assert not detect_writer(one)
    assert detect_writer(two)
    assert not detect_writer(defaulted)  # the closure idiom `lambda a, i=i: ...`
    assert detect_writer(named)
    assert not detect_writer(lambda a, i=3: {})
    assert not detect_writer(kwonly)
    assert detect_writer(Callable2())
    assert not detect_writer(Callable2().method)
    assert not detect_writer(functools.partial(two, 1))
    assert not detect_writer(len)  # builtins without a signature count as one param


def test_detect_async() -> None:
    async def coro(a: Any) -> Any: ...

    class AsyncCall:
        async def __call__(self, a: Any) -> Any: ...

    assert detect_async(coro)
    assert detect_async(functools.partial(coro))
    assert detect_async(AsyncCall())
    assert not detect_async(noop)


def test_plans_carry_resolved_policy_and_edges() -> None:
    ritual = Ritual().add_sigil("a", noop, SigilPolicy(retries=2, on_error="f"))
    ritual.add_sigil("b", noop).add_sigil("f", noop)
    ritual.set_entry_point("a").add_edge("a", "b").add_edge("a", END)
    ritual.add_edge("b", END).add_edge("f", END)
    graph = ritual.compile(default_policy=SigilPolicy(timeout=3, on_error="f"))._graph
    a, b, f = graph.plans
    assert (a.index, b.index, f.index) == (0, 1, 2)
    assert (a.retries, a.timeout, a.fast) == (2, None, False)
    assert a.on_error is f
    assert (b.timeout, b.on_error, b.fast) == (3, f, True)
    assert f.on_error is None  # the default never sends the fallback to itself
    assert a.targets == (b,)  # END is not a target plan
    assert graph.entry == (a,)
    assert graph.manifest["edges"] == {START: ["a"], "a": ["b", END], "b": [END], "f": [END]}


def test_invocation_is_not_a_writer() -> None:
    def asks(aether: Any, invocation: Any) -> None: ...
    def both(aether: Any, writer: Any, invocation: Any) -> None: ...

    assert not detect_writer(asks)
    assert detect_writer(both)
