"""Sigil kinds: one module per kind, each declaring its model, checks, compile step and
drawing in one place (see :mod:`sanctum.ritualfile.kinds.base`).

Importing this package registers the built-in kinds, in documentation order: call,
oracle, agent, spell, interrupt, set, circle, scatter, and the keyless kind (a sigil
that only routes). :mod:`sanctum.ritualfile.models` builds the ritual file's
discriminated union of sigil models from the registry at import, so a new built-in
kind is one module here plus one line below (and its test).
"""

from __future__ import annotations

import importlib

from sanctum.ritualfile.kinds.base import (
    SigilKind,
    common_keys,
    key_owners,
    kind_keys,
    kind_named,
    kind_of,
    placeholder,
    register,
    registered,
    sigil_keys,
    unregister,
)

__all__ = [
    "BUILT_IN",
    "SigilKind",
    "common_keys",
    "key_owners",
    "kind_keys",
    "kind_named",
    "kind_of",
    "placeholder",
    "register",
    "registered",
    "sigil_keys",
    "unregister",
]

BUILT_IN = (
    "call",
    "oracle",
    "agent",
    "spell",
    "interrupt",
    "setting",
    "circle",
    "scatter",
    "passing",
)
"""The modules of the built-in kinds, imported (so registered) in this order."""

for _module in BUILT_IN:
    importlib.import_module(f"{__name__}.{_module}")
