from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.errors import RitualFileError
from sanctum.ritualfile.loader import (
    MAX_BYTES,
    MAX_DEPTH,
    load_yaml_data,
    load_yaml_file,
    load_yaml_text,
)


def problems(text: str | bytes) -> list[str]:
    with pytest.raises(RitualFileError) as caught:
        load_yaml_text(text, "f.yaml", env={})
    return [str(p) for p in caught.value.problems]


def test_yaml_12_scalars_and_positions() -> None:
    loaded = load_yaml_text("a: 1\nb: no\non: yes\nc: [1, 2.5, ~, 0x1f, true]\nd: '1'\n", env={})
    assert loaded.data == {"a": 1, "b": "no", "on": "yes", "c": [1, 2.5, None, 31, True], "d": "1"}
    assert loaded.keys[("b",)] == (2, 1)
    assert loaded.values[("c", 3)] == (4, 16)
    assert ("b",) in loaded.plain_booleans
    assert ("on",) in loaded.plain_boolean_keys
    assert ("d",) not in loaded.plain_booleans


def test_duplicate_key() -> None:
    assert problems("a: 1\nb: 2\na: 3\n") == [
        "f.yaml:3:1: duplicate key 'a' (first defined at line 1); "
        "YAML would silently keep only the last one"
    ]


def test_tags_anchors_aliases_merge_keys_all_reported() -> None:
    text = "a: !!python/object:os.system x\nb: &x 1\nc: *x\n<<: {}\n"
    assert problems(text) == [
        "f.yaml:1:4: tags (!!python/object:os.system) are not allowed in ritual files; "
        "write plain values (quote a string)",
        "f.yaml:2:4: anchors (&x) are not allowed in ritual files; use default_policy / "
        "named policies for reuse",
        "f.yaml:3:4: aliases (*x) are not allowed in ritual files; repeat the value, or use "
        "default_policy / named policies for reuse",
        "f.yaml:4:1: merge keys (<<) are not allowed in ritual files; use default_policy / "
        "named policies for reuse",
    ]


def test_custom_tag_refused() -> None:
    assert problems("a: !secret x\n")[0].startswith("f.yaml:1:4: tags (!secret)")


@pytest.mark.parametrize("text", ["", "   \n", "# only a comment\n"])
def test_empty_file(text: str) -> None:
    assert problems(text) == ["f.yaml:1:1: file is empty; a ritual file starts with `sanctum: 1`"]


def test_several_documents() -> None:
    assert problems("a: 1\n---\nb: 2\n") == [
        "f.yaml:2:1: several YAML documents in one file; a ritual file holds exactly one"
    ]


def test_tabs_in_indentation_every_line() -> None:
    assert problems("a:\n\tb: 1\n  c:\n \td: 2\n") == [
        "f.yaml:2:1: tab in indentation; YAML needs spaces (replace the tab with spaces)",
        "f.yaml:4:2: tab in indentation; YAML needs spaces (replace the tab with spaces)",
    ]


def test_too_large() -> None:
    text = "a: '" + "x" * MAX_BYTES + "'\n"
    message = problems(text)[0]
    assert message.startswith("f.yaml:1:1: file is ")
    assert "limited to 1 MiB" in message


def test_too_large_file_on_disk(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(RitualFileError, match="limited to 1 MiB"):
        load_yaml_file(path)


def test_nesting_limit() -> None:
    assert problems("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n") == [
        f"f.yaml:1:{MAX_DEPTH + 3}: nesting deeper than {MAX_DEPTH} levels"
    ]


def test_syntax_error_position() -> None:
    assert problems("a: [1, 2\nb: 3\n")[0].startswith("f.yaml:2:2:")


def test_not_utf8() -> None:
    assert problems(b"a: 1\nb: \xff\n") == [
        "f.yaml:2:4: file is not valid UTF-8 text (is it a binary file?)"
    ]


def test_missing_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RitualFileError, match="cannot read the ritual file"):
        load_yaml_file(tmp_path / "absent.yaml")


def test_interpolation_and_types() -> None:
    loaded = load_yaml_text(
        "a: ${PORT}\nb: '${PORT}'\nc: ${MISSING:-fallback}\nd: $${LITERAL}\n",
        env={"PORT": "8080"},
    )
    assert loaded.data == {"a": 8080, "b": "8080", "c": "fallback", "d": "${LITERAL}"}
    assert loaded.interpolations[("a",)][0].name == "PORT"


def test_unset_variable_points_at_reference() -> None:
    assert problems("a: 'x ${NOPE}'\n") == [
        "f.yaml:1:7: environment variable NOPE is not set; set it, or give a default with "
        "${NOPE:-default}"
    ]


def test_complex_key_refused() -> None:
    assert problems("? [a, b]\n: 1\n") == [
        "f.yaml:1:3: mapping keys must be plain names, not lists or mappings"
    ]


def _data_problems(source: str | bytes | Path, what: str = "input file") -> list[str]:
    with pytest.raises(RitualFileError) as caught:
        load_yaml_data(source, name="in.yaml", what=what)
    return [str(p) for p in caught.value.problems]


def test_load_yaml_data_reads_yaml_and_json(tmp_path: Path) -> None:
    assert load_yaml_data("name: Ada\nn: 3\nok: yes\n") == {"name": "Ada", "n": 3, "ok": "yes"}
    assert load_yaml_data('{\n\t"name": "Ada",\n\t"xs": [1, 2.5]\n}') == {
        "name": "Ada",
        "xs": [1, 2.5],
    }
    assert load_yaml_data(b"\xef\xbb\xbf- 1\n- two\n") == [1, "two"]
    assert load_yaml_data("greeting: ${HOME}\n") == {"greeting": "${HOME}"}  # taken literally
    file = tmp_path / "inputs.yaml"
    file.write_text("topic: moths\n", encoding="utf-8")
    assert load_yaml_data(file) == {"topic": "moths"}


def test_load_yaml_data_speaks_of_the_input_file(tmp_path: Path) -> None:
    assert _data_problems("") == [
        "in.yaml:1:1: the input file is empty; write one YAML or JSON document (e.g. `name: Ada`)"
    ]
    assert _data_problems("a: !!python/object:os.system x\n") == [
        "in.yaml:1:4: tags (!!python/object:os.system) are not allowed in input files; "
        "write plain values (quote a string)"
    ]
    assert _data_problems("a: &x 1\nb: *x\n") == [
        "in.yaml:1:4: anchors (&x) are not allowed in input files; remove the anchor and "
        "repeat the value where it is needed",
        "in.yaml:2:4: aliases (*x) are not allowed in input files; repeat the value",
    ]
    assert _data_problems("a: 1\n---\nb: 2\n") == [
        "in.yaml:2:1: several YAML documents in one input file; it must hold exactly one"
    ]
    assert _data_problems('{"a": 1,\n "a": 2}') == [
        "in.yaml:2:2: duplicate key 'a' (first defined at line 1); YAML would silently keep "
        "only the last one"
    ]
    assert _data_problems("[" * 70 + "]" * 70) == ["in.yaml:1:65: nesting deeper than 64 levels"]
    assert _data_problems("", what="updates file")[0].startswith("in.yaml:1:1: the updates file")
    with pytest.raises(RitualFileError) as caught:
        load_yaml_data(tmp_path / "absent.yaml")
    assert str(caught.value) == (
        f"{tmp_path / 'absent.yaml'}:1:1: cannot read the input file: No such file or directory"
    )


def test_binary_input_is_a_clean_positioned_error(tmp_path: Path) -> None:
    assert _data_problems(b"\x89PNG\r\n\x1a\n\x00\x00") == [
        "in.yaml:1:1: file is not valid UTF-8 text (is it a binary file?)"
    ]
    assert _data_problems(b"name: Ada\n\x00\x01\x02") == [
        "in.yaml:2:1: control character U+0000 is not allowed in YAML (is it a binary file?)"
    ]
    assert _data_problems("a: 1\nb: x\x07y\n") == [
        "in.yaml:2:5: control character U+0007 is not allowed in YAML; remove it or write "
        "it as an escape in a double-quoted string"
    ]
    assert _data_problems("é: \ufffe") == [
        "in.yaml:1:4: character U+FFFE is not allowed in YAML; remove it or write it as an "
        "escape in a double-quoted string"
    ]
    file = tmp_path / "blob.bin"
    file.write_bytes(bytes(range(256)))
    with pytest.raises(RitualFileError) as caught:
        load_yaml_data(file)
    assert (
        str(caught.value)
        == f"{file}:1:1: control character U+0000 is not allowed in YAML (is it a binary file?)"
    )
    assert "<unicode string>" not in problems(b"a: 1\n\x00")[0]


@pytest.mark.parametrize("word", [".nan", ".inf", "-.inf", "+.Inf", "1e999"])
def test_non_finite_numbers_are_refused_in_ritual_files(word: str) -> None:
    assert problems(f"a:\n  b: {word}\n") == [
        f"f.yaml:2:6: `{word}` is not a finite number; ritual files take finite numbers "
        "only (write a number such as 1e9, or quote it for text)"
    ]
    assert load_yaml_text(f"a: '{word}'\n", env={}).data == {"a": word}  # quoted: text


def test_non_finite_numbers_in_test_files_too_but_not_in_input_files() -> None:
    with pytest.raises(RitualFileError, match="test files take finite numbers only"):
        load_yaml_text("a: .inf\n", "t.test.yaml", env={}, what="test file")
    # input files are checked by whoever stores them (the run's input validation)
    assert load_yaml_data("a: .inf\n", what="input file") == {"a": float("inf")}


def test_plain_null_keys_are_marked_like_boolean_words() -> None:
    loaded = load_yaml_text("null: 1\n'~': 2\n", env={})
    assert ("null",) in loaded.plain_boolean_keys
    assert ("~",) not in loaded.plain_boolean_keys


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    import os

    pipe = tmp_path / "r.yaml"
    os.mkfifo(pipe)
    with pytest.raises(RitualFileError, match="named pipe, not a regular file"):
        load_yaml_file(pipe)  # never blocks waiting for a writer
    with pytest.raises(RitualFileError, match="folder, not a ritual file"):
        load_yaml_file(tmp_path)
