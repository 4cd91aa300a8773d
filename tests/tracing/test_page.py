"""The page shell: CSP, inline CSS only, navigation, graph fallback."""

from __future__ import annotations

from sanctum.tracing.page import (
    CONTENT_SECURITY_POLICY,
    build_page,
    graph_section,
    observed_manifest,
)
from tests.tracing.htmlcheck import parse


def test_page_forbids_scripts_and_fetches_and_names_the_invocation() -> None:
    html = build_page({"invocation_id": "inv-<9>"}, source="x.json")
    page = parse(html)
    meta = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert meta
    assert meta[0]["content"] == CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src" not in CONTENT_SECURITY_POLICY  # falls back to 'none'
    assert "inv-&lt;9&gt;" in html
    assert "inv-<9>" not in html
    nav_links = [a["href"] for t, a in page.tags if t == "a"]
    assert nav_links
    assert all(str(h).startswith("#") for h in nav_links)
    assert page.count("script") == 0


def test_observed_manifest_lists_the_sigils_that_ran() -> None:
    doc = {
        "supersteps": [
            {"sigils": [{"sigil": "b"}, {"sigil": "a"}]},
            {"sigils": [{"sigil": "b"}, "junk"]},
            "junk",
        ]
    }
    assert observed_manifest(doc) == {"sigils": ["b", "a"], "edges": {}, "conditional_edges": {}}
    section = graph_section(doc)
    assert "No manifest recorded" in section
    assert 'data-sigil="a"' in section
