"""render_trace: one self-contained HTML file from a trace file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sanctum.tracing import TraceRecorder, render_trace
from sanctum.tracing.render import load_trace
from tests.tracing.htmlcheck import parse
from tests.tracing.scenes import MANIFEST, sample_run

SECTIONS = {
    "summary",
    "graph",
    "timeline",
    "deltas",
    "spell-calls",
    "repairs",
    "rejections",
    "retries",
    "seals",
    "tokens",
    "circles",
    "aether",
}


def _trace(tmp_path: Path) -> Path:
    recorder = TraceRecorder(tmp_path / "run.sanctum-trace.json")
    recorder.on_compile(MANIFEST)
    for omen in sample_run():
        asyncio.run(recorder.on_omen(omen))
    assert recorder.written is not None
    return recorder.written


def test_default_output_is_the_trace_path_with_an_html_suffix(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    out = render_trace(trace)
    assert out == tmp_path / "run.sanctum-trace.html"
    assert out.is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".trace-")] == []


def test_explicit_output_path_and_folders(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    out = render_trace(str(trace), tmp_path / "site" / "view.html")
    assert out == tmp_path / "site" / "view.html"
    assert out.is_file()


def test_page_holds_every_section_sigil_and_no_external_reference(tmp_path: Path) -> None:
    html = render_trace(_trace(tmp_path)).read_text(encoding="utf-8")
    page = parse(html)
    assert page.ids >= SECTIONS
    assert page.count("svg") == 1
    assert page.count("style") == 1
    assert page.count("script") == 0
    assert page.count("link") == 0
    assert page.count("img") == 0
    assert page.event_handlers == []
    assert all(url.startswith("#") for url in page.urls)
    assert "http" not in html
    assert "//" not in html
    assert "Content-Security-Policy" in html
    sigils = {attrs.get("data-sigil") for tag, attrs in page.tags if tag == "g"}
    assert {"plan", "fetch", "act", "gate"} <= sigils
    text = page.all_text
    for expected in (
        "closed a missing brace",
        "unknown spell 'divide'",
        "TimeoutError()",
        "seal-1",
        "seal-3",
        "thinking",
        "completed",
    ):
        assert expected in text
    assert '"a": 1' in text  # spell call arguments
    assert "Superstep 3" in text


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        render_trace(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "invalid JSON"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"[1, 2]", '"format": "sanctum-trace"'),
        (b'{"format": "other"}', '"format": "sanctum-trace"'),
        (b'{"format": "sanctum-trace", "version": 99}', "version 99"),
        (b"[" * 100_000, "invalid JSON"),
    ],
)
def test_files_that_are_not_traces_are_valueerrors_naming_the_file(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"bad\.json") as caught:
        render_trace(path)
    assert message in str(caught.value)
    assert not (tmp_path / "bad.html").exists()


def test_load_trace_returns_the_document(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"format": "sanctum-trace", "version": 1}), encoding="utf-8")
    assert load_trace(path) == {"format": "sanctum-trace", "version": 1}


def test_a_minimal_or_mistyped_trace_still_renders(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_text(
        json.dumps(
            {
                "format": "sanctum-trace",
                "version": 1,
                "graph": "not a mapping",
                "status": 17,
                "supersteps": [{"sigils": [{"sigil": "x", "duration": "slow"}]}, 3, None],
                "deltas": {"not": "a list"},
                "spell_calls": [None, {"spell": ["odd"]}],
                "circles": [{"trace": "nope"}],
                "final_aether": [1, 2],
            }
        ),
        encoding="utf-8",
    )
    html = render_trace(path).read_text(encoding="utf-8")
    page = parse(html)
    assert page.ids >= SECTIONS
    assert "No manifest recorded" in page.all_text


def test_the_html_never_overwrites_its_own_trace(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    before = trace.read_bytes()
    with pytest.raises(ValueError, match="the trace itself"):
        render_trace(trace, trace)
    assert trace.read_bytes() == before


def test_an_unreadably_long_number_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "long.json"
    bad.write_text('{"format": "sanctum-trace", "version": 2, "n": ' + "9" * 5000 + "}")
    with pytest.raises(ValueError, match=r"long\.json .*number too long"):
        load_trace(bad)


def test_an_unwritable_target_is_named_in_the_error(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match=r"cannot write the HTML to .*file/out\.html"):
        render_trace(trace, blocker / "out.html")
