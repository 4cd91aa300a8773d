"""Spells with outside effects under a cassette: recorded once, answered on replay.

A Spell marked ``record=True`` (``@spell(record=True)``, ``"record": true`` in
``spell.json``) reaches an outside system — it sends mail, files a ticket, charges a
card. Under a recording cassette each cast runs as usual and is written to the cassette
(its arguments, its result or its error, masked like everything a cassette holds);
under a replaying cassette the cast is answered from the recording and the Spell never
runs, so a CI replay calls no outside system. Spells without the mark are the code under
test: they always run.

A replayed cast must have the recorded arguments (casts of one Spell are answered in
recorded order); anything else stops the run with
:class:`~sanctum.errors.CassetteMismatch` (``oracle="spell:NAME"``) showing both
argument sets. A recorded failure is raised again as :class:`ReplayedSpellError`
carrying the original type name and message.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Mapping
from typing import Any, Protocol

from sanctum.grimoire.spell import Spell, injected_parameters
from sanctum.grimoire.tome import Tome

__all__ = ["ReplayedSpellError", "recorded_spell", "recorded_tome"]


class _Recorder(Protocol):
    def record_spell(
        self, *, spell: str, arguments: Mapping[str, Any], result: Any, error: BaseException | None
    ) -> None: ...


class _Player(Protocol):
    def cast(self, spell: str, arguments: Mapping[str, Any]) -> dict[str, Any]: ...


class ReplayedSpellError(Exception):
    """A recorded Spell failed when it was recorded; the replay fails the same way.

    ``type_name`` is the original exception's class name; the message is its (masked)
    message.
    """

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name


def _root(cassette: Any) -> Any:
    """The recorder or player behind a Circle's scoped view of a cassette."""
    root = getattr(cassette, "root", None)
    return root() if callable(root) else cassette


def recorded_spell(spell: Spell, cassette: Any) -> Spell:
    """``spell`` cast through ``cassette``: recorded, or answered from the recording.

    Args:
        spell: A Spell; returned unchanged unless it is marked ``record``.
        cassette: A ``CassetteRecorder`` or ``CassettePlayer`` (or a Circle's view of
            one) from :mod:`sanctum.oracle.cassette`.

    Returns:
        A Spell with the same name, schema and labels whose function records each cast
        (recording) or answers it from the cassette without running (replaying).
    """
    if not spell.record:
        return spell
    target = _root(cassette)
    original = spell.fn
    injected = set(injected_parameters(original))
    name = spell.name

    def kept(kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in kwargs.items() if k not in injected}  # never a Mandate

    if hasattr(target, "cast"):
        player: _Player = target

        @functools.wraps(original)
        async def replayed(**kwargs: Any) -> Any:
            line = player.cast(name, kept(kwargs))
            error = line.get("error")
            if isinstance(error, dict):
                raise ReplayedSpellError(str(error.get("type")), str(error.get("message")))
            return line.get("result")

        return dataclasses.replace(spell, fn=replayed)

    recorder: _Recorder = target

    @functools.wraps(original)
    async def recording(**kwargs: Any) -> Any:
        try:
            result = original(**kwargs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            recorder.record_spell(spell=name, arguments=kept(kwargs), result=None, error=exc)
            raise
        recorder.record_spell(spell=name, arguments=kept(kwargs), result=result, error=None)
        return result

    return dataclasses.replace(spell, fn=recording)


def recorded_tome(tome: Tome, cassette: Any) -> Tome:
    """A Tome whose ``record`` Spells go through ``cassette`` (the others unchanged)."""
    if not any(spell.record for spell in tome):
        return tome
    return Tome(recorded_spell(spell, cassette) for spell in tome)
