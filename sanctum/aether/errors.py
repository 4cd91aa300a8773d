"""The way a write may stray outside the Aether's declared Conduits.

AetherValidationError, importable from here as the original engine laid it out; it is
the class of :mod:`sanctum.errors` (re-exported, not a copy).
"""

from sanctum.errors import AetherValidationError

__all__ = ["AetherValidationError"]
