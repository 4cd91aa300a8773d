"""The worker's Codex: once the worker is stopping, each segment ends at its next Seal.

:class:`DrainingCodex` is a :class:`~sanctum.codex.postgres.PostgresCodex` (the fenced
checkpoint store every segment of one worker shares) with one switch, :meth:`drain`.
After it, the next Seal a leased segment writes is committed as usual, and then
:class:`~sanctum.queue._segment.HandBack` is raised out of the write: the superstep in
flight has completed and is sealed, the next one never starts, and the worker defers
the segment again for any worker to go on from that Seal. A Seal that ends the segment
anyway (the last one, a pause, a failure record) is left to end it normally.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sanctum.codex.base import Seal
from sanctum.codex.claims import FAILURE_KEY
from sanctum.codex.frontier import END_NAME
from sanctum.codex.postgres import PostgresCodex
from sanctum.queue._segment import HandBack

__all__ = ["DrainingCodex", "continues"]


def continues(seal: Seal) -> bool:
    """Whether the run goes on after ``seal``: not its last Seal, a pause or a failure."""
    metadata: Mapping[str, Any] = seal.metadata
    if isinstance(metadata.get("interrupt"), Mapping) or FAILURE_KEY in metadata:
        return False
    return not all(name == END_NAME for name in seal.frontier)


class DrainingCodex(PostgresCodex):
    """A PostgresCodex whose leased segments stop after their next Seal once draining.

    Same arguments as :class:`~sanctum.codex.postgres.PostgresCodex`.
    """

    def __init__(self, conninfo: str, **options: Any) -> None:
        super().__init__(conninfo, **options)
        self.draining = False
        """Set by :meth:`drain`: every leased segment stops after its next Seal."""
        self._segments: set[str] = set()

    def drain(self) -> None:
        """Stop every leased segment right after its next Seal (see the module)."""
        self.draining = True

    async def lease(self, invocation_id: str, holder: str) -> int:
        """Lease as :meth:`PostgresCodex.lease`; the segment stops when draining.

        Raises:
            SealError: If the server cannot be used.
        """
        epoch = await super().lease(invocation_id, holder)
        self._segments.add(invocation_id)
        return epoch

    def end_lease(self, invocation_id: str) -> None:
        """End the fencing as :meth:`PostgresCodex.end_lease` does."""
        self._segments.discard(invocation_id)
        super().end_lease(invocation_id)

    async def put_next(
        self, invocation_id: str, seal: Seal, *, expected_latest: str | None
    ) -> None:
        """Append as :meth:`PostgresCodex.put_next`; then, when draining, hand back.

        Raises:
            HandBack: After the Seal was committed, when the worker is draining, the
                Invocation is leased by a segment here and the run would go on.
            SealError: As :meth:`PostgresCodex.put_next` (nothing was written).
            LeaseLost: If another worker took the Invocation over.
        """
        await super().put_next(invocation_id, seal, expected_latest=expected_latest)
        if self.draining and invocation_id in self._segments and continues(seal):
            raise HandBack(invocation_id)
