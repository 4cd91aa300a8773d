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


def test_a_value_in_a_url_s_user_information_is_percent_encoded() -> None:
    env = {"PW": "PWSEKRIT@77/77", "USER": "me", "HOST": "db:5432", "ODD": "a%41b c%"}
    text, done = interpolate("http://user:${PW}@127.0.0.1:9/v1", env)
    assert text == "http://user:PWSEKRIT%4077%2F77@127.0.0.1:9/v1"
    assert done[0].value == "PWSEKRIT%4077%2F77"  # what the text holds, at done[0].at
    assert text[done[0].at : done[0].at + len(done[0].value)] == done[0].value
    text, _ = interpolate("postgresql://${USER}:${PW}@${HOST}/x", env)
    assert text == "postgresql://me:PWSEKRIT%4077%2F77@db:5432/x"
    assert interpolate("http://u:${ODD}@h/", env)[0] == "http://u:a%41b%20c%25@h/"  # %41 kept
    assert interpolate("http://u:${NOPE:-a/b}@h/", env)[0] == "http://u:a%2Fb@h/"


def test_values_outside_the_user_information_are_left_as_they_are() -> None:
    env = {"PW": "p@ss/word", "HOST": "h:1"}
    assert interpolate("${HOST}", env)[0] == "h:1"
    assert interpolate("http://${HOST}/x@y", env)[0] == "http://h:1/x@y"  # @ in the path
    assert interpolate("http://${PW}", env)[0] == "http://p@ss/word"  # no @ of the file's
    assert interpolate("see http://u:${PW}@h", env)[0] == "see http://u:p@ss/word@h"  # prose
    assert interpolate("http://h/?q=${PW}@x", env)[0] == "http://h/?q=p@ss/word@x"
