from __future__ import annotations

import pytest

from sanctum.errors import RitualFileError
from sanctum.spec.loader import MAX_BYTES, MAX_DEPTH, load_yaml_file, load_yaml_text


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
    assert problems(b"a: 1\nb: \xff\n") == ["f.yaml:2:4: file is not valid UTF-8 text"]


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
