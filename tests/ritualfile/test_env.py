from __future__ import annotations

import pytest

from sanctum.ritualfile.env import InterpolationError, interpolate, looks_secret, scrub


def test_plain_substitution_never_evaluates() -> None:
    text, done = interpolate("${A}-${B:-two}", {"A": "$(rm -rf /) ${B} {{ x }}"})
    assert text == "$(rm -rf /) ${B} {{ x }}-two"
    assert [(d.name, d.from_default) for d in done] == [("A", False), ("B", True)]


def test_escape_and_malformed() -> None:
    assert interpolate("$${A}", {})[0] == "${A}"
    with pytest.raises(InterpolationError, match="malformed variable reference") as caught:
        interpolate("ab ${1X}", {})
    assert caught.value.offset == 3


def test_unset_names_variable() -> None:
    with pytest.raises(InterpolationError, match="environment variable TOKEN is not set"):
        interpolate("${TOKEN}", {})


def test_secret_names_and_scrub() -> None:
    assert looks_secret("OPENAI_API_KEY")
    assert looks_secret("github_token")
    assert not looks_secret("OLLAMA_HOST")
    assert scrub("key sk-123 and sk-1234", ["sk-123", "sk-1234", ""]) == (
        "key [REDACTED] and [REDACTED]"
    )


def test_a_short_secret_is_masked_only_where_it_stands_alone() -> None:
    message = "invalid expression: unexpected 'x' near x-ray; key=x"
    assert scrub(message, ["x"]) == (
        "invalid expression: unexpected '[REDACTED]' near [REDACTED]-ray; key=[REDACTED]"
    )
    assert scrub("maxed out in the next context", ["x"]) == "maxed out in the next context"
    assert scrub("glued:sk-0123456789", ["sk-0123456789"]) == "glued:[REDACTED]"
