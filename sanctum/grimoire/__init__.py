"""The Grimoire: Spells (tools), the Tome (tool registry), the repair layer, summon.

A Spell wraps a callable with the JSON schema an Oracle (LLM adapter) reasons about;
a Tome is the ordered registry of Spells handed to an Entity (agent); the repair layer
mends or corrects every spell call before it is cast; :func:`summon` builds the ReAct
loop as a Rite from public engine primitives.
"""

from sanctum.errors import (
    SpellCallParseError,
    SpellError,
    SpellExecutionError,
    SpellManifestError,
)
from sanctum.grimoire.repair import MALFORMED_KEY, RepairOutcome, repair_spell_call
from sanctum.grimoire.spell import Spell, infer_parameters, spell
from sanctum.grimoire.summon import DEFAULT_ROLE, SPELL_CALLING_MODES, summon
from sanctum.grimoire.tome import MANIFEST_NAME, Tome

__all__ = [
    "DEFAULT_ROLE",
    "MALFORMED_KEY",
    "MANIFEST_NAME",
    "RepairOutcome",
    "SPELL_CALLING_MODES",
    "Spell",
    "SpellCallParseError",
    "SpellError",
    "SpellExecutionError",
    "SpellManifestError",
    "Tome",
    "infer_parameters",
    "repair_spell_call",
    "spell",
    "summon",
]
