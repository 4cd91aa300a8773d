"""Opening the cassette a ``run``/``resume`` records to or replays from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sanctum.errors import CassetteError, RitualInputError

if TYPE_CHECKING:
    from sanctum.oracle.cassette import CassettePlayer, CassetteRecorder

__all__ = ["open_cassette"]


def open_cassette(
    *,
    record: str | Path | None,
    replay: str | Path | None,
    command: str,
    superstep: int,
    invocation: str,
    overridden: bool = False,
) -> CassetteRecorder | CassettePlayer | None:
    """The recorder or player for ``--record`` / ``--replay`` (None for neither).

    A ``run`` records a new cassette (replacing the file, keeping its matching rules);
    a ``resume`` appends a session to it. A ``resume`` replays the session recorded
    from the same superstep; a ``run`` replays from the first session.

    Args:
        record: The cassette to write, or None.
        replay: The cassette to answer from, or None.
        command: ``run`` or ``resume``.
        superstep: The superstep of the Seal a resume continues from (0 for a run).
        invocation: The invocation id, written to the session line.
        overridden: Whether oracles were overridden (``--oracle``): a replay answers
            every oracle from the cassette, so the two exclude each other.

    Raises:
        RitualInputError: If both are given, if a replay is asked with overridden
            oracles, or the cassette cannot be read or written (exit status 2 from the
            command line).
    """
    from sanctum.oracle.cassette import CassettePlayer, CassetteRecorder

    if record is not None and replay is not None:
        raise RitualInputError(
            "--record and --replay exclude each other: record against the real oracles "
            "once, then replay",
            source="--record",
        )
    if replay is not None and overridden:
        raise RitualInputError(
            "--oracle and --replay exclude each other: a replay answers every oracle from "
            "the cassette and asks no server; drop --oracle (or --record a new cassette "
            "with it)",
            source="--replay",
        )
    try:
        if record is not None:
            return CassetteRecorder(
                record,
                append=command == "resume",
                command=command,
                superstep=superstep,
                invocation=invocation,
            )
        if replay is not None:
            return CassettePlayer(replay, superstep=superstep if command == "resume" else None)
    except CassetteError as exc:
        option = "--record" if record is not None else "--replay"
        raise RitualInputError(f"{option}: {exc}", source=option) from None
    return None
