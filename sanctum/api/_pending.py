"""The reviewer's inbox: paused invocations, and decisions on calls awaiting approval.

:func:`pending` lists every paused Invocation of a Codex with its question, who started
it, since when it waits, and the exact commands that resume it (a plain interrupt) or
approve or reject it (calls awaiting approval).
:func:`approval_updates` turns ``--approve`` / ``--reject`` into the ``approvals``
updates a resume merges (one decision per call awaiting one, signed by the resumer).
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from sanctum.api._results import origin_of, resume_command
from sanctum.api._stores import _store
from sanctum.errors import RitualInputError, SealError
from sanctum.ritual.mandate import PRINCIPAL_KEY, Mandate

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, Seal
    from sanctum.ritualfile import RitualFile

__all__ = ["PendingInvocation", "approval_updates", "awaiting", "pending", "spell_roles"]


@dataclasses.dataclass(frozen=True, slots=True)
class PendingInvocation:
    """One paused Invocation, as a reviewer sees it.

    Attributes:
        invocation_id: The Invocation's id.
        question: The interrupt's question (for an approval: the calls and arguments).
        sigil: The Sigil that paused.
        started_by: The principal of the first Seal (who started the run), or None
            when that Seal records nobody (no ``--as`` and no ``$USER``, a queue worker).
        since: When it paused (epoch seconds, the pause Seal's timestamp).
        calls: Calls awaiting approval, ``{call_id: {"spell", "arguments"}}`` (empty
            for a plain interrupt).
        resume: The ``sanctum resume`` command that continues it, without the answer
            (add ``--update KEY=VALUE``); with ``--executor queue`` when it was queued.
        approve: The command that approves every waiting call (None for a plain
            interrupt: there is nothing to approve).
        reject: The command that rejects them (None for a plain interrupt).
        queued: Whether queue workers run it (a resume goes through the queue).
    """

    invocation_id: str
    question: str
    sigil: str | None
    started_by: str | None
    since: float
    calls: dict[str, Any]
    resume: str
    approve: str | None
    reject: str | None
    queued: bool = False

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
    first = seal
    async for earliest in store.history(invocation_id, values=False, on_damage="mark"):
        first = earliest  # the oldest Seal: who started the run
        break
    starter = first.metadata.get(PRINCIPAL_KEY)
    calls = awaiting(seal)
    queued = origin_of(seal.metadata).queued
    base = resume_command(invocation_id, url, queued=queued)
    return PendingInvocation(
        invocation_id=invocation_id,
        question=str(seal.interrupt.get("reason") or ""),
        sigil=seal.interrupt.get("sigil"),
        started_by=starter if isinstance(starter, str) and starter.strip() else None,
        since=seal.timestamp,
        calls=calls,
        resume=base,
        approve=f"{base} --approve" if calls else None,
        reject=f"{base} --reject --reason TEXT" if calls else None,
        queued=queued,
    )


def approval_updates(
    seal: Seal,
    decision: str,
    *,
    reason: str | None,
    mandate: Mandate | None,
    roles: Mapping[str, Collection[str] | None] | None = None,
) -> dict[str, Any]:
    """The ``approvals`` update deciding every call ``seal`` holds awaiting approval.

    The decision is refused up front, before anything is written, when nobody signs it
    (no Mandate, or an empty principal) or when the resumer could not cast a waiting
    Spell themselves (the Spell's manifest restricts it to roles they do not hold).

    Args:
        seal: The paused Seal being resumed.
        decision: ``"approve"`` or ``"reject"``.
        reason: Why (kept in the transcript and the Seal; shown to the model on reject).
        mandate: The resumer, whose principal signs the decision.
        roles: ``{spell name: allowed roles or None}`` of the Spells the paused agent
            may cast (see :func:`spell_roles`); a Spell missing here is not checked.

    Returns:
        ``{"approvals": {call_id: {"spell", "arguments", "decision", "by",
        "reason"?}}}``: the call is kept next to its decision.

    Raises:
        RitualInputError: If no call awaits a decision in that Seal, nobody signs the
            decision, or the resumer lacks the roles of a waiting Spell.
    """
    calls = awaiting(seal)
    if not calls:
        raise RitualInputError(
            "nothing awaits approval in this invocation; --approve and --reject decide "
            "calls an agent paused on (see `sanctum pending`)"
        )
    verb = "approve" if decision == "approve" else "reject"
    if mandate is None or not mandate.principal.strip():
        raise RitualInputError(
            f"who may {verb}? --{verb} needs the name of the person deciding; give "
            "--as NAME (with --role for the roles they hold)"
        )
    for call in calls.values():
        allowed = (roles or {}).get(str(call.get("spell")))
        if not mandate.holds(allowed):
            raise RitualInputError(
                f"{mandate.principal!r} may not {verb} a call of {call.get('spell')}: it "
                f"needs one of the roles {', '.join(sorted(allowed or ()))} and "
                f"{mandate.principal!r} holds "
                f"{', '.join(sorted(mandate.roles)) if mandate.roles else 'none'}; "
                "the invocation stays paused"
            )
    kept = {k: v for k, v in (seal.aether.get("approvals") or {}).items() if k in calls}
    out: dict[str, Any] = {}
    for call_id, call in calls.items():
        entry: dict[str, Any] = dict(kept.get(call_id) or call)
        entry.update(decision=decision, by=mandate.principal)
        if reason:
            entry["reason"] = reason
        out[call_id] = entry
    return {"approvals": out}


def spell_roles(file: RitualFile, sigil: str | None) -> dict[str, Collection[str] | None]:
    """The roles each Spell the paused agent Sigil may cast is restricted to.

    Reads the ``spell.json`` manifests of the Sigil's tome (of every tome when the
    Sigil is not a top-level ``agent:`` of the file), importing no spell code.

    Args:
        file: The ritual file being resumed.
        sigil: The Sigil the Seal paused at (``seal.interrupt["sigil"]``).

    Returns:
        ``{spell name: sorted role names, or None when anyone may cast it}``; empty
        when no tome can be read.
    """
    from sanctum.grimoire.tome import Tome

    spec = file.spec
    agent = getattr(spec.sigils.get(sigil or ""), "agent", None)
    tome = getattr(agent, "tome", None)
    names = [tome] if isinstance(tome, str) and tome in spec.tomes else list(spec.tomes)
    found: dict[str, Collection[str] | None] = {}
    for name in names:
        try:
            labels = Tome.manifest_labels(file.path.parent / spec.tomes[name].path)
        except (ValueError, OSError):
            continue
        for spell, label in labels.items():
            found.setdefault(spell, label["roles"])
    return found
