"""Aether — the state dict — its Conduits (state channels) and their reducers."""

from sanctum.aether.reducers import Reducer, add, append, merge_dict, overwrite
from sanctum.aether.schema import ERRORS_CONDUIT, NO_DEFAULT, Aether, AetherSchema, Conduit
from sanctum.errors import AetherValidationError

__all__ = [
    "ERRORS_CONDUIT",
    "NO_DEFAULT",
    "Aether",
    "AetherSchema",
    "AetherValidationError",
    "Conduit",
    "Reducer",
    "add",
    "append",
    "merge_dict",
    "overwrite",
]
