"""The reviewer's inbox: paused invocations, and decisions on calls awaiting approval.

:func:`pending` lists every paused Invocation of a Codex with its question, who started
it, since when it waits, and the exact commands that approve or reject it.
:func:`approval_updates` turns ``--approve`` / ``--reject`` into the ``approvals``
updates a resume merges (one decision per call awaiting one, signed by the resumer).
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sanctum.api._results import resume_command
from sanctum.api._stores import _store
from sanctum.errors import RitualInputError, SealError
from sanctum.ritual.mandate import PRINCIPAL_KEY, Mandate

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, Seal

__all__ = ["PendingInvocation", "approval_updates", "awaiting", "pending"]


@dataclasses.dataclass(frozen=True, slots=True)
class PendingInvocation:
    """One paused Invocation, as a reviewer sees it.

    Attributes:
        invocation_id: The Invocation's id.
        question: The interrupt's question (for an approval: the calls and arguments).
        sigil: The Sigil that paused.
        started_by: The principal of the first Seal (who started the run), or None.
        since: When it paused (epoch seconds, the pause Seal's timestamp).
        calls: Calls awaiting approval, ``{call_id: {"spell", "arguments"}}`` (empty
            for a plain interrupt).
        approve: The command that approves every waiting call (or resumes).
        reject: The command that rejects them (None for a plain interrupt).
    """

    invocation_id: str
    question: str
    sigil: str | None
    started_by: str | None
    since: float
    calls: dict[str, Any]
    approve: str
    reject: str | None

    def to_dict(self) -> dict[str, Any]:
        """The entry as a JSON object (``sanctum pending --json``)."""
        return dataclasses.asdict(self)


def awaiting(seal: Seal) -> dict[str, Any]:
    """The calls a paused Seal holds awaiting a decision (``approvals`` Conduit).

    Returns:
        ``{call_id: {"spell": str, "arguments": dict}}``, in the order they were asked.
    """
    approvals = seal.aether.get("approvals")
    if not isinstance(approvals, Mapping):
        return {}
    return {
        str(call_id): {"spell": entry.get("spell"), "arguments": entry.get("arguments")}
        for call_id, entry in approvals.items()
        if isinstance(entry, Mapping) and entry.get("decision") == "pending"
    }


async def pending(
    codex: Codex | str | None = None, *, limit: int = 1000
) -> builtins.list[PendingInvocation]:
    """Every paused Invocation of a Codex, newest first.

    Args:
        codex: A Codex, a Codex URL or None for the default ``.sanctum/codex.db``.
        limit: How many of the most recently updated Invocations to look at.

    Returns:
        One :class:`PendingInvocation` per paused Invocation.

    Raises:
        SealError: If the store cannot be opened or enumerated.
    """
    store, owned = _store(codex)
    url = codex if isinstance(codex, str) else None
    try:
        try:
            found = await store.invocations(limit)
        except NotImplementedError as exc:
            raise SealError(str(exc)) from exc
        out = []
        for summary in found:
            if summary.status != "paused":
                continue
            item = await _entry(store, summary.invocation_id, url)
            if item is not None:
                out.append(item)
        return out
    finally:
        if owned:
            await store.aclose()


async def _entry(store: Codex, invocation_id: str, url: str | None) -> PendingInvocation | None:
    seal = await store.get(invocation_id)
    if seal is None or seal.interrupt is None:
        return None
    history = await store.list(invocation_id)
    first = history[0] if history else seal
    starter = first.metadata.get(PRINCIPAL_KEY)
    calls = awaiting(seal)
    base = resume_command(invocation_id, url)
    return PendingInvocation(
        invocation_id=invocation_id,
        question=str(seal.interrupt.get("reason") or ""),
        sigil=seal.interrupt.get("sigil"),
        started_by=starter if isinstance(starter, str) else None,
        since=seal.timestamp,
        calls=calls,
        approve=f"{base} --approve" if calls else f"{base} --update KEY=VALUE",
        reject=f"{base} --reject --reason TEXT" if calls else None,
    )


def approval_updates(
    seal: Seal, decision: str, *, reason: str | None, mandate: Mandate | None
) -> dict[str, Any]:
    """The ``approvals`` update deciding every call ``seal`` holds awaiting approval.

    Args:
        seal: The paused Seal being resumed.
        decision: ``"approve"`` or ``"reject"``.
        reason: Why (kept in the transcript and the Seal; shown to the model on reject).
        mandate: The resumer, whose principal signs the decision.

    Returns:
        ``{"approvals": {call_id: {"decision", "by", "reason"?}}}``.

    Raises:
        RitualInputError: If no call awaits a decision in that Seal.
    """
    calls = awaiting(seal)
    if not calls:
        raise RitualInputError(
            "nothing awaits approval in this invocation; --approve and --reject decide "
            "calls an agent paused on (see `sanctum pending`)"
        )
    entry: dict[str, Any] = {"decision": decision, "by": mandate.principal if mandate else ""}
    if reason:
        entry["reason"] = reason
    return {"approvals": {call_id: dict(entry) for call_id in calls}}
