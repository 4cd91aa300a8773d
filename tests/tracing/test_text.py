"""Escaping and formatting helpers of the viewer."""

from __future__ import annotations

import math

from sanctum.tracing._text import compact_json, esc, fmt_duration, pretty_json, shorten


def test_esc_escapes_markup_and_both_quotes() -> None:
    assert esc("<a href=\"x\" title='y'>&</a>") == (
        "&lt;a href=&quot;x&quot; title=&#x27;y&#x27;&gt;&amp;&lt;/a&gt;"
    )
    assert esc(42) == "42"


def test_esc_replaces_lone_surrogates() -> None:
    assert esc("a\ud800b").encode("utf-8") == b"a?b"


def test_json_helpers_never_raise() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    assert isinstance(pretty_json(deep), str)
    assert compact_json({"a": [1]}) == '{"a": [1]}'
    assert pretty_json({"é": 1}) == '{\n  "é": 1\n}'


def test_fmt_duration_units() -> None:
    assert fmt_duration(0.00085) == "850 µs"
    assert fmt_duration(0.0123) == "12.3 ms"
    assert fmt_duration(4.2) == "4.20 s"
    assert fmt_duration(600) == "10.0 min"
    for bad in (None, "1", True, -1, math.nan, math.inf):
        assert fmt_duration(bad) == "—"


def test_shorten() -> None:
    assert shorten("abc", 5) == "abc"
    assert shorten("abcdef", 4) == "abc…"
