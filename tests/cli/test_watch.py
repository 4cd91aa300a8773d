"""``sanctum watch``: a real subprocess watching a real file."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.cli.helpers import GREET, console_script, invoke, write_ritual


def _reader(stream: object, lines: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        lines.put(line)


def _wait_for(lines: queue.Queue[str], seen: list[str], text: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not any(text in line for line in seen):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"never saw {text!r}; output so far: {''.join(seen)!r}"
        try:
            seen.append(lines.get(timeout=remaining))
        except queue.Empty:
            continue


def test_revalidates_on_save_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    env = {**os.environ, "NO_COLOR": "1", "WATCHFILES_FORCE_POLLING": "1"}
    process = subprocess.Popen(
        [*console_script(), "watch", str(ritual), "--run"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_reader, args=(process.stdout, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        _wait_for(lines, seen, "watching")
        assert any("greet.yaml: ok" in line for line in seen)
        assert any("✓ done" in line for line in seen)  # --run ran it once
        ritual.write_text(GREET.replace("next: END", "nxt: END"), encoding="utf-8")
        _wait_for(lines, seen, "did you mean 'next'")
        assert any("greet.yaml changed" in line for line in seen)
        ritual.write_text(GREET, encoding="utf-8")
        _wait_for(lines, seen, "greet.yaml: ok", timeout=20)
        count = sum("greet.yaml changed" in line for line in seen)
        os.utime(ritual, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))  # a touch
        deadline = time.monotonic() + 20
        while sum("greet.yaml changed" in line for line in seen) == count:
            assert time.monotonic() < deadline, "".join(seen)
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                continue
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=20)
        _wait_for(lines, seen, "stopped watching")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
    assert code == 0
    assert not any("Traceback" in line for line in seen), "".join(seen)


def test_missing_file_is_reported_before_watching(tmp_path: Path) -> None:
    result = invoke(["watch", "nope.yaml", "--input", "bad"], tmp_path)
    assert result.exit_code == 2
    assert "key=value" in result.stderr
