"""The veto a Ward — middleware — may cast on a Sigil's delta.

WardRejection, importable from here as the original engine laid it out; it is the
class of :mod:`sanctum.errors` (re-exported, not a copy).
"""

from sanctum.errors import WardRejection

__all__ = ["WardRejection"]
