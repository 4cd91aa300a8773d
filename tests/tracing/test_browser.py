"""The trace viewer in a real headless Chromium: every sigil and section, no script run.

Chromium comes from ``$SANCTUM_TEST_CHROMIUM`` or ``chromium`` on PATH. Without it the
test skips — unless ``CI`` is set, where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sanctum.tracing import render_trace
from tests.tracing.htmlcheck import parse
from tests.tracing.realrun import HOSTILE, INVOCATION, SIGILS, run_until_interrupt

pytestmark = pytest.mark.browser

SECTION_IDS = (
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
)


def _chromium() -> str:
    configured = os.environ.get("SANCTUM_TEST_CHROMIUM")
    found = configured or shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail(
            "headless Chromium is required in CI: install Debian's `chromium` "
            "or set SANCTUM_TEST_CHROMIUM"
        )
    pytest.skip("headless Chromium not found (set SANCTUM_TEST_CHROMIUM or install chromium)")


def _run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        *args,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    assert result.returncode == 0, f"chromium failed ({result.returncode}): {result.stderr[-2000:]}"
    return result


def test_viewer_in_headless_chromium(tmp_path: Path) -> None:
    binary = _chromium()
    import asyncio

    asyncio.run(run_until_interrupt(tmp_path / "run.sanctum-trace.json"))
    page = render_trace(tmp_path / "run.sanctum-trace.json")
    url = page.resolve().as_uri()

    dom = _run_chromium(binary, tmp_path / "profile-dom", "--dump-dom", url).stdout
    tree = parse(dom)
    titles = [t for t in tree.text if "sanctum trace" in t]
    assert titles[:1] == [f"sanctum trace · {INVOCATION}"], dom[:500]
    # no injected script ran: the title and the root element are untouched...
    root = next(attrs for tag, attrs in tree.tags if tag == "html")
    assert "data-pwned" not in root
    # ...and the live DOM holds no element or handler the trace smuggled in
    assert tree.count("script") == 0
    assert tree.count("img") == 0
    assert tree.count("i") == 0
    assert tree.count("style") == 1
    assert tree.count("svg") == 1
    assert tree.event_handlers == []
    assert all(url.startswith("#") for url in tree.urls)
    # the hostile text is there, shown as text
    text = tree.all_text
    for payload in HOSTILE.values():  # as written, or inside a JSON string
        assert payload in text or json.dumps(payload)[1:-1] in text, payload
    # every section and every sigil, in the graph and the timeline
    assert set(SECTION_IDS) <= tree.ids
    marked = [attrs.get("data-sigil") for _, attrs in tree.tags]
    for name in SIGILS:
        assert marked.count(name) >= 2, name  # graph node + timeline lane
    for expected in (
        "interrupted",
        "closed a missing brace",
        "ConnectionError",
        "Circle",
        "recovered the arguments",
        "Superstep 3",
    ):
        assert expected in text, expected

    shot = tmp_path / "trace.png"
    _run_chromium(
        binary, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1280,2000", url
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank image
    keep = os.environ.get("SANCTUM_KEEP_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
    assert HOSTILE["script"] not in page.read_text(encoding="utf-8")
