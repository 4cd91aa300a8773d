"""A batch of invocations of one ritual in this process, a bounded number at a time.

For users who stay on one machine: ``sanctum run RITUAL --inputs batch.jsonl``. Every
input is checked before the first invocation starts — every bad line is reported, not
only the first (:func:`read_batch`, :func:`run_batch`); each invocation then runs to its
end, its pause or its failure, and one failing does not stop the others.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanctum.errors import RitualInputError

if TYPE_CHECKING:
    from sanctum.codex.base import Codex

__all__ = ["MAX_LISTED", "BatchLine", "BatchOutcome", "read_batch", "run_batch"]

MAX_LISTED = 20
"""Bad lines of a batch listed one by one; the rest are counted (``… and N more``)."""


@dataclass(frozen=True, slots=True, eq=False)
class BatchLine(Mapping[str, Any]):
    """The input values of one invocation, read from one line of a batch file.

    A read-only mapping of input names to values (what :func:`run_batch` takes), which
    also says where it was written, so a value that does not fit the ritual is reported
    at its line.
    """

    inputs: Mapping[str, Any]
    path: str
    line: int

    @property
    def where(self) -> str:
        """``path:line`` (the line is 1-based)."""
        return f"{self.path}:{self.line}"

    def __getitem__(self, key: str) -> Any:
        return self.inputs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.inputs)

    def __len__(self) -> int:
        return len(self.inputs)


def read_batch(path: str | Path) -> list[BatchLine]:
    """The input mappings of a JSON Lines batch file, one per line that holds one.

    Blank lines and lines whose first non-blank character is ``#`` (comments) are
    skipped; every other line must be one JSON object. Every bad line is found before
    anything is returned.

    Args:
        path: The batch file (UTF-8 JSON Lines); ``"-"`` reads standard input (its
            lines are then reported as ``<stdin>:line``).

    Returns:
        One :class:`BatchLine` per JSON object, in file order.

    Raises:
        RitualInputError: If the file cannot be read, holds no JSON object at all, or
            has bad lines: then one ``path:line: reason`` line each (at most
            :data:`MAX_LISTED`, then ``… and N more bad lines``); ``source`` is the path.
    """
    import json
    import sys

    where = "<stdin>" if str(path) == "-" else str(path)
    try:
        if str(path) == "-":
            text = sys.stdin.buffer.read().decode("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RitualInputError(
            f"cannot read {where}: {exc.strerror or exc}", source=where
        ) from None
    except UnicodeDecodeError as exc:
        raise RitualInputError(
            f"cannot read {where}: not UTF-8 text ({exc.reason} at byte {exc.start})",
            source=where,
        ) from None
    batch: list[BatchLine] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}:{number}: not JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(value, dict):
            kind = _JSON_KINDS.get(type(value), "null")
            problems.append(f"{where}:{number}: each line must be a JSON object, not {kind}")
            continue
        batch.append(BatchLine(value, where, number))
    if problems:
        raise RitualInputError(_listed(problems, f"bad batch file {where}"), source=where)
    if not batch:
        raise RitualInputError(
            f"{where} holds no invocation: write one JSON object of inputs per line "
            '(such as {"name": "Ada"}); blank lines and # comments are skipped',
            source=where,
        )
    return batch


_JSON_KINDS: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}
"""How a batch line that is no JSON object is named (anything else is ``null``)."""


def _listed(problems: Sequence[str], headline: str, noun: str = "line") -> str:
    """``headline (N bad lines); nothing ran:`` then one problem per line, the list cut
    at :data:`MAX_LISTED` (``… and N more bad lines``)."""
    count = len(problems)
    shown = list(problems[:MAX_LISTED])
    if count > MAX_LISTED:
        shown.append(f"… and {count - MAX_LISTED} more bad {noun}s")
    counted = f"{count} bad {noun}{'' if count == 1 else 's'}"
    return "\n".join([f"{headline} ({counted}); nothing ran:", *shown])


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """How one invocation of a batch ended.

    ``status`` is ``done``, ``paused`` (an interrupt: resume it by its id) or
    ``failed``; ``error`` is the failure's message (None otherwise).
    """

    invocation_id: str
    status: str
    error: str | None = None


def run_batch(
    ritual: str | Path,
    inputs: Sequence[Mapping[str, Any]],
    *,
    codex: Codex | str | None = None,
    concurrency: int = 4,
) -> list[BatchOutcome]:
    """Run one invocation per input mapping, at most ``concurrency`` at once.

    Every input is bound (checked against the ritual's ``inputs:``) before the first
    invocation starts; all that do not fit are reported together. An oracle's
    ``max_concurrency`` bounds the calls every invocation makes to its endpoint
    together; ``max_concurrency_global`` takes PostgreSQL advisory-lock slots when the
    codex is a PostgreSQL URL (shared with the workers on it), else it bounds this
    process and warns once.

    Args:
        ritual: The ritual file (YAML).
        inputs: One mapping of input values per invocation (a :class:`BatchLine` from
            :func:`read_batch` is reported at its ``path:line``).
        codex: A Codex, a Codex URL or None (the ritual file's ``codex:``, else the
            default ``.sanctum/codex.db``).
        concurrency: Invocations in flight at once (at least 1).

    Returns:
        One :class:`BatchOutcome` per input, in input order (ids are fresh).

    Raises:
        ValueError: If ``concurrency`` is below 1.
        RitualFileError: If the ritual file is missing or malformed.
        RitualInputError: If inputs do not fit (nothing runs): one ``path:line: reason``
            (or ``input N: reason``) line each, at most :data:`MAX_LISTED`.
        SealError: If the codex cannot be opened.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    return asyncio.run(_run_batch(ritual, inputs, codex, concurrency))


async def _run_batch(
    ritual: str | Path,
    inputs: Sequence[Mapping[str, Any]],
    codex: Codex | str | None,
    concurrency: int,
) -> list[BatchOutcome]:
    from sanctum.api._stores import open_store
    from sanctum.errors import Interrupt, SanctumError
    from sanctum.oracle.limits import shared_slots
    from sanctum.ritualfile import load

    file = load(ritual)
    bound = _bind_all(file, inputs)
    store = open_store(codex, fallback=file.codex)
    gate = asyncio.Semaphore(concurrency)
    secrets = file.secrets | store.secrets
    slots = _endpoint_slots(codex if codex is not None else file.codex)
    try:

        async def one(values: dict[str, Any]) -> BatchOutcome:
            ident = uuid.uuid4().hex
            async with gate:  # each its own Rite: Oracles (a script, a client) per run
                rite = file.compile(codex=store.codex, secrets=secrets)
                try:
                    await rite.ainvoke(values, invocation_id=ident, metadata=file.metadata)
                except Interrupt:
                    return BatchOutcome(ident, "paused")
                except SanctumError as exc:
                    return BatchOutcome(ident, "failed", str(exc))
                finally:
                    await rite.aclose()
            return BatchOutcome(ident, "done")

        with shared_slots(slots):  # every invocation's Oracles share the endpoint limits
            return list(await asyncio.gather(*(one(values) for values in bound)))
    finally:
        if slots is not None:
            await slots.aclose()
        await store.close()


def _endpoint_slots(codex: object) -> Any:
    """PostgreSQL advisory-lock slots for ``max_concurrency_global`` when ``codex`` is
    a PostgreSQL URL (shared with the workers and batches of that database), else None
    (the bound then holds in this process, with a warning)."""
    if isinstance(codex, str) and codex.startswith(("postgresql://", "postgres://")):
        from sanctum.queue import PostgresSlots

        return PostgresSlots(codex)
    return None


def _bind_all(file: Any, inputs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every input bound by ``file`` (a RitualFile); all misfits raised together.

    Raises:
        RitualInputError: Listing each input that does not fit, at its line.
    """
    bound: list[dict[str, Any]] = []
    problems: list[str] = []
    lines = 0
    for number, given in enumerate(inputs, 1):
        try:
            bound.append(file.bind_inputs(dict(given)))
        except RitualInputError as exc:
            lines += isinstance(given, BatchLine)
            where = given.where if isinstance(given, BatchLine) else f"input {number}"
            problems.append(f"{where}: {exc}")
    if problems:
        noun = "line" if lines == len(problems) else "input"
        raise RitualInputError(_listed(problems, "inputs do not fit the ritual", noun))
    return bound
