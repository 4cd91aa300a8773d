"""sanctum.spec (under construction)."""
