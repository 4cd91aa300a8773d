"""Who a run or a resume acts for: ``--as``, ``--role`` and ``--mandate-file``.

The Mandate (run context) comes from the host, never from the ritual file: these
options build one for ``sanctum run`` and ``sanctum resume``. Without them the run acts
for ``$USER`` with no roles, the safe default (role-restricted spells stay hidden).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from sanctum.api import Mandate

__all__ = ["AsOpt", "MandateFileOpt", "RoleOpt", "mandate_of"]

AsOpt = Annotated[
    str | None,
    typer.Option(
        "--as",
        metavar="NAME",
        help="Act for this principal (default: $USER, with no roles).",
    ),
]
RoleOpt = Annotated[
    list[str] | None,
    typer.Option("--role", metavar="ROLE", help="A role the principal holds. Repeatable."),
]
MandateFileOpt = Annotated[
    str | None,
    typer.Option(
        "--mandate-file",
        metavar="FILE",
        help='Who the run acts for, as JSON: {"principal", "roles", "subject", "attrs"}.',
    ),
]


def mandate_of(name: str | None, roles: list[str] | None, file: str | None) -> Mandate | None:
    """The Mandate the options describe (None: no option and no $USER).

    Raises:
        typer.BadParameter: If the file cannot be read or does not describe a Mandate,
            or it is combined with ``--as``/``--role``.
    """
    from sanctum.api import Mandate

    if file is not None:
        if name is not None or roles:
            raise typer.BadParameter("give either --mandate-file or --as/--role, not both")
        try:
            data = json.loads(Path(file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise typer.BadParameter(f"{file}: cannot read a mandate ({exc})") from exc
        if not isinstance(data, dict):
            raise typer.BadParameter(f"{file}: a mandate is a JSON object")
        try:
            return Mandate.from_json(data)
        except (TypeError, ValueError) as exc:
            raise typer.BadParameter(f"{file}: {exc}") from exc
    principal = name if name is not None else os.environ.get("USER")
    if not principal:
        if roles:
            raise typer.BadParameter("--role needs --as NAME (or $USER) to say who holds it")
        return None
    try:
        return Mandate(principal, frozenset(roles or ()))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
