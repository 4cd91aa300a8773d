"""sanctum.cli (under construction)."""
