"""Exclusive resumes, recorded failures, signals and a closed stdout — real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.cli.helpers import _env, console_script, sanctum

STEPS = """\
import os
import time
from pathlib import Path

from sanctum import interrupt


def approve(aether):
    if not aether.get("who"):
        interrupt("who approves?")
    with open(os.environ["RACE_LOG"], "a") as log:
        log.write(aether["who"] + "\\n")
    while not Path(os.environ["RACE_GO"]).exists():
        time.sleep(0.02)
    return {"done_by": aether["who"]}


def tick(aether):
    marker = os.environ.get("TICK_MARK")
    if marker and aether["k"] == 3:
        Path(marker).write_text("3")
    time.sleep(0.05)
    print("tick", aether["k"], flush=True)
    return {"k": aether["k"] + 1}


def boom(aether):
    token = os.environ.get("SECRET_TOKEN", "")
    raise ValueError("the ledger refused " + token)
"""

RACE = """\
sanctum: 1
name: race
aether:
  who: {type: string, default: ""}
  done_by: {type: string, default: ""}
entry: approve
sigils:
  approve:
    call: steps:approve
    next: END
"""

TICKS = """\
sanctum: 1
name: ticks
inputs:
  "k": {type: integer, default: 0}
entry: tick
sigils:
  tick:
    call: steps:tick
    routes:
      - when: "k < 40"
        to: tick
      - to: END
recursion_limit: 100
"""

FAIL = """\
sanctum: 1
name: fail
entry: boom
sigils:
  boom:
    call: steps:boom
    next: END
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "race.yaml").write_text(RACE)
    (tmp_path / "ticks.yaml").write_text(TICKS)
    (tmp_path / "fail.yaml").write_text(FAIL)
    return tmp_path


def _wait_for(check: object, what: str, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def _codexes() -> list[str]:
    out = ["sqlite:///race.db"]
    url = os.environ.get("SANCTUM_TEST_POSTGRES_URL")
    if url:
        out.append(url)
    return out


@pytest.mark.parametrize("codex", _codexes(), ids=lambda c: c.split(":")[0])
def test_two_processes_racing_a_resume_one_runs_the_other_runs_nothing(
    folder: Path, codex: str
) -> None:
    ident = f"race-{uuid.uuid4().hex[:8]}"
    log, go = folder / "ran.log", folder / "go"
    env = {"RACE_LOG": str(log), "RACE_GO": str(go)}
    paused = sanctum(["run", "race.yaml", "--invocation", ident, "--codex", codex], folder, env=env)
    assert paused.returncode == 3, paused.stderr
    racers = [
        subprocess.Popen(
            [
                *console_script(),
                "resume",
                "--invocation",
                ident,
                "--codex",
                codex,
                "--update",
                f"who={name}",
            ],
            cwd=folder,
            env=_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alice", "bob")
    ]
    # the loser is refused while the winner still waits inside its sigil
    _wait_for(lambda: any(r.poll() is not None for r in racers), "the loser to leave")
    loser = next(r for r in racers if r.poll() is not None)
    winner = next(r for r in racers if r is not loser)
    _, loser_err = loser.communicate(timeout=60)
    assert loser.returncode not in (0, 3), loser_err
    assert "being run by another call" in loser_err
    assert "pid " in loser_err
    assert "nothing was run" in loser_err
    go.write_text("go")
    _winner_out, winner_err = winner.communicate(timeout=60)
    assert winner.returncode == 0, winner_err
    assert len(log.read_text().splitlines()) == 1  # the sigil ran once, for the winner
    who = log.read_text().strip()
    if codex.startswith("sqlite"):  # (a shared PostgreSQL lists many other runs)
        listed = sanctum(["invocations", "--json", "--codex", codex], folder)
        row = json.loads(listed.stdout.splitlines()[0])
        assert (row["invocation_id"], row["status"]) == (ident, "done")
    seals = sanctum(
        ["seals", "--invocation", ident, "--json", "--values", "--codex", codex], folder
    )
    last = [json.loads(line) for line in seals.stdout.splitlines() if line.strip()][-1]
    assert json.dumps(last).count(f'"done_by": "{who}"') == 1

    # a done invocation is refused, and --update never rewrites it
    again = sanctum(
        ["resume", "--invocation", ident, "--codex", codex, "--update", "who=mallory"],
        folder,
        env=env,
    )
    assert again.returncode != 0
    assert "is done" in again.stderr
    assert "--seal SEAL_ID" in again.stderr
    assert len(log.read_text().splitlines()) == 1
    after = sanctum(["seals", "--invocation", ident, "--json", "--codex", codex], folder)
    assert after.stdout.count("\n") == seals.stdout.count("\n")


def test_two_runs_with_one_id_the_loser_runs_nothing(folder: Path) -> None:
    ident = "dup-1"
    log, go = folder / "ran.log", folder / "go"
    env = {"RACE_LOG": str(log), "RACE_GO": str(go)}
    (folder / "race.yaml").write_text(
        RACE.replace('default: ""}\n  done_by', 'default: "x"}\n  done_by', 1)
    )
    racers = [
        subprocess.Popen(
            [*console_script(), "run", "race.yaml", "--invocation", ident],
            cwd=folder,
            env=_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    _wait_for(lambda: any(r.poll() is not None for r in racers), "the loser to leave")
    loser = next(r for r in racers if r.poll() is not None)
    _, err = loser.communicate(timeout=60)
    assert loser.returncode not in (0, 3)
    assert "already exists" in err or "another call" in err
    go.write_text("go")
    winner = next(r for r in racers if r is not loser)
    winner.communicate(timeout=60)  # waits, and closes the pipes
    assert winner.returncode == 0
    assert log.read_text().splitlines() == ["x"]  # one sigil call, not two


def test_a_failure_in_the_first_superstep_is_recorded_with_its_traceback(folder: Path) -> None:
    env = {"SECRET_TOKEN": "tok-0123456789abcdef"}
    done = sanctum(["--debug", "run", "fail.yaml", "--invocation", "f1", "--json"], folder, env=env)
    assert done.returncode == 1
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "failed"
    assert 'File "' in result["traceback"]
    assert "steps.py" in result["traceback"]
    assert "ValueError: the ledger refused" in result["traceback"]
    assert "steps.py" in done.stderr  # --debug prints the ritual code's traceback
    listed = sanctum(["invocations", "--json"], folder)
    row = json.loads(listed.stdout.splitlines()[0])
    assert (row["invocation_id"], row["status"]) == ("f1", "failed")
    assert row["failure"]["type"] == "SigilExecutionError"
    assert "steps.py" in row["failure"]["traceback"]
    seals = sanctum(["seals", "--invocation", "f1"], folder)
    assert "failed: SigilExecutionError" in seals.stdout


@pytest.mark.parametrize(
    ("sig", "code", "name"),
    [
        (signal.SIGTERM, 143, "SIGTERM"),
        (signal.SIGHUP, 129, "SIGHUP"),
    ],
)
def test_sigterm_and_sighup_stop_like_ctrl_c(
    folder: Path, sig: signal.Signals, code: int, name: str
) -> None:
    mark = folder / "at3"
    proc = subprocess.Popen(
        [*console_script(), "run", "ticks.yaml", "--invocation", "t1", "--trace", "t1.json"],
        cwd=folder,
        env=_env({"TICK_MARK": str(mark)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(mark.exists, "the third superstep")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert f"stopped by {name}" in err
    assert "sanctum resume --invocation t1" in err
    trace = json.loads((folder / "t1.json").read_text())
    assert trace["status"] == "incomplete"
    listed = json.loads(sanctum(["invocations", "--json"], folder).stdout.splitlines()[0])
    assert listed["status"] == "incomplete"
    resumed = sanctum(["resume", "--invocation", "t1"], folder)
    assert resumed.returncode == 0, resumed.stderr


def test_a_closed_stdout_stops_the_run_with_one_line_naming_it(folder: Path) -> None:
    proc = subprocess.Popen(
        [*console_script(), "run", "ticks.yaml", "--invocation", "p1"],
        cwd=folder,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # `| head -1`: one line, then the reader goes away
    assert first
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)  # reads stderr to the end, closes it
    assert proc.returncode == 141
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [
        "stdout was closed; stopped invocation p1; resume it with: sanctum resume --invocation p1"
    ]
    assert sanctum(["resume", "--invocation", "p1"], folder).returncode == 0


BREAKS = """\
import os


def breaks(aether):
    if aether.get("k", 0) == 0:
        reader, writer = os.pipe()
        os.close(reader)
        os.dup2(writer, 1)  # stdout's reader is gone before the step prints
    print("a line nobody reads", flush=True)
    return {"k": 1}
"""


def test_a_step_that_meets_the_closed_stdout_first_still_gets_the_one_line(
    folder: Path,
) -> None:
    (folder / "breaks.py").write_text(BREAKS)
    (folder / "breaks.yaml").write_text(
        "sanctum: 1\nname: breaks\ninputs:\n  k: {type: integer, default: 0}\n"
        "entry: b\nsigils:\n  b: {call: breaks:breaks, next: END}\n"
    )
    done = sanctum(["run", "breaks.yaml", "--invocation", "p2"], folder)
    assert done.returncode == 141, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [
        "stdout was closed; stopped invocation p2; resume it with: sanctum resume --invocation p2"
    ]


CHAT = """\
sanctum: 1
name: chat
aether:
  heard: {reducer: append, default: []}
  said: {default: null}
entry: chat
sigils:
  chat:
    call: steps:chat
    routes:
      - when: "heard | length >= 10"
        to: END
      - to: chat
recursion_limit: 8
"""

CHAT_STEPS = """
from sanctum import interrupt


def chat(aether):
    if len(aether["heard"]) >= 10:
        return {}
    if aether.get("said") is None:
        interrupt("your line?")
    return {"heard": [aether["said"]], "said": None}
"""


def test_a_ten_turn_chat_pausing_every_turn_fits_recursion_limit_8(folder: Path) -> None:
    (folder / "chat.yaml").write_text(CHAT)
    (folder / "steps.py").write_text(STEPS + CHAT_STEPS)
    assert sanctum(["run", "chat.yaml", "--invocation", "c1"], folder).returncode == 3
    for turn in range(1, 11):
        step = sanctum(["resume", "--invocation", "c1", "--update", f"said=line {turn}"], folder)
        assert step.returncode == (0 if turn == 10 else 3), step.stderr
    seals = sanctum(["seals", "--invocation", "c1", "--json"], folder)
    assert json.loads(seals.stdout.splitlines()[-1])["superstep"] > 8
