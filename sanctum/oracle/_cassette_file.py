"""Cassette files: their lines, digests, masking and matching helpers (private).

See :mod:`sanctum.oracle.cassette` for the format; this module reads and checks the
lines, computes request digests, and blanks and diffs requests for matching.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

from sanctum.errors import CassetteError
from sanctum.oracle.base import Oracle, OracleResponse, SpellCall

CASSETTE_VERSION = 1
"""The format version this sanctum writes and reads."""

MatchMode = Literal["request", "order"]
MATCH_MODES = ("request", "order")
_DIFF_LINES = 40
_OPTION_NAMES = (
    "options",
    "extra_body",
    "keep_alive",
    "temperature",
    "max_tokens",
    "max_new_tokens",
    "n_ctx",
    "spell_calling",
)


class Masks(Protocol):
    def mask(self, value: Any) -> Any: ...


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (unknown objects become their ``str``)."""
    return json.loads(json.dumps(value, default=str, allow_nan=True))


def request_digest(request: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of a request's ``messages`` and ``spells`` as canonical JSON.

    Args:
        request: A mapping with ``messages`` (a list of message dicts) and ``spells``
            (a list of JSON schemas, or None), and for a constrained call (constrained
            decoding) the ``schema`` the answer was held to; other keys are not digested.

    Returns:
        The digest, e.g. ``"sha256:9f86d0…"``.
    """
    body = {"messages": request.get("messages"), "spells": request.get("spells")}
    if request.get("schema") is not None:
        body["schema"] = request["schema"]
    return "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


def provider_of(oracle: Oracle) -> str:
    """A short provider name for an Oracle, from its class's module."""
    module = type(oracle).__module__.rsplit(".", 1)[-1]
    return {
        "ollama": "ollama",
        "openai_compat": "openai",
        "llamacpp": "llamacpp",
        "transformers": "transformers",
        "scripted": "scripted",
    }.get(module, type(oracle).__name__)


def options_of(oracle: Oracle) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in _OPTION_NAMES:
        value = getattr(oracle, name, None)
        if value is not None and isinstance(value, (str, int, float, bool, dict, list)):
            found[name] = value
    options: dict[str, Any] = jsonable(found)
    return options


def answer_dict(response: OracleResponse) -> dict[str, Any]:
    return {
        "text": response.text,
        "spell_calls": [call.to_message() for call in response.spell_calls],
        "usage": jsonable(response.usage),
    }


def answer_of(data: Mapping[str, Any]) -> OracleResponse:
    calls = [
        SpellCall(str(c["spell"]), copy.deepcopy(dict(c.get("arguments") or {})), c.get("call_id"))
        for c in data.get("spell_calls") or ()
    ]
    return OracleResponse(
        str(data.get("text", "")), calls, copy.deepcopy(dict(data.get("usage") or {}))
    )


def masked_chunks(chunks: list[tuple[float, str]], masker: Masks | None) -> list[tuple[float, str]]:
    """Mask each chunk; when a secret spans chunks, keep one masked chunk instead."""
    if masker is None or not chunks:
        return chunks
    each = [(offset, str(masker.mask(text))) for offset, text in chunks]
    whole = str(masker.mask("".join(text for _, text in chunks)))
    if "".join(text for _, text in each) == whole:
        return each
    return [(chunks[-1][0], whole)]


# ---------------------------------------------------------------------- the file


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a cassette file, checked for shape and version.

    Raises:
        CassetteError: If the file is missing, unreadable, not JSON Lines, not a
            sanctum cassette or of another format version.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(
            f"the cassette {path} does not exist; record it first with "
            "`sanctum run RITUAL --record " + str(path) + "`",
            path=str(path),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cannot read the cassette {path}: {exc}", path=str(path)) from None
    lines: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CassetteError(
                f"{path}:{number}:{exc.colno}: not a JSON line ({exc.msg}); a cassette is "
                "JSON Lines — re-record it",
                path=str(path),
            ) from None
        if not isinstance(item, dict):
            raise CassetteError(
                f"{path}:{number}:1: each cassette line is a JSON object", path=str(path)
            )
        lines.append(item)
    if not lines or lines[0].get("cassette") != "sanctum":
        raise CassetteError(
            f"{path}:1:1: not a sanctum cassette (its first line must be the header "
            '{"cassette": "sanctum", "version": 1, ...})',
            path=str(path),
        )
    version = lines[0].get("version")
    if version != CASSETTE_VERSION:
        raise CassetteError(
            f"{path}:1:1: cassette format version {version!r} is not supported (this "
            f"sanctum reads version {CASSETTE_VERSION}); re-record it",
            path=str(path),
        )
    _check_rules(lines[0], path)
    return lines


def _check_rules(header: Mapping[str, Any], path: Path) -> None:
    rules = [("", header)]
    oracles = header.get("oracles") or {}
    if not isinstance(oracles, dict):
        raise CassetteError(f"{path}:1:1: `oracles` must map oracle names to rules", path=str(path))
    rules += [(f"oracles.{name}.", value) for name, value in oracles.items()]
    for where, rule in rules:
        if not isinstance(rule, dict):
            raise CassetteError(f"{path}:1:1: `{where[:-1]}` must be a mapping", path=str(path))
        match = rule.get("match", "request")
        if match not in MATCH_MODES:
            raise CassetteError(
                f"{path}:1:1: `{where}match` is {match!r}; choose request or order",
                path=str(path),
            )
        ignore = rule.get("ignore", [])
        if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
            raise CassetteError(
                f"{path}:1:1: `{where}ignore` must be a list of regular expressions",
                path=str(path),
            )
        for pattern in ignore:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise CassetteError(
                    f"{path}:1:1: `{where}ignore` pattern {pattern!r} is no regular "
                    f"expression: {exc}",
                    path=str(path),
                ) from None


class Scoped:
    """A recorder or player seen from inside a Circle: sigils are ``circle/sigil``."""

    def __init__(self, base: Any, prefix: str) -> None:
        self.base = base
        self.prefix = prefix

    def add_secrets(self, secrets: Masks | None) -> None:
        self.base.add_secrets(secrets)

    def scoped(self, prefix: str) -> Scoped:
        return Scoped(self, prefix)

    def root(self) -> Any:
        base = self.base
        while isinstance(base, Scoped):
            base = base.base
        return base

    def full(self, sigil: str | None) -> str | None:
        names: list[str] = [] if sigil is None else [sigil]
        view: Any = self
        while isinstance(view, Scoped):
            names.insert(0, view.prefix)
            view = view.base
        return "/".join(names)


def blank(value: Any, patterns: list[str]) -> Any:
    """Every match of ``patterns`` in every string of ``value`` replaced by ``…``."""
    if isinstance(value, str):
        for pattern in patterns:
            value = re.sub(pattern, "…", value)
        return value
    if isinstance(value, list):
        return [blank(v, patterns) for v in value]
    if isinstance(value, dict):
        return {k: blank(v, patterns) for k, v in value.items()}
    return value


def request_diff(recorded: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    """A unified diff (at most 40 lines, each at most 200 characters) of two requests
    (their ``options`` left out: they are never compared)."""

    def lines(request: Mapping[str, Any]) -> list[str]:
        body = {key: value for key, value in request.items() if key != "options"}
        text = json.dumps(body, indent=2, ensure_ascii=False, sort_keys=True)
        return [line if len(line) <= 200 else line[:199] + "…" for line in text.splitlines()]

    diff = list(
        difflib.unified_diff(lines(recorded), lines(actual), "recorded", "actual", n=2, lineterm="")
    )
    if len(diff) > _DIFF_LINES:
        diff = [*diff[:_DIFF_LINES], f"… ({len(diff) - _DIFF_LINES} more diff lines)"]
    return "\n".join(diff)
