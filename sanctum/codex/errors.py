"""The way a Seal — a checkpoint — may fail to be written, read or resumed from.

SealError, importable from here as the original engine laid it out; it is the class
of :mod:`sanctum.errors` (re-exported, not a copy).
"""

from sanctum.errors import SealError

__all__ = ["SealError"]
