"""An SSL mismatch with the PostgreSQL server: one error with the SSL fix, no retries."""

from __future__ import annotations

import time

import pytest

from sanctum.codex.postgres import PostgresCodex
from sanctum.errors import CodexUnavailableError, SealError
from tests.codex.pg import postgres_url

pytestmark = pytest.mark.postgres


async def test_a_url_asking_for_ssl_of_a_server_without_it_names_sslmode() -> None:
    url = postgres_url()
    joiner = "&" if "?" in url else "?"
    codex = PostgresCodex(f"{url}{joiner}sslmode=require", reconnect_for=30)
    started = time.monotonic()
    try:
        with pytest.raises(SealError) as caught:
            await codex.get("nobody")
    finally:
        await codex.aclose()
    if "ssl" not in str(caught.value).lower():
        pytest.skip("this server speaks SSL: no mismatch to show")
    message = str(caught.value)
    assert not isinstance(caught.value, CodexUnavailableError)  # no retry can fix it
    assert time.monotonic() - started < 10  # refused at once, not retried for 30 s
    assert "sslmode=disable" in message
    assert "Start the server" not in message
