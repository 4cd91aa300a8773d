"""Sigils of the paced queue rituals: each takes ``pace`` seconds, waits at a gate the
test opens, and marks which process ran it.

Every activation appends ``<pid> <superstep> <sigil> began|ended`` to the file named by
the ``marks`` input, so a test can tell which process ran which superstep and whether
two processes ever ran one at once. With a ``gate`` file given, a superstep does not
end before the number written in that file reaches its own number (:func:`open_gate`),
so a test can hold a worker inside a superstep for as long as it needs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any


def _mark(aether: Mapping[str, Any], superstep: int, name: str, what: str) -> None:
    with open(str(aether["marks"]), "a", encoding="utf-8") as marks:
        marks.write(f"{os.getpid()} {superstep} {name} {what}\n")


def _opened(gate: str) -> int:
    try:
        return int(Path(gate).read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        return 0


def _step(name: str) -> Callable[..., Coroutine[Any, Any, dict[str, Any]]]:
    async def step(aether: Mapping[str, Any], invocation: Any) -> dict[str, Any]:
        superstep = int(invocation.superstep)
        _mark(aether, superstep, name, "began")
        await asyncio.sleep(float(aether["pace"]))
        gate = str(aether.get("gate") or "")
        while gate and _opened(gate) < superstep:  # noqa: ASYNC110 — the test writes a file
            await asyncio.sleep(0.02)
        _mark(aether, superstep, name, "ended")
        return {"log": [name], "total": int(aether["n"])}

    return step


p1, p2, p3, p4, p5, p6 = (_step(f"p{i}") for i in range(1, 7))


def open_gate(gate: Path, superstep: int) -> None:
    """Let every superstep up to ``superstep`` end."""
    gate.write_text(str(superstep), encoding="utf-8")


def marks(path: Path) -> list[tuple[int, int, str, str]]:
    """The marks written so far: ``(pid, superstep, sigil, began|ended)`` in order."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        pid, superstep, name, what = line.split()
        found.append((int(pid), int(superstep), name, what))
    return found
