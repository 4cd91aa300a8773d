"""The ``--record`` / ``--replay`` options of ``sanctum run`` and ``sanctum resume``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["RecordOpt", "ReplayOpt"]

RecordOpt = Annotated[
    Path | None,
    typer.Option(
        "--record",
        metavar="CASSETTE",
        help=(
            "Record every Oracle call (request, answer, streamed chunks) to this cassette, "
            "a JSON Lines file with secrets masked; resume appends to it."
        ),
    ),
]
"""``--record CASSETTE``: a run writes a new cassette, a resume appends a session."""

ReplayOpt = Annotated[
    Path | None,
    typer.Option(
        "--replay",
        metavar="CASSETTE",
        help=(
            "Answer every Oracle call from this cassette, offline (no server is "
            "contacted); a request that differs from the recording fails the run (exit 1)."
        ),
    ),
]
"""``--replay CASSETTE``: answer from the cassette; a differing request fails the run."""
