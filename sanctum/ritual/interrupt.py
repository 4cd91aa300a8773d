"""Halting the ritual so the outside world may speak.

Human-in-the-loop control flow. A Sigil calls :func:`interrupt` to pause the
Invocation: the current superstep is aborted (its deltas discarded), the scheduler
writes a Seal (a checkpoint) when a Codex is attached, and the :class:`Interrupt`
signal propagates to the caller. The caller resumes later with
``rite.ainvoke(invocation_id=...)``, optionally injecting new data into the Aether via
``updates``; the interrupted superstep's frontier re-executes in full.
"""

from __future__ import annotations

from typing import NoReturn

from sanctum.errors import Interrupt

__all__ = ["Interrupt", "interrupt"]


def interrupt(reason: str = "") -> NoReturn:
    """Pause the Invocation from inside a Sigil, leaving a Seal behind.

    Raises Interrupt, which aborts the current superstep (its deltas are discarded),
    persists a Seal when the Rite has a Codex, and surfaces to the caller of
    ``ainvoke``/``invoke``. On resumption the whole interrupted frontier — including
    the Sigil that paused — runs again, so interrupting Sigils should check the Aether
    to decide whether the awaited data has arrived.

    Args:
        reason: Caller-facing explanation (e.g. the question put to a person).

    Raises:
        Interrupt: Always; the scheduler fills in ``sigil``, ``invocation_id`` and
            ``seal_id``.
    """
    raise Interrupt(str(reason))
