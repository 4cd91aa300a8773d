from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.codex.sqlite import SqliteCodex
from sanctum.ritualfile.resolve import (
    ResolveError,
    confine,
    import_callable,
    open_codex_url,
    project_root,
)


def test_project_root_and_confine(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "rituals").mkdir()
    ritual = tmp_path / "rituals" / "r.yaml"
    assert project_root(ritual) == tmp_path.resolve()
    assert (
        confine(ritual.parent, "../spells", tmp_path.resolve(), "tome")
        == (tmp_path / "spells").resolve()
    )
    with pytest.raises(ResolveError, match="outside the project folder"):
        confine(ritual.parent, "../../x", tmp_path.resolve(), "tome")


def test_same_module_name_in_two_folders(tmp_path: Path) -> None:
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "steps.py").write_text(f"def who(a):\n    return {{'who': '{name}'}}\n")
    assert import_callable("steps:who", tmp_path / "one")({}) == {"who": "one"}
    assert import_callable("steps:who", tmp_path / "two")({}) == {"who": "two"}
    with pytest.raises(ResolveError, match="did you mean 'who'"):
        import_callable("steps:whoo", tmp_path / "one")
    with pytest.raises(ResolveError, match="not of the form"):
        import_callable("steps.who", tmp_path / "one")


def test_codex_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(open_codex_url("memory"), MemoryCodex)
    assert isinstance(open_codex_url("sqlite:///.sanctum/c.db"), SqliteCodex)
    assert (tmp_path / ".sanctum").is_dir()
    with pytest.raises(ResolveError, match="unknown codex URL"):
        open_codex_url("redis://x")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "import sys\nsys.exit(3)\n",
            "module 'quits' called sys.exit(3) while being imported; move that call under "
            '`if __name__ == "__main__":`',
        ),
        (
            "raise SystemExit\n",
            "module 'quits' called sys.exit() while being imported; move that call under "
            '`if __name__ == "__main__":`',
        ),
        (
            "raise GeneratorExit('odd')\n",
            "importing 'quits' raised GeneratorExit: odd (a BaseException, not an Exception); "
            "a module must import without raising",
        ),
    ],
)
def test_exiting_module_is_a_resolution_problem(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "quits.py").write_text(body + "def step(a):\n    return {}\n")
    with pytest.raises(ResolveError) as caught:
        import_callable("quits:step", tmp_path)
    assert str(caught.value) == message


def test_keyboard_interrupt_at_import_still_stops(tmp_path: Path) -> None:
    (tmp_path / "stop.py").write_text("raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        import_callable("stop:step", tmp_path)


def test_the_secret_masker_follows_the_short_secret_rule() -> None:
    from sanctum.ritualfile.resolve import secret_masker

    mask = secret_masker(["x", "sk-0123456789"])
    assert mask({"e": ["unexpected x in expression", ("sk-0123456789abc",)]}) == {
        "e": ["unexpected [REDACTED] in expression", ("[REDACTED]abc",)]
    }
