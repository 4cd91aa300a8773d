"""Terminal and XML output cannot be spoofed: bidi controls escaped, JUnit XML parses."""

from __future__ import annotations

import io
import json
import sys
from types import SimpleNamespace
from xml.etree import ElementTree as ET

import pytest

from sanctum.api import junit_xml
from sanctum.cli._common import print_json_line, printable

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@pytest.mark.parametrize("lines", [False, True])
def test_bidi_controls_are_escaped_like_other_controls(lines: bool) -> None:
    shown = printable(f"access{BIDI}granted\x1b[2J", lines=lines)
    assert not any(ch in shown for ch in BIDI)
    assert "\\u202e" in shown
    assert "\\u001b" in shown


def test_json_lines_escape_c1_and_bidi_but_keep_the_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    value = {"reason": f"é{BIDI}\x9b\x7f"}
    print_json_line(value)
    text = out.getvalue()
    assert not any(ch in text for ch in (*BIDI, "\x9b", "\x7f"))
    assert "é" in text
    assert json.loads(text) == value


def test_junit_xml_with_forbidden_characters_parses() -> None:
    result = SimpleNamespace(
        file="suite\x01.test.yaml",
        name="case \x1b[31mred\x1b[0m",
        duration=0.5,
        passed=False,
        status="failed",
        message="got \x1b]0;title\x07 and \x01 and \ufffe <&>",
    )
    document = junit_xml([result])  # type: ignore[list-item]
    root = ET.fromstring(document.split("\n", 1)[1])
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None
    assert failure.text == "got \\u001b]0;title\\u0007 and \\u0001 and \\ufffe <&>"
    case = root.find("./testsuite/testcase")
    assert case is not None
    assert case.get("name") == "case \\u001b[31mred\\u001b[0m"
