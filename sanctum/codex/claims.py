"""Who is running an Invocation, and how each call of it ended.

A call of ``Rite.ainvoke``/``astream`` with a Codex *claims* its Invocation before it
runs anything: it appends a claim Seal through ``put_next(expected_latest=...)`` — the
same compare-and-set on the head Seal that every superstep's Seal uses — so of two
processes starting or resuming one Invocation at once exactly one claims it and the
other runs nothing. Every Seal the call writes carries the holder (metadata ``claim``),
which is how a later caller sees that the Invocation is still being run.

The holder record, ``metadata["claim"]``, is ``{"pid": int, "host": str, "started":
int | None, "since": float, "call": "run" | "resume", "token": str}``: the process id,
the host name, the process's start time in clock ticks since boot (Linux, to tell a
reused pid apart; None elsewhere), when the call began (epoch seconds), what kind of
call it is, and a token unique to the call.

A failure leaves a Seal too (see :data:`FAILURE_KEY`), so that every outcome of an
Invocation is recorded: :func:`seal_status` reads it back. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
import traceback
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sanctum.codex.frontier import END_NAME

__all__ = [
    "CLAIM_KEY",
    "CLAIM_LEASE",
    "FAILURE_KEY",
    "LEDGER_PREFIX",
    "STATUSES",
    "claim_alive",
    "describe_holder",
    "failure_record",
    "hold",
    "ledger_id",
    "new_claim",
    "release",
    "seal_status",
    "user_traceback",
]

CLAIM_KEY = "claim"
"""Metadata key of the holder record on every Seal a call writes."""

FAILURE_KEY = "failure"
"""Metadata key of a failure record: ``{"type": str, "message": str, "traceback": str
| None, "sigil": str | None, "superstep": int}`` — the error's class name, its message
and the ritual code's own frames (both masked with the Rite's Secrets), the Sigil that
failed when one did, and the superstep the failure happened in."""

CLAIM_LEASE = 900.0
"""Seconds after its latest Seal that a claim held by a process on *another* host is
still taken as live (its process cannot be checked from here). A holder on this host
is checked directly (is its process still there?)."""

STATUSES = ("running", "paused", "done", "failed", "incomplete")
"""Every status :func:`seal_status` gives."""

_HOST = socket.gethostname()
_ACTIVE: set[str] = set()
"""Tokens of the calls of this process that are still running."""
_PACKAGE = str(Path(__file__).resolve().parent.parent)


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    try:  # the command name (field 2) may hold spaces and parentheses: split after it
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


LEDGER_PREFIX = "sanctum-claims:"
"""Invocation ids starting with this hold claim ledgers, not runs (listings skip them)."""


def ledger_id(invocation_id: str) -> str:
    """The id of the claim ledger of ``invocation_id`` (a fixed-length digest)."""
    digest = hashlib.sha256(invocation_id.encode("utf-8", "surrogatepass")).hexdigest()
    return LEDGER_PREFIX + digest[:40]


def new_claim(call: str) -> dict[str, Any]:
    """A holder record for a call of this process (``call`` is "run" or "resume")."""
    pid = os.getpid()
    return {
        "pid": pid,
        "host": _HOST,
        "started": _start_ticks(pid),
        "since": time.time(),
        "call": call,
        "token": uuid.uuid4().hex,
    }


def hold(claim: Mapping[str, Any]) -> None:
    """Mark the call of ``claim`` (a record of this process) as running."""
    _ACTIVE.add(str(claim.get("token")))


def release(claim: Mapping[str, Any]) -> None:
    """Mark the call of ``claim`` as ended (however it ended). Idempotent."""
    _ACTIVE.discard(str(claim.get("token")))


def claim_alive(claim: Any, sealed_at: float, *, now: float | None = None) -> bool:
    """Whether the holder ``claim`` (a metadata record) may still be running.

    On this host: its process exists (and, where the start time is known, is the same
    process, not a reused pid). On another host: its latest Seal (``sealed_at``, epoch
    seconds) is younger than :data:`CLAIM_LEASE`. A record that is not a mapping with
    an int ``pid`` is not live.
    """
    if not isinstance(claim, Mapping):
        return False
    pid = claim.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    if claim.get("host") != _HOST:
        return (time.time() if now is None else now) - sealed_at < CLAIM_LEASE
    if pid == os.getpid():  # a call of this process: is it still running?
        return claim.get("token") in _ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    except OSError:
        return False
    started = claim.get("started")
    if isinstance(started, int):
        current = _start_ticks(pid)
        if current is not None and current != started:
            return False  # the pid was reused by another process
    return True


def seal_status(
    metadata: Mapping[str, Any], frontier: tuple[str, ...], *, running: bool = False
) -> str:
    """The status an Invocation has when this is its latest Seal.

    ``"paused"`` (an interrupt), ``"failed"`` (a failure record), ``"done"`` (END
    reached), ``"running"`` (``running``: a live call holds it, see
    ``Codex.holder``) or ``"incomplete"`` (stopped by a signal or a crash).
    """
    if isinstance(metadata.get("interrupt"), Mapping):
        return "paused"
    if isinstance(metadata.get(FAILURE_KEY), Mapping):
        return "failed"
    if all(name == END_NAME for name in frontier):
        return "done"
    if running:
        return "running"
    return "incomplete"


def describe_holder(claim: Any) -> str:
    """``pid 123 on host box (a resume begun 2026-01-02 03:04:05 UTC)``."""
    if not isinstance(claim, Mapping):
        return "another process"
    when = claim.get("since")
    began = (
        time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))
        if isinstance(when, (int, float)) and not isinstance(when, bool)
        else "at an unknown time"
    )
    call = claim.get("call") if claim.get("call") in ("run", "resume") else "call"
    return f"pid {claim.get('pid')} on host {claim.get('host')} (a {call} begun {began})"


def user_traceback(error: BaseException) -> str | None:
    """The frames of the ritual's own code in ``error``'s original failure, as text.

    Follows ``__cause__`` to the innermost exception (a SigilExecutionError's cause is
    the Sigil's own error) and keeps the frames outside sanctum and asyncio. Returns
    ``"Traceback (most recent call last):\\n  File ..., line ..., in ...\\n    ...\\n
    ValueError: ..."``, or None when no frame of the ritual's code is involved.
    """
    original = error
    seen = {id(original)}
    while original.__cause__ is not None and id(original.__cause__) not in seen:
        original = original.__cause__
        seen.add(id(original))
    frames = [
        frame
        for frame in traceback.extract_tb(original.__traceback__)
        if not frame.filename.startswith(_PACKAGE) and "/asyncio/" not in frame.filename
    ]
    if not frames:
        return None
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    lines.extend(traceback.format_exception_only(type(original), original))
    return "".join(lines).rstrip("\n")


def failure_record(
    error: BaseException, *, sigil: str | None, superstep: int, mask: Any = None
) -> dict[str, Any]:
    """The :data:`FAILURE_KEY` record of ``error`` (``mask``: a text masker or None)."""
    message = str(error) or type(error).__name__
    trace = user_traceback(error)
    if mask is not None:
        message = mask(message)
        trace = mask(trace) if trace is not None else None
    return {
        "type": type(error).__name__,
        "message": message,
        "traceback": trace,
        "sigil": sigil,
        "superstep": superstep,
    }
