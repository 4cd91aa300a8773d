"""Seals (checkpoints) and the Codices (checkpoint stores) that keep them.

``PostgresCodex`` lives in :mod:`sanctum.codex.postgres` (the ``postgres`` extra) and
is not imported here, so that ``import sanctum`` loads no third-party package.
``MemoryCodex`` and ``SqliteCodex`` are imported on first use (PEP 562), so the engine
pays for sqlite3 only when a store is actually asked for.
"""

from __future__ import annotations

import importlib
import typing

from sanctum.codex.base import Codex, InvocationSummary, Seal, find_unserialisable, new_seal_id
from sanctum.errors import SealError

if typing.TYPE_CHECKING:
    from sanctum.codex.memory import MemoryCodex
    from sanctum.codex.sqlite import SqliteCodex

__all__ = [
    "Codex",
    "InvocationSummary",
    "MemoryCodex",
    "Seal",
    "SealError",
    "SqliteCodex",
    "find_unserialisable",
    "new_seal_id",
]

_LAZY = {"MemoryCodex": "sanctum.codex.memory", "SqliteCodex": "sanctum.codex.sqlite"}


def __getattr__(name: str) -> typing.Any:
    """Import a store on first use (PEP 562) and cache it in the package."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sanctum.codex' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
