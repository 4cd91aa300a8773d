"""The ways a Spell — a tool — or a spell call may fail.

The Grimoire's exceptions, importable from here as the original engine laid them out;
they are the classes of :mod:`sanctum.errors` (re-exported, not copies).
SpellExecutionError: a Spell raised, or no such Spell exists. SpellCallParseError: the
repair layer surrendered (also a SigilExecutionError). SpellError is their common base;
SpellManifestError (a ValueError) reports a malformed spell folder.
"""

from sanctum.errors import (
    SpellCallParseError,
    SpellError,
    SpellExecutionError,
    SpellManifestError,
)

__all__ = [
    "SpellCallParseError",
    "SpellError",
    "SpellExecutionError",
    "SpellManifestError",
]
