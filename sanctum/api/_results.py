"""How a performance ended, and Omens as plain data."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sanctum.omens.events import Omen

__all__ = [
    "MAX_PLAIN_DEPTH",
    "NON_FINITE_TEXT",
    "QUEUED_KEY",
    "Origin",
    "RunResult",
    "RunStatus",
    "omen_to_dict",
    "origin_of",
    "plain",
    "resume_command",
    "ritual_digest",
    "usage_totals",
    "without_password",
]


RunStatus = Literal["done", "paused", "failed"]


def ritual_digest(path: str | Path) -> str:
    """The ritual file's content hash: ``"sha256:"`` plus 64 hex digits.

    Raises:
        OSError: If the file cannot be read.
    """
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def resume_command(
    invocation_id: str, codex_url: str | None = None, *, queued: bool = False
) -> str:
    """The exact ``sanctum resume`` command that continues ``invocation_id``.

    Every argument is quoted for a POSIX shell (``shlex.quote``), so the command
    round-trips when pasted, whatever the id or the path holds (spaces, quotes, ``;``).
    A password in ``codex_url`` is left out (``postgresql://user@host/db``): the command
    is shown and logged, and PostgreSQL reads the password from ``PGPASSWORD`` or
    ``~/.pgpass`` instead.

    Args:
        invocation_id: The Invocation to continue.
        codex_url: The Codex it lives in (None: the default, named by no option).
        queued: It ran on queue workers (see :attr:`Origin.queued`): the command adds
            ``--executor queue`` so that a worker continues it, where its ritual is.
    """
    import shlex

    words = ["sanctum", "resume", "--invocation", invocation_id]
    if codex_url:
        words += ["--codex", without_password(codex_url)]
    if queued:
        words += ["--executor", "queue"]
    return " ".join(shlex.quote(word) for word in words)


QUEUED_KEY = "queued"
"""Seal metadata a queue worker writes: ``{"ritual": path submitted, "queue": name}``.

The same key as ``sanctum.queue``'s; a worker also stamps each Seal with its ``lease``.
"""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an Invocation came from, as the metadata of its Seals (checkpoints) says.

    Attributes:
        ritual: The ritual file's path as its user knows it: for a run submitted to a
            queue, the path it was submitted from (a worker runs a private copy, in its
            cache); else the path the run recorded; None when nothing was recorded.
        queue: The queue it was submitted to, or None.
        queued: Whether queue workers run it (a :data:`QUEUED_KEY` record, or a worker's
            ``lease`` stamp on the Seal): a resume goes through the queue too.
    """

    ritual: str | None
    queue: str | None
    queued: bool


def origin_of(metadata: Mapping[str, Any]) -> Origin:
    """The :class:`Origin` a Seal's (or an InvocationSummary's) metadata records.

    Args:
        metadata: ``Seal.metadata``: ``{"ritual": {"path", ...}, "queued": {...}, ...}``.

    Returns:
        The Origin; its fields are None (and ``queued`` False) for what is not recorded.
    """
    queued = metadata.get(QUEUED_KEY)
    queued = queued if isinstance(queued, Mapping) else {}
    record = metadata.get("ritual")
    ran = record.get("path") if isinstance(record, Mapping) else None
    submitted = queued.get("ritual")
    queue = queued.get("queue")
    return Origin(
        ritual=submitted if isinstance(submitted, str) else ran if isinstance(ran, str) else None,
        queue=queue if isinstance(queue, str) else None,
        queued=bool(queued) or isinstance(metadata.get("lease"), Mapping),
    )


def without_password(url: str) -> str:
    """``url`` with the password of its user part left out (other text unchanged).

    ``postgresql://user:pw@host/db`` becomes ``postgresql://user@host/db`` (a
    ``password=`` query parameter is dropped too); a URL without a password, or text
    that is no URL, is returned as it is.
    """
    import re

    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    rest = re.sub(r"(?<=[?&])password=[^&#]*(&|(?=#)|$)", "", rest).replace("?#", "#")
    if rest.endswith(("?", "&")):
        rest = rest[:-1]
    end = len(rest)
    for stop in "/?#":
        found = rest.find(stop)
        if found != -1:
            end = min(end, found)
    netloc, tail = rest[:end], rest[end:]
    userinfo, at, host = netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return f"{scheme}://{rest}"
    return f"{scheme}://{userinfo.split(':', 1)[0]}@{host}{tail}"


DEFAULT_CODEX_URL = "sqlite:///.sanctum/codex.db"
"""The default codex as a URL (relative to the working directory), as results name it."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a performance ended.

    ``status`` is ``"done"`` (END reached), ``"paused"`` (an interrupt; resume it) or
    ``"failed"``; ``aether`` the final Aether (state dict) — for a pause, the Aether of
    the pause's Seal; for a failure, the last known one. ``reason`` and ``sigil`` say
    why and where a pause happened; ``seal_id`` the Seal to resume from; ``error`` and
    ``error_type`` describe a failure (``traceback``: the ritual code's own frames of
    it, masked like the message, or None); ``reasons`` maps every sigil that paused in
    the superstep to its reason (``reason``/``sigil`` are the first's); ``ritual`` is
    the ritual file's path;
    ``codex_url`` the store a resume must name (``"memory:"`` makes the result
    :attr:`ephemeral`: no other process can resume it, and ``to_dict()["resume"]`` is
    None; None here means the default codex, which ``to_dict()`` writes as
    :data:`DEFAULT_CODEX_URL`, or a Codex object passed from Python). ``seal_id`` is
    filled for every ending once a Seal was written: the last one (for a failure, the
    Seal to resume from; for a pause, the pause's). ``sigil`` names the failing sigil
    of a failure when the error says which.
    """

    status: RunStatus
    invocation_id: str
    aether: Mapping[str, Any]
    ritual: str | None = None
    reason: str | None = None
    sigil: str | None = None
    seal_id: str | None = None
    error: str | None = None
    error_type: str | None = None
    codex_url: str | None = None
    reasons: Mapping[str, str] | None = None
    traceback: str | None = None

    @property
    def resume_command(self) -> str:
        """The exact ``sanctum resume`` command that continues this invocation."""
        return resume_command(self.invocation_id, self.codex_url)

    @property
    def awaits_approval(self) -> bool:
        """Whether the pause waits for a decision on spell calls (``--approve``/``--reject``).

        True when the ``approvals`` Conduit holds a call whose decision is ``"pending"``:
        an agent with ``approve:`` paused before casting it.
        """
        approvals = self.aether.get("approvals") if self.status == "paused" else None
        if not isinstance(approvals, Mapping):
            return False
        return any(
            isinstance(entry, Mapping) and entry.get("decision") == "pending"
            for entry in approvals.values()
        )

    @property
    def ephemeral(self) -> bool:
        """Whether the Seals live in a ``memory:`` codex, gone when the process ends.

        Such an invocation cannot be resumed by another process (``sanctum resume``).
        """
        return self.codex_url == "memory:"

    @property
    def usage(self) -> dict[str, int] | None:
        """The token counters the Oracles reported (:func:`usage_totals`), or None."""
        return usage_totals(self.aether)

    def to_dict(self) -> dict[str, Any]:
        """The result as plain, strict JSON-ready data (``{"kind": "result", ...}``).

        ``usage`` sums the token counters the Oracles reported (:func:`usage_totals`),
        prompt-cache hits included; None when no transcript in the Aether has any.

        The Aether is converted as :func:`omen_to_dict` converts an Omen's values
        (non-finite floats become ``"NaN"``, ``"Infinity"``, ``"-Infinity"``).
        """
        data: dict[str, Any] = {"kind": "result"}
        data.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})
        data["aether"] = _plain(self.aether)
        if self.codex_url is None:  # the embedded default, relative to the working directory
            data["codex_url"] = DEFAULT_CODEX_URL
        if self.status == "paused":
            data["resume"] = None if self.ephemeral else self.resume_command
        data["usage"] = self.usage
        return data


_SUMMED = ("prompt_tokens", "completion_tokens", "cached_tokens")


def usage_totals(aether: Mapping[str, Any]) -> dict[str, int] | None:
    """The token counters of every consultation a transcript in the Aether records.

    Sums the ``usage`` the Oracles reported on the assistant messages of each list
    Conduit (an agent's transcript, an oracle sigil's ``messages``): ``consultations``
    (messages carrying usage), ``prompt_tokens``, ``completion_tokens`` and
    ``cached_tokens`` (prompt tokens the server's prefix cache held, where it says; see
    docs/oracles.md). A count no server reported is left out.

    Args:
        aether: The final (or paused, or last known) Aether.

    Returns:
        ``{"consultations": n, "prompt_tokens": n, ...}`` in tokens, or None when no
        message carries usage.
    """
    totals: dict[str, int] = {}
    consultations = 0
    for value in aether.values():
        if not isinstance(value, list):
            continue
        for message in value:
            usage = message.get("usage") if isinstance(message, Mapping) else None
            if not isinstance(usage, Mapping) or message.get("role") != "assistant":
                continue
            consultations += 1
            for key in _SUMMED:
                count = usage.get(key)
                if isinstance(count, int) and not isinstance(count, bool):
                    totals[key] = totals.get(key, 0) + count
    return {"consultations": consultations, **totals} if consultations else None


NON_FINITE_TEXT = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
"""How :func:`omen_to_dict` and :meth:`RunResult.to_dict` spell non-finite floats.

Strict JSON has no NaN or infinities, so these floats become strings (the spellings
JavaScript and Python's lenient JSON use); every other number stays a number.
"""

MAX_PLAIN_DEPTH = 200
"""Containers nested deeper than this become the string ``"<nested too deep>"``."""


def omen_to_dict(omen: Omen) -> dict[str, Any]:
    """An Omen as plain, strict JSON-ready data: ``{"kind": "omen", "type": ClassName, ...}``.

    Mappings become dicts (keys as strings), tuples, sets and frozensets lists; an
    echoed inner Omen (CircleEchoed) is converted recursively. NaN and ±infinity
    become the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``
    (:data:`NON_FINITE_TEXT`), so ``json.dumps(..., allow_nan=False)`` accepts the
    numbers; containers nested past :data:`MAX_PLAIN_DEPTH` become a marker string.
    Other objects JSON cannot carry are left for the caller's encoder.
    """
    data: dict[str, Any] = {"kind": "omen", "type": type(omen).__name__}
    for f in dataclasses.fields(omen):
        data[f.name] = _plain(getattr(omen, f.name))
    return data


def plain(value: Any) -> Any:
    """``value`` as plain, strict JSON-ready data, converted as :func:`omen_to_dict` does.

    Mappings become dicts with string keys; tuples, sets and frozensets lists; NaN and
    ±infinity their :data:`NON_FINITE_TEXT` strings; containers nested past
    :data:`MAX_PLAIN_DEPTH` a marker string. Used for Seal metadata (``sanctum seals
    --json``). Other objects JSON cannot carry are left for the caller's encoder.
    """
    return _plain(value)


def _plain(value: Any, depth: int = 0) -> Any:
    from sanctum.omens.events import Omen

    if isinstance(value, float):
        return value if math.isfinite(value) else NON_FINITE_TEXT[repr(float(value))]
    if isinstance(value, Omen):
        return omen_to_dict(value)
    if isinstance(value, Mapping | list | tuple | set | frozenset) and depth >= MAX_PLAIN_DEPTH:
        return "<nested too deep>"
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_plain(v, depth + 1) for v in value), key=repr)
    return value
