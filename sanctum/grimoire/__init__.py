"""sanctum.grimoire (under construction)."""
