"""The written forms of a secret: escaped, encoded, nested, and the pieces a cut leaves."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus
from xml.etree import ElementTree as ET

import pytest

from sanctum.wards._forms import (
    CUT_MARKERS,
    FRAGMENT_CHARS,
    FRAGMENT_SECRET_CHARS,
    Fragments,
    decoded,
    escaped_pattern,
    mask_spans,
)
from sanctum.wards.redact import mask_secrets

SECRETS = [
    'SEKRIT"4242-xyz',  # JSON escapes the quote
    "SEKRIT\\4242-xyz",  # JSON and repr double the backslash
    "SEKRIT-4242-xyzé",  # JSON (ensure_ascii) writes \u00e9, percent-encoding %C3%A9
    "CASESEKRIT\\4242\n99",  # a backslash and a newline, as in a PEM key
    "SEKRIT/4242<xyz>&",  # HTML and XML escape <, > and &; URLs / and &
    "SEKRIT'4242 xyz\t",  # repr may escape ', form-encoding writes the space as +
    "SEKRIT\U0001f511-4242",  # outside the BMP: a JSON surrogate pair, \U0001f511
]


def _xml_attribute(text: str) -> str:
    """How ElementTree writes ``text`` as an attribute value (quotes, newlines escaped)."""
    written = ET.tostring(ET.Element("x", v=text), encoding="unicode")
    return written[len('<x v="') : -len('" />')]


WRITERS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "json": json.dumps,
    "json-unicode": lambda s: json.dumps(s, ensure_ascii=False),
    "repr": repr,
    "ascii": ascii,
    "repr-in-a-tuple": lambda s: repr(("it's", s)),
    "bytes-repr": lambda s: repr(s.encode("utf-8")),
    "json-in-json": lambda s: json.dumps({"message": json.dumps({"content": f"use {s}"})}),
    "repr-of-json-in-json": lambda s: repr(json.dumps(json.dumps(s))),
    "html": html.escape,
    "html-of-json": lambda s: html.escape(json.dumps(s)),
    "xml-attribute": _xml_attribute,
    "url": lambda s: quote(s, safe=""),
    "url-twice": lambda s: quote(quote(s, safe=""), safe=""),
    "form": lambda s: quote_plus(s, safe=""),
    "go-json": lambda s: json.dumps(s).replace("<", "\\u003c").replace("&", "\\u0026"),
}


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_written_form_of_a_secret_is_masked(secret: str, writer: str) -> None:
    written = WRITERS[writer](secret)
    assert "4242" in written  # the core of each secret is there to find
    masked = mask_secrets(f"before {written} after", [secret])
    assert "4242" not in masked, masked
    assert "SEKRIT" not in masked, masked
    assert masked.startswith("before ")
    assert masked.endswith(" after")


def test_a_value_only_writers_leave_alone_gives_the_plain_escaped_pattern() -> None:
    assert escaped_pattern("sk-live-0123456789abcdef") == re.escape("sk-live-0123456789abcdef")
    assert escaped_pattern("a.b_c~d") == re.escape("a.b_c~d")
    assert escaped_pattern('a"b') != re.escape('a"b')


def test_the_escaped_pattern_does_not_match_other_text() -> None:
    pattern = re.compile(escaped_pattern('SEKRIT"4242'))
    for text in ("SEKRIT4242", "SEKRIT'4242", "SEKRIT%2342", "SEKRIT&amp;4242", "SEKRITn4242"):
        assert pattern.search(text) is None, text


def test_a_percent_encoded_value_is_masked_decoded_too() -> None:
    assert decoded("PWSEKRIT%4077%2F77") == "PWSEKRIT@77/77"
    assert decoded("plain-value") is None
    assert decoded("100%-sure") is None
    assert mask_secrets("pw PWSEKRIT@77/77", ["PWSEKRIT%4077%2F77"]) == "pw [REDACTED]"


@pytest.mark.parametrize("marker", CUT_MARKERS)
def test_the_front_of_a_secret_before_a_cut_marker_is_masked(marker: str) -> None:
    secret = "SEKRIT-4242-xyz"
    text = f"Body: 'boom {'p' * 20}SEKRIT-4{marker}' and more"
    masked = mask_secrets(text, [secret])
    assert masked == f"Body: 'boom {'p' * 20}[REDACTED]{marker}' and more"


def test_the_back_of_a_secret_after_a_cut_marker_or_at_the_start_is_masked() -> None:
    secret = "SEKRIT-4242-xyz"
    assert mask_secrets("…242-xyz was sent", [secret]) == "…[REDACTED] was sent"
    assert mask_secrets("4242-xyz was sent", [secret]) == "[REDACTED] was sent"
    assert mask_secrets("the key SEKRIT-42", [secret]) == "the key [REDACTED]"


def test_a_cut_through_an_escape_leaves_nothing_either() -> None:
    secret = 'SEKRIT"4242-xyz'
    body = json.dumps(json.dumps({"content": f"use {secret}"}))
    cut = body[: body.index("4242") + 2]  # inside the nested escape's digits
    assert mask_secrets(cut + "…", [secret]).endswith("[REDACTED]…")
    cut = body[: body.index('\\"4242')] + "\\\\"  # right in the run of backslashes
    assert "SEKRIT" not in mask_secrets(cut + "…", [secret])
    # the back of an escape cut in two: ``\u00e9`` of ``é``, with its backslash cut off
    assert mask_secrets("…u00e9 and", ["SEKRIT-4242-xyzé"]) == "…[REDACTED] and"


def test_ordinary_words_at_a_cut_stay() -> None:
    secret = "SEKRIT2024-xyz"
    for text in ("the SEKR…", "the SEKRI…", "2024 was a year", "ends with SEKR", "ok..."):
        assert mask_secrets(text, [secret]) == text
    assert mask_secrets("the SEKRIT…", [secret]) == "the [REDACTED]…"  # 6 characters
    assert mask_secrets("key sk-l…", ["sk-live-0123456789"]) == "key [REDACTED]…"  # mixed


def test_short_secrets_leave_no_pieces_to_mask() -> None:
    short = "x" * (FRAGMENT_SECRET_CHARS - 1)
    assert not Fragments([short])
    assert Fragments(["y" * FRAGMENT_SECRET_CHARS])
    assert mask_secrets("xxxx…", [short]) == "xxxx…"
    assert FRAGMENT_CHARS == 4


def test_fragments_name_their_spans_and_spans_merge() -> None:
    pieces = Fragments(["SEKRIT-4242-xyz"])
    text = "4242-xyz, SEKRIT-42… and SEKRIT-4"
    spans = pieces.spans(text)
    assert sorted(text[a:b] for a, b in spans) == ["4242-xyz", "SEKRIT-4", "SEKRIT-42"]
    assert pieces.spans("nothing here…") == []
    assert mask_spans("abcdef", [(3, 5), (0, 2), (1, 3)], "#") == "##f"
    assert mask_spans("abc", [], "#") == "abc"


def test_a_text_of_many_dots_is_looked_at_once_per_run() -> None:
    pieces = Fragments(["SEKRIT-4242-xyz"])
    text = "." * 10_000 + "SEKRIT-42" + "." * 10_000
    assert [text[a:b] for a, b in pieces.spans(text)] == ["SEKRIT-42"]
