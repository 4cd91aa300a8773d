"""Helpers for tests against a real PostgreSQL server (``SANCTUM_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from sanctum.codex.postgres import PostgresCodex

__all__ = ["drop_schema", "fresh_schema", "postgres_codex", "postgres_url"]


def postgres_url() -> str:
    """The test server's URL; skips without one, but fails when ``CI`` is set."""
    url = os.environ.get("SANCTUM_TEST_POSTGRES_URL", "")
    if not url:
        message = (
            "SANCTUM_TEST_POSTGRES_URL is not set (e.g. postgresql://postgres@127.0.0.1:5432/"
            "postgres)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{message}; PostgreSQL tests must run in CI")
        pytest.skip(message)
    return url


def fresh_schema() -> str:
    """A schema name unique to this test, so parallel runs never collide."""
    return f"sanctum_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"


def drop_schema(url: str, schema: str) -> None:
    """Remove a test schema and everything in it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@asynccontextmanager
async def postgres_codex() -> AsyncIterator[PostgresCodex]:
    """A PostgresCodex over a fresh schema, dropped afterwards."""
    url = postgres_url()
    schema = fresh_schema()
    codex = PostgresCodex(url, schema=schema)
    try:
        yield codex
    finally:
        await codex.aclose()
        drop_schema(url, schema)
