"""Omens keep their stock dataclass constructors; no code is generated at import."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import pickle
from pathlib import Path

import sanctum
from sanctum.omens import SpellCallRepaired, TokenEmitted
from sanctum.omens._quick import quicken


def test_quicken_returns_the_class_untouched() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
    class Probe:
        x: int

    init = Probe.__init__
    assert quicken(Probe) is Probe
    assert Probe.__init__ is init


def test_engine_omens_are_still_dataclasses_with_their_parameters() -> None:
    params = inspect.signature(SpellCallRepaired).parameters
    assert list(params)[:3] == ["timestamp", "spell", "detail"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    repaired = SpellCallRepaired(spell="s", detail="d")
    assert repaired.arguments == {}
    assert repaired.raw == ""
    assert repaired.call_id is None
    token = TokenEmitted(payload=[1])
    assert pickle.loads(pickle.dumps(token)) == token
    assert dataclasses.is_dataclass(token)


def test_no_module_of_the_package_calls_exec_or_eval() -> None:
    root = Path(sanctum.__file__).parent
    calls = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("exec", "eval")
            ):
                calls.append(f"{path.relative_to(root)}:{node.lineno}")
    assert calls == []
