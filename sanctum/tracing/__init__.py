"""sanctum.tracing (under construction)."""
