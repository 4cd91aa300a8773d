"""sanctum.ritual (under construction)."""
