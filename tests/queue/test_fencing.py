"""The lease epoch fences every Seal write of a PostgresCodex (real PostgreSQL)."""

from __future__ import annotations

import pytest

from sanctum.codex.base import Seal
from sanctum.errors import ErrorCode, LeaseLost, SealError
from tests.codex.pg import drop_schema, fresh_schema, postgres_url

pytestmark = pytest.mark.postgres


def _seal(step: int, parent: str | None = None) -> Seal:
    return Seal(aether={"n": step}, frontier=("next",), superstep=step, metadata={"parent": parent})


async def test_a_taken_over_worker_writes_nothing() -> None:
    from sanctum.codex.postgres import PostgresCodex

    url, schema = postgres_url(), fresh_schema()
    first, second = PostgresCodex(url, schema=schema), PostgresCodex(url, schema=schema)
    try:
        assert await first.lease("inv", "worker-a") == 1
        one = _seal(1)
        await first.put_next("inv", one, expected_latest=None)
        assert await second.lease("inv", "worker-b") == 2
        with pytest.raises(LeaseLost) as caught:
            await first.put_next("inv", _seal(2, one.seal_id), expected_latest=one.seal_id)
        assert caught.value.code is ErrorCode.LEASE_LOST
        assert (caught.value.epoch, caught.value.current) == (1, 2)
        assert "taken over by another worker" in str(caught.value)
        assert isinstance(caught.value, SealError)
        # the claim the engine makes first is refused the same way
        with pytest.raises(LeaseLost):
            await first.claim("inv", {"pid": 1, "token": "t"})
        two = _seal(2, one.seal_id)
        await second.put_next("inv", two, expected_latest=one.seal_id)
        history = await second.list("inv")
        assert [seal.superstep for seal in history] == [1, 2]
        assert [seal.metadata["lease"]["epoch"] for seal in history] == [1, 2]
        assert history[1].metadata["lease"]["holder"] == "worker-b"
        lease = await second.lease_of("inv")
        assert lease is not None
        assert lease[:2] == (2, "worker-b")
    finally:
        await first.aclose()
        await second.aclose()
        drop_schema(url, schema)


async def test_a_fenced_write_still_checks_the_branch_head() -> None:
    from sanctum.codex.postgres import PostgresCodex

    url, schema = postgres_url(), fresh_schema()
    codex = PostgresCodex(url, schema=schema)
    try:
        await codex.lease("inv", "worker-a")
        one = _seal(1)
        await codex.put_next("inv", one, expected_latest=None)
        with pytest.raises(SealError, match="advanced by another writer") as caught:
            await codex.put_next("inv", _seal(2), expected_latest=None)
        assert not isinstance(caught.value, LeaseLost)
        codex.end_lease("inv")  # unfenced again: no epoch recorded
        await codex.put_next("inv", _seal(2, one.seal_id), expected_latest=one.seal_id)
        assert "lease" not in (await codex.get("inv") or _seal(0)).metadata
        assert await codex.lease_of("never") is None
    finally:
        await codex.aclose()
        drop_schema(url, schema)
