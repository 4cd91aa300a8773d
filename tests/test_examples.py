"""Everything shipped in rituals/ validates, and every offline ritual runs to its
expected final Aether (the cases live beside each ritual in *.test.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sanctum.api import run_test_folder
from sanctum.ritualfile import check_ritual, compile_ritual, load_ritual

ROOT = Path(__file__).resolve().parents[1]
RITUALS = sorted(p for p in (ROOT / "rituals").rglob("*.yaml") if not p.name.endswith(".test.yaml"))
NEEDS_A_MODEL = {"ollama.yaml", "llamacpp.yaml"}


@pytest.mark.parametrize("path", RITUALS, ids=lambda p: p.name)
def test_ritual_validates(path: Path) -> None:
    assert check_ritual(path) == []
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    if path.name not in NEEDS_A_MODEL:
        assert check_ritual(path, resolve=True) == []


@pytest.mark.parametrize(
    "test_file", sorted((ROOT / "rituals").glob("*.test.yaml")), ids=lambda p: p.name
)
def test_ritual_cases_pass(
    test_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    results = run_test_folder(test_file)
    assert results
    assert [(r.name, r.message) for r in results if not r.passed] == []


def test_every_offline_ritual_has_cases() -> None:
    tested = {
        (ROOT / "rituals" / p.name.replace(".test.yaml", ".yaml"))
        for p in (ROOT / "rituals").glob("*.test.yaml")
    }
    top = {p for p in RITUALS if p.parent.name == "rituals" and p.name not in NEEDS_A_MODEL}
    assert top <= tested


def test_examples_cover_every_sigil_kind() -> None:
    kinds: set[str] = set()
    joins = circles = 0
    for path in RITUALS:
        spec = load_ritual(path)
        for sigil in spec.sigils.values():
            kinds |= {
                k
                for k in ("call", "oracle", "agent", "spell", "interrupt", "circle", "scatter")
                if hasattr(sigil, k)
            }
            kinds |= {"set"} if hasattr(sigil, "values") else set()
            joins += sigil.join == "all"
            circles += hasattr(sigil, "circle")
    assert kinds == {"call", "oracle", "agent", "spell", "interrupt", "set", "circle", "scatter"}
    assert joins
    assert circles


def test_hello_runs_with_its_sqlite_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rite = compile_ritual(ROOT / "rituals" / "hello.yaml")
    result = rite.invoke({"name": "Ada"}, invocation_id="hello-1")
    assert result["farewell"] == "Safe travels, Ada! 3 verses for the road."
    assert len(result["verses"]) == 3
    assert (tmp_path / ".sanctum" / "codex.db").is_file()


@pytest.mark.parametrize(
    "test_file", sorted((ROOT / "rituals").glob("*.test.yaml")), ids=lambda p: p.name
)
def test_test_files_check_against_their_rituals(test_file: Path) -> None:
    from sanctum.ritualfile.testcases import load_test_file

    assert load_test_file(test_file).cases


def test_the_documented_ritual_validates(tmp_path: Path) -> None:
    import re
    import shutil

    text = (ROOT / "docs" / "ritual-file.md").read_text(encoding="utf-8")
    documented = re.search(r"```yaml\n(# yaml-language-server.*?)```", text, re.S)
    assert documented is not None
    (tmp_path / ".git").mkdir()
    shutil.copytree(ROOT / "spells", tmp_path / "spells")
    (tmp_path / "rituals").mkdir()
    path = tmp_path / "rituals" / "triage.yaml"
    path.write_text(documented.group(1), encoding="utf-8")
    assert check_ritual(path, env={"MY_API_KEY": "sk-test"}) == []


def test_defaults_reach_python_sigils_on_a_fresh_run() -> None:
    # collatz's Python step reads aether["n"]: the input's `default: 6` seeds the run
    result = compile_ritual(ROOT / "rituals" / "collatz.yaml").invoke({})
    assert result["path"] == [3, 10, 5, 16, 8, 4, 2, 1]
    assert result["steps"] == 8


# ---------------------------------------------------------------- examples/

EXAMPLES = ROOT / "examples"
KIND_EXAMPLES = sorted((EXAMPLES / "kinds").glob("*.yaml"))
EXPECTED: dict[str, dict[str, Any]] = {
    "set.yaml": {"parity": "odd"},
    "call.yaml": {"longest": "lantern"},
    "oracle.yaml": {"line": "Moths steer by the moon and mistake lanterns for it."},
    "agent.yaml": {"answer": "The echo said: well met, well met."},
    "spell.yaml": {"echoed": "hello, hello"},
    "circle.yaml": {"polished": "a draft"},
    "scatter.yaml": {"loud": [{"text": "MOTH"}, {"text": "LANTERN"}, {"text": "EMBER"}]},
}
"""What each example ritual of a sigil kind leaves in the Aether (interrupt: below)."""


def _cli(args: list[str], cwd: Path) -> tuple[int, str, str]:
    from tests.cli.helpers import invoke

    result = invoke(args, cwd)
    return result.exit_code, result.stdout, result.stderr


def _result(stdout: str) -> dict[str, Any]:
    import json

    lines = [json.loads(line) for line in stdout.splitlines()]
    (result,) = [line for line in lines if line.get("kind") == "result"]
    assert isinstance(result, dict)
    return result


def test_there_is_an_example_per_sigil_kind() -> None:
    assert {p.name for p in KIND_EXAMPLES} == {*EXPECTED, "interrupt.yaml"}
    for path in KIND_EXAMPLES:
        kind = path.stem
        spec = load_ritual(path)
        present = {
            k
            for k in ("call", "oracle", "agent", "spell", "interrupt", "circle", "scatter")
            if any(hasattr(s, k) for s in spec.sigils.values())
        }
        present |= {"set"} if any(hasattr(s, "values") for s in spec.sigils.values()) else set()
        assert kind in present, f"{path.name} has no {kind} sigil"


@pytest.mark.parametrize("path", KIND_EXAMPLES, ids=lambda p: p.name)
def test_example_ritual_validates_and_runs(path: Path, tmp_path: Path) -> None:
    assert check_ritual(path, resolve=True) == []
    if path.name == "interrupt.yaml":
        return  # paused and resumed below
    status, stdout, stderr = _cli(["run", str(path), "--json", "--codex", "memory:"], tmp_path)
    assert status == 0, stderr
    result = _result(stdout)
    assert result["status"] == "done"
    aether = result["aether"]
    assert isinstance(aether, dict)
    for key, value in EXPECTED[path.name].items():
        assert aether[key] == value


def test_the_interrupt_example_pauses_then_resumes(tmp_path: Path) -> None:
    ritual = str(EXAMPLES / "kinds" / "interrupt.yaml")
    status, stdout, _ = _cli(["run", ritual, "--invocation", "ask-1", "--json"], tmp_path)
    assert status == 3
    assert _result(stdout)["reason"] == "Light the lanterns?"
    args = ["resume", "--invocation", "ask-1", "--update", "approved=true", "--json"]
    status, stdout, stderr = _cli(args, tmp_path)
    assert status == 0, stderr
    assert _result(stdout)["aether"] == {"approved": True, "outcome": "lit"}


def test_the_python_api_example_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "python_api.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "superstep 1: greet"
    assert lines[-2:] == ["Safe travels, Ada! 3 verses for the road.", "done"]
    assert not (tmp_path / ".sanctum").exists()  # a memory: codex writes nothing


def test_the_ci_recipe_runs_its_command(tmp_path: Path) -> None:
    import re
    import shutil

    workflow = (EXAMPLES / "ci" / "sanctum-tests.yml").read_text(encoding="utf-8")
    (command,) = re.findall(r"run: (sanctum test .*)", workflow)
    assert command == "sanctum test rituals/ --junit-xml report.xml"
    shutil.copytree(ROOT / "rituals", tmp_path / "rituals")
    shutil.copytree(ROOT / "spells", tmp_path / "spells")
    (tmp_path / ".git").mkdir()
    status, _, stderr = _cli(command.split()[1:], tmp_path)
    assert status == 0, stderr
    report = (tmp_path / "report.xml").read_text(encoding="utf-8")
    assert "<testsuite" in report
    assert 'failures="0"' in report
