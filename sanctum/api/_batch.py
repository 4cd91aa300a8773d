"""A batch of invocations of one ritual in this process, a bounded number at a time.

For users who stay on one machine: ``sanctum run RITUAL --inputs batch.jsonl``. Every
input is checked before the first invocation starts; each invocation then runs to its
end, its pause or its failure, and one failing does not stop the others.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sanctum.codex.base import Codex

__all__ = ["BatchOutcome", "run_batch"]


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

    Args:
        ritual: The ritual file (YAML).
        inputs: One mapping of input values per invocation.
        codex: A Codex, a Codex URL or None (the ritual file's ``codex:``, else the
            default ``.sanctum/codex.db``).
        concurrency: Invocations in flight at once (at least 1).

    Returns:
        One :class:`BatchOutcome` per input, in input order (ids are fresh).

    Raises:
        ValueError: If ``concurrency`` is below 1.
        RitualFileError: If the ritual file is missing or malformed.
        RitualInputError: If an input does not fit (nothing runs).
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
    from sanctum.ritualfile import load

    file = load(ritual)
    bound = [file.bind_inputs(dict(given)) for given in inputs]
    store = open_store(codex, fallback=file.codex)
    gate = asyncio.Semaphore(concurrency)
    secrets = file.secrets | store.secrets
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

        return list(await asyncio.gather(*(one(values) for values in bound)))
    finally:
        await store.close()
