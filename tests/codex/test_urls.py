"""The Codex URL forms, parsed in one place for the CLI, the facade and ritual files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.codex.urls import CODEX_FORMS, parse_codex_url
from sanctum.errors import SealError


@pytest.mark.parametrize(
    ("url", "kind", "path"),
    [
        ("memory:", "memory", None),
        ("memory", "memory", None),
        ("sqlite:///runs/c.db", "sqlite", Path("/base/runs/c.db")),
        ("sqlite:////abs/c.db", "sqlite", Path("/abs/c.db")),
        ("runs/c.sqlite3", "sqlite", Path("/base/runs/c.sqlite3")),
        ("postgresql://u@127.0.0.1/db", "postgres", None),
    ],
)
def test_accepted_forms(url: str, kind: str, path: Path | None) -> None:
    address = parse_codex_url(url, base=Path("/base"))
    assert address.kind == kind
    assert address.path == path


def test_postgres_scheme_is_normalised() -> None:
    assert parse_codex_url("postgres://u@h/db").url == "postgresql://u@h/db"


@pytest.mark.parametrize(
    "url",
    [
        "garbage",
        "memory:foo",
        "MEMORY:",
        "::::",
        "sqlite:///:memory:",
        "sqlite:c.db",
        "sqlite:///",
        "http://127.0.0.1/x",
        "runs/",
    ],
)
def test_everything_else_is_refused_naming_the_forms(url: str) -> None:
    with pytest.raises(SealError) as caught:
        parse_codex_url(url)
    assert CODEX_FORMS[0] in str(caught.value)
    assert caught.value.location == url
