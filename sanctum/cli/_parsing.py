"""Command-line text into typed values: ``KEY=VALUE`` pairs and ``--oracle`` overrides."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sanctum.api import InputText, OracleOverride, RitualInputError

__all__ = ["parse_input_pairs", "parse_oracle_overrides"]


def parse_input_pairs(pairs: Iterable[str], *, option: str = "--input") -> dict[str, InputText]:
    """Read ``key=value`` pairs into a mapping of unread text.

    Every value is kept as an :class:`~sanctum.api.InputText`, read once the ritual is
    known for the declared type (an input declared ``type: string`` receives ``42`` as
    the text "42"; another reads it as JSON). Later pairs win over earlier ones.

    Args:
        pairs: Strings of the form ``key=value``.
        option: The command-line option the pairs came from, for messages.

    Returns:
        ``dict[str, InputText]`` mapping each key to its text.

    Raises:
        RitualInputError: If a pair has no ``=`` or an empty key.
    """
    values: dict[str, InputText] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise RitualInputError(
                f"{option} {pair!r} is not of the form key=value (e.g. {option} name=Ada)",
                source=option,
            )
        values[key] = InputText(text)
    return values


_HOST_PORT = re.compile(r"\A(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]+(/\S*)?\Z")
"""A bare ``host:port`` address, with an optional path (``127.0.0.1:8080/v1``)."""


def parse_oracle_overrides(pairs: Iterable[str]) -> dict[str, OracleOverride]:
    """Read ``NAME=provider:model[@URL]`` overrides (``--oracle local=ollama:qwen2.5:0.5b``).

    Only the first ``:`` after the ``=`` separates the provider from the model, so model
    tags with colons survive. A trailing ``@http://…`` (or ``@https://…``) gives the
    server's address, e.g. ``local=openai:qwen@http://127.0.0.1:8080/v1``; a bare
    ``@host:port[/path]`` means ``http://`` (as in a ritual file's ``base_url``). Without
    it the ritual's own address is kept when the provider stays the same.

    Returns:
        ``{name: OracleOverride}``.

    Raises:
        RitualInputError: If a pair is not of the form ``NAME=provider:model``, or its
            ``@URL`` is not an http(s) URL with a host (``@ftp://x``).
    """
    overrides: dict[str, OracleOverride] = {}
    for pair in pairs:
        name, sep, target = pair.partition("=")
        provider, colon, model = target.partition(":")
        if not sep or not name.strip() or not colon or not provider.strip() or not model.strip():
            raise RitualInputError(
                f"--oracle {pair!r} is not of the form NAME=provider:model "
                "(e.g. --oracle local=ollama:qwen2.5:0.5b)",
                source="--oracle",
            )
        model = model.strip()
        base_url = None
        head, at, address = model.rpartition("@")
        if at and head and "://" not in address and _HOST_PORT.match(address):
            address = f"http://{address}"  # a bare host:port, as the file format takes it
        if at and head and "://" in address:
            model, base_url = head, _oracle_address(pair, address)
        overrides[name.strip()] = OracleOverride(provider.strip(), model, base_url)
    return overrides


def _oracle_address(pair: str, address: str) -> str:
    """Check the ``@URL`` part of an ``--oracle`` override: http(s) with a host.

    Raises:
        RitualInputError: For another scheme or a URL without a host.
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018 - reading it validates the port
    except ValueError as exc:
        raise RitualInputError(
            f"--oracle {pair!r}: the address {address!r} is not a valid URL ({exc}); "
            "write e.g. @http://127.0.0.1:8080/v1",
            source="--oracle",
        ) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise RitualInputError(
            f"--oracle {pair!r}: the address {address!r} must be an http:// or https:// "
            "URL with a host, e.g. @http://127.0.0.1:8080/v1",
            source="--oracle",
        )
    return address
