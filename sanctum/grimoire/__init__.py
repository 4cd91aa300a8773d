"""The Grimoire: Spells (tools), the Tome (tool registry), the repair layer, summon.

A Spell wraps a callable with the JSON schema an Oracle (LLM adapter) reasons about;
a Tome is the ordered registry of Spells handed to an Entity (agent); the repair layer
mends or corrects every spell call before it is cast; :func:`summon` builds the ReAct
loop as a Rite from public engine primitives, and :class:`Compaction` keeps its prompt
within a small context window; :func:`oracle_sigil`, :func:`agent_sigil` and
:func:`spell_sigil` are ready-made Sigils built on them.
"""

from sanctum.errors import (
    SpellCallParseError,
    SpellError,
    SpellExecutionError,
    SpellManifestError,
)
from sanctum.grimoire.compaction import Compaction
from sanctum.grimoire.prompt_layers import PromptLayers
from sanctum.grimoire.repair import MALFORMED_KEY, RepairOutcome, repair_spell_call
from sanctum.grimoire.sigils import agent_sigil, oracle_sigil, spell_sigil
from sanctum.grimoire.spell import Spell, infer_parameters, spell
from sanctum.grimoire.summon import DEFAULT_ROLE, SPELL_CALLING_MODES, summon
from sanctum.grimoire.tome import MANIFEST_NAME, Tome

__all__ = [
    "DEFAULT_ROLE",
    "MALFORMED_KEY",
    "MANIFEST_NAME",
    "SPELL_CALLING_MODES",
    "Compaction",
    "PromptLayers",
    "RepairOutcome",
    "Spell",
    "SpellCallParseError",
    "SpellError",
    "SpellExecutionError",
    "SpellManifestError",
    "Tome",
    "agent_sigil",
    "infer_parameters",
    "oracle_sigil",
    "repair_spell_call",
    "spell",
    "spell_sigil",
    "summon",
]
