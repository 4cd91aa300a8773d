"""Which Omens each stream mode of ``Rite.astream`` yields.

Each Omen class declares its own mode (its ``mode`` class variable, see
:mod:`sanctum.omens.events`), where :data:`STREAM_MODES` and :func:`resolve_modes` are
built; this module keeps them at the path where the engine has always imported them.
"""

from __future__ import annotations

from sanctum.omens.events import STREAM_MODES, resolve_modes

__all__ = ["STREAM_MODES", "resolve_modes"]
