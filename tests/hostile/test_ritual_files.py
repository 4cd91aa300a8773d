"""Hostile ritual files: every one ends in a RitualFileError or a Rite, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sanctum.errors import RitualFileError
from sanctum.ritual import Rite
from sanctum.ritualfile import compile_ritual, load_ritual, load_yaml_data

ROOT = Path(__file__).resolve().parents[2]
SEED = (ROOT / "rituals" / "hello.yaml").read_text(encoding="utf-8")

HOSTILE = {
    "python_object": "sanctum: 1\nname: !!python/object/apply:os.system ['echo pwned']\n",
    "python_name": "sanctum: 1\nname: !!python/name:os.system\n",
    "billion_laughs": "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    "deep_flow": "sanctum: 1\nname: " + "[" * 5000 + "]" * 5000 + "\n",
    "deep_block": "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n",
    "merge_key": "base: {a: 1}\nx:\n  <<: {a: 2}\n",
    "two_docs": "sanctum: 1\n---\nsanctum: 1\n",
    "null_bytes": "sanctum: 1\nname: \x00\n",
    "huge_int": "sanctum: 1\nname: t\nrecursion_limit: " + "9" * 5000 + "\n",
    "bom_and_crlf": "\ufeffsanctum: 1\r\nname: t\r\n",
    "circle_escape": (
        "sanctum: 1\nname: t\naether: {x: {}}\nentry: c\n"
        "sigils:\n  c: {circle: ../../../../etc/passwd, next: END}\n"
    ),
    "env_evaluation": "sanctum: 1\nname: '${HOME:-$(id)}'\nentry: a\nsigils: {}\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_is_refused_cleanly(name: str, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "r.yaml"
    path.write_text(HOSTILE[name], encoding="utf-8")
    with pytest.raises(RitualFileError) as caught:
        compile_ritual(path, resolve=False)
    for problem in caught.value.problems:
        assert problem.line >= 1
        assert problem.column >= 1
        assert problem.message


def test_python_object_tag_is_a_positioned_error(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(HOSTILE["python_object"])
    with pytest.raises(RitualFileError) as caught:
        load_ritual(path)
    assert str(caught.value).startswith(f"{path}:2:7: tags (!!python/object/apply:os.system)")


def test_circle_outside_project_refused(tmp_path: Path) -> None:
    (tmp_path / "p" / ".git").mkdir(parents=True)
    (tmp_path / "evil.yaml").write_text("sanctum: 1\n")
    path = tmp_path / "p" / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: t\naether: {x: {}}\nentry: c\nsigils:\n"
        "  c: {circle: ../evil.yaml, next: END}\n"
    )
    with pytest.raises(RitualFileError, match=r"r.yaml:6:15: circle file '../evil.yaml'"):
        load_ritual(path)


def test_interpolation_never_evaluates(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: '${EVIL}'\naether: {x: {}}\nentry: a\n"
        'sigils:\n  a: {set: {x: "1"}, next: END}\n'
    )
    spec = load_ritual(path, env={"EVIL": "${HOME} {{ 7*7 }} $(id) `id`"})
    assert spec.name == "${HOME} {{ 7*7 }} $(id) `id`"


_lines = SEED.splitlines(keepends=True)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    lines = list(_lines)
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["drop", "dup", "swap", "insert", "chars"]))
        index = draw(st.integers(0, len(lines) - 1))
        if action == "drop" and len(lines) > 1:
            del lines[index]
        elif action == "dup":
            lines.insert(index, lines[index])
        elif action == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        elif action == "insert":
            lines.insert(
                index,
                draw(
                    st.sampled_from(
                        [
                            "  x: *a\n",
                            "\tbad: 1\n",
                            "---\n",
                            "- 1\n",
                            "  next: nowhere\n",
                            "    when: '{{'\n",
                            "<<: {}\n",
                            "sigils: 3\n",
                            "  : :\n",
                            "sanctum: 2\n",
                        ]
                    )
                ),
            )
        else:
            line = lines[index]
            pos = draw(st.integers(0, max(len(line) - 1, 0)))
            lines[index] = line[:pos] + draw(st.text(max_size=3)) + line[pos + 1 :]
    return "".join(lines)


@pytest.fixture(scope="module")
def property_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One project folder (a ``.git`` marks its root) shared by every generated file."""
    folder = tmp_path_factory.mktemp("sanctum-property")
    (folder / ".git").mkdir()
    return folder


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.one_of(mutated(), st.text(max_size=200)))
def test_property_only_rite_or_ritual_file_error(property_folder: Path, text: str) -> None:
    folder = property_folder
    path = folder / "r.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        outcome = compile_ritual(path, resolve=False)
    except RitualFileError as exc:
        assert exc.problems
    else:
        assert isinstance(outcome, Rite)


BINARY = {
    "png_header": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "nul_after_text": b"sanctum: 1\nname: t\x00\x00",
    "random_bytes": bytes(range(255, -1, -1)),
    "utf16": "sanctum: 1\n".encode("utf-16"),
    "bell": b"sanctum: 1\nname: \x07\n",
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_files_give_a_clean_positioned_message(name: str, tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_bytes(BINARY[name])
    with pytest.raises(RitualFileError) as caught:
        load_ritual(path)
    with pytest.raises(RitualFileError) as as_data:
        load_yaml_data(path)
    for error in (caught.value, as_data.value):
        [problem] = error.problems
        assert problem.line >= 1
        assert problem.column >= 1
        assert "<unicode string>" not in problem.message
        assert "position" not in problem.message
    assert "ritual" not in str(as_data.value)


@pytest.mark.parametrize("name", ["python_object", "python_name", "billion_laughs", "merge_key"])
def test_hostile_input_documents_are_refused_in_input_words(name: str) -> None:
    with pytest.raises(RitualFileError) as caught:
        load_yaml_data(HOSTILE[name], name="inputs.yaml")
    assert caught.value.problems
    assert all("input file" in p.message for p in caught.value.problems)
    assert "ritual" not in str(caught.value)


def test_user_module_exiting_at_import_does_not_end_the_process(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "steps.py").write_text("import os, sys\nsys.exit(3)\n")
    path = tmp_path / "r.yaml"
    path.write_text("sanctum: 1\nname: t\nentry: a\nsigils:\n  a: {call: 'steps:go', next: END}\n")
    with pytest.raises(RitualFileError) as caught:
        compile_ritual(path)
    assert str(caught.value) == (
        f"{path}:5:13: call: module 'steps' called sys.exit(3) while being imported; "
        'move that call under `if __name__ == "__main__":`'
    )
