"""One segment of an Invocation on a queue worker: lease, load, run, report.

A segment is idempotent: a start job that finds Seals resumes from the latest; a resume
job whose token a Seal of the history already records resumes without its updates. So
a segment handed back by a stopping worker (:class:`HandBack`, raised by the worker's
Codex right after a Seal was written) or taken from a dead one is simply deferred
again, with the same arguments, and goes on from the latest Seal.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sanctum.codex.claims import FAILURE_KEY
from sanctum.codex.frontier import END_NAME
from sanctum.errors import Interrupt, LeaseLost, SealError
from sanctum.queue._project import PROJECT_KEY

__all__ = ["QUEUED_KEY", "TOKEN_KEY", "HandBack", "Outcome", "run_segment", "state_of"]

TOKEN_KEY = "resume_token"
"""Metadata key of the resume token on every Seal of a queued resume."""

QUEUED_KEY = "queued"
"""Metadata key, on every Seal a worker writes, of ``{"ritual": the path it was
submitted from, "queue": its queue}`` (the worker runs a private copy of the file)."""


class HandBack(BaseException):
    """A stopping worker's segment stops here: its latest Seal is written.

    Raised by the worker's Codex out of the Seal write that follows a SIGTERM or
    Ctrl-C, so the superstep in flight completed and is sealed and the next one never
    starts. A BaseException, like a cancellation: the engine records no failure for
    it. :func:`run_segment` reports it as the outcome ``handed-back``.
    """


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a segment ended: ``done``, ``paused``, ``handed-back`` (its worker is
    stopping; deferred again), ``lease-lost``, ``skipped`` (nothing to run) or
    ``failed``; the epoch it ran under, Seals written, wall seconds."""

    invocation_id: str
    outcome: str
    epoch: int
    seals: int
    seconds: float

    def line(self, worker: str) -> str:
        """One structured log line: ``segment worker=... invocation=... ...``; for a
        ``lease-lost`` one, ending ``: wrote N Seal(s) before it was taken over;
        nothing after``."""
        line = (
            f"segment worker={worker} invocation={self.invocation_id} epoch={self.epoch} "
            f"outcome={self.outcome} seals={self.seals} seconds={self.seconds:.3f}"
        )
        if self.outcome == "lease-lost":
            line += f": wrote {self.seals} Seal(s) before it was taken over; nothing after"
        return line


def state_of(head: Any) -> str:
    """``new`` (no Seal), ``paused``, ``failed``, ``done`` or ``incomplete`` (stopped
    between supersteps) of an Invocation's head Seal."""
    if head is None:
        return "new"
    if isinstance(head.metadata.get("interrupt"), Mapping):
        return "paused"
    if isinstance(head.metadata.get(FAILURE_KEY), Mapping):
        return "failed"
    if all(name == END_NAME for name in head.frontier):
        return "done"
    return "incomplete"


async def _token_applied(codex: Any, invocation_id: str, token: str) -> bool:
    async for seal in codex.history(invocation_id, values=False):
        if seal.metadata.get(TOKEN_KEY) == token:
            return True
    return False


async def run_segment(
    codex: Any, worker: str, ritual_path: Path, args: Mapping[str, Any]
) -> Outcome:
    """Run one segment job's arguments on ``codex`` (a PostgresCodex) as ``worker``.

    Raises:
        SanctumError: What the ritual raised (the job fails; the Codex holds a
            failure Seal). LeaseLost, and a head conflict once the lease moved on,
            are reported as the outcome ``lease-lost``, not raised; a
            :class:`HandBack` as ``handed-back``.
    """
    from sanctum.ritualfile import load

    inv = str(args["invocation_id"])
    began = time.monotonic()
    epoch = await codex.lease(inv, worker)
    before = 0
    try:
        head = await codex.get(inv)
        before = await _count(codex, inv)
        state = state_of(head)
        call: dict[str, Any] | None = None
        project = args.get("project")
        file = _loaded(ritual_path, load, project)
        metadata = dict(file.metadata)
        if isinstance(project, Mapping):  # the checked files it runs, on every Seal
            metadata[PROJECT_KEY] = dict(project)
        origin = args.get("origin") or (head.metadata.get(QUEUED_KEY) if head else None)
        if isinstance(origin, Mapping):  # where it was submitted from, on every Seal
            metadata[QUEUED_KEY] = dict(origin)
        if state == "new" and args.get("kind") == "start":
            call = {"input": dict(args.get("inputs") or {})}
        elif args.get("kind") == "resume" and state in ("paused", "incomplete", "failed"):
            token = str(args.get("token") or "")
            if token and not await _token_applied(codex, inv, token):
                updates = dict(args.get("updates") or {})
                call = {"updates": file.bind_updates(updates) if args.get("bind") else updates}
                metadata[TOKEN_KEY] = token
            elif state != "paused":
                call = {}
        elif state == "incomplete":  # a start segment taken over: go on from the head
            call = {}
        if call is None:
            outcome = "skipped"
        else:
            rite = file.compile(codex=codex)
            try:
                await rite.ainvoke(
                    call.pop("input", None), invocation_id=inv, metadata=metadata, **call
                )
                outcome = "done"
            except Interrupt:
                outcome = "paused"
            finally:
                with contextlib.suppress(Exception):  # the Oracles' connections it built
                    await rite.aclose()
    except HandBack:
        outcome = "handed-back"
    except LeaseLost:
        outcome = "lease-lost"
    except SealError:
        held = await codex.lease_of(inv)
        if held is not None and held[0] == epoch:
            raise
        outcome = "lease-lost"  # taken over between the fence and the head check
    finally:
        codex.end_lease(inv)
    if outcome == "lease-lost":  # the taker's Seals are not this segment's
        seals = await _written(codex, inv, epoch, worker)
    else:
        seals = await _count(codex, inv) - before
    return Outcome(inv, outcome, epoch, seals, time.monotonic() - began)


_FILES: dict[tuple[Path, str], Any] = {}
"""Ritual files loaded by this process, by path and version (a stored ritual's path
holds its digest; a project's file is versioned by the manifest it was checked by)."""


def _loaded(path: Path, load: Any, project: Any = None) -> Any:
    """``load(path)``, once per path and version: parsing YAML blocks the loop (and
    the heartbeat)."""
    version = ""
    if isinstance(project, Mapping):
        version = json.dumps(project.get("files"), sort_keys=True, default=str)
    if (path, version) not in _FILES:
        _FILES[path, version] = load(path)
    return _FILES[path, version]


async def _count(codex: Any, invocation_id: str) -> int:
    return sum([1 async for _ in codex.history(invocation_id, values=False)])


async def _written(codex: Any, invocation_id: str, epoch: int, worker: str) -> int:
    """Seals of ``invocation_id`` stamped with this lease (``epoch`` held by ``worker``)."""
    count = 0
    async for seal in codex.history(invocation_id, values=False):
        lease = seal.metadata.get("lease")
        if isinstance(lease, Mapping) and (lease.get("epoch"), lease.get("holder")) == (
            epoch,
            worker,
        ):
            count += 1
    return count
