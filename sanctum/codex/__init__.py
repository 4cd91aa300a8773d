"""Seals (checkpoints) and the Codices (checkpoint stores) that keep them.

``PostgresCodex`` lives in :mod:`sanctum.codex.postgres` (the ``postgres`` extra) and
is not imported here, so that ``import sanctum`` loads no third-party package.
"""

from sanctum.codex.base import Codex, InvocationSummary, Seal, find_unserialisable, new_seal_id
from sanctum.codex.memory import MemoryCodex
from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import SealError

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
