"""Hostile spell folders: entrypoints that try to leave their folder, broken manifests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sanctum.errors import SpellManifestError
from sanctum.grimoire import Tome

OUTSIDE = 'def evil(text: str) -> str:\n    """Escaped."""\n    return "escaped"\n'
INSIDE = 'def ok(text: str) -> str:\n    """Fine."""\n    return text\n'


def spell_folder(root: Path, manifest: object) -> Path:
    folder = root / "spells" / "domain" / "one"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spell.json").write_text(
        manifest if isinstance(manifest, str) else json.dumps(manifest)
    )
    return folder


def refused(root: Path, fragment: str) -> SpellManifestError:
    with pytest.raises(ValueError, match=fragment) as caught:
        Tome.load_from_directory(root / "spells")
    assert isinstance(caught.value, SpellManifestError)
    assert caught.value.path.endswith("spell.json")
    return caught.value


@pytest.mark.parametrize(
    "entrypoint",
    ["../evil.py:evil", "../../evil.py:evil", "sub/../../evil.py:evil", "..\\evil.py:evil"],
)
def test_dot_dot_entrypoints_are_refused(tmp_path: Path, entrypoint: str) -> None:
    spell_folder(tmp_path, {"name": "evil", "entrypoint": entrypoint})
    (tmp_path / "spells" / "domain" / "evil.py").write_text(OUTSIDE)
    (tmp_path / "spells" / "evil.py").write_text(OUTSIDE)
    refused(tmp_path, r"leaves the spell folder")


@pytest.mark.parametrize("style", ["posix", "windows"])
def test_absolute_entrypoints_are_refused(tmp_path: Path, style: str) -> None:
    target = tmp_path / "evil.py"
    target.write_text(OUTSIDE)
    path = str(target) if style == "posix" else "C:\\evil.py"
    spell_folder(tmp_path, {"name": "evil", "entrypoint": f"{path}:evil"})
    refused(tmp_path, "absolute path")


def test_a_symlink_pointing_out_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "evil.py"
    target.write_text(OUTSIDE)
    folder = spell_folder(tmp_path, {"name": "evil", "entrypoint": "spell.py:evil"})
    os.symlink(target, folder / "spell.py")
    refused(tmp_path, "resolves outside the spell folder")


def test_a_symlinked_subfolder_pointing_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "evil.py").write_text(OUTSIDE)
    folder = spell_folder(tmp_path, {"name": "evil", "entrypoint": "lib/evil.py:evil"})
    os.symlink(outside, folder / "lib")
    refused(tmp_path, "resolves outside the spell folder")


def test_a_symlink_staying_inside_is_allowed(tmp_path: Path) -> None:
    folder = spell_folder(tmp_path, {"name": "ok", "entrypoint": "link.py:ok"})
    (folder / "real.py").write_text(INSIDE)
    os.symlink(folder / "real.py", folder / "link.py")
    assert Tome.load_from_directory(tmp_path / "spells").names == ["ok"]


def test_a_manifest_symlinked_from_outside_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "spells" / "domain" / "one"
    folder.mkdir(parents=True)
    (tmp_path / "manifest.json").write_text(json.dumps({"name": "x", "entrypoint": "a.py:f"}))
    os.symlink(tmp_path / "manifest.json", folder / "spell.json")
    refused(tmp_path, "symlink pointing outside")


def test_symlinked_spell_folders_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "one"
    outside.mkdir(parents=True)
    (outside / "spell.json").write_text(json.dumps({"name": "evil", "entrypoint": "e.py:evil"}))
    (outside / "e.py").write_text(OUTSIDE)
    (tmp_path / "spells").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "spells" / "linked")
    assert len(Tome.load_from_directory(tmp_path / "spells")) == 0


def test_a_directory_as_entrypoint_is_refused(tmp_path: Path) -> None:
    folder = spell_folder(tmp_path, {"name": "d", "entrypoint": "pkg.py:f"})
    (folder / "pkg.py").mkdir()
    refused(tmp_path, "is not a file")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", r"is not valid JSON \(.* at line 1 column 2\)"),
        ("", "is not valid JSON"),
        ('{"name": "x", "entrypoint": "a.py:f",}', "is not valid JSON"),
        ("[" * 100_000, "is nested too deeply|is not valid JSON"),
        ('"just a string"', "must hold a JSON object, found str"),
        ("null", "must hold a JSON object, found NoneType"),
    ],
)
def test_manifests_that_are_not_json_objects(tmp_path: Path, content: str, fragment: str) -> None:
    spell_folder(tmp_path, content)
    refused(tmp_path, fragment)


def test_a_manifest_that_is_not_utf8(tmp_path: Path) -> None:
    folder = spell_folder(tmp_path, "{}")
    (folder / "spell.json").write_bytes(b'{"name": "\xff\xfe"}')
    refused(tmp_path, "not UTF-8")


def test_a_huge_manifest_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    folder = spell_folder(tmp_path, "{}")
    (folder / "spell.json").write_text('{"name": "' + "x" * (2 * 1024 * 1024) + '"}')
    refused(tmp_path, "larger than 1 MiB")


def test_a_file_given_as_the_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "spells").write_text("not a folder")
    with pytest.raises(SpellManifestError, match="not a folder of spells"):
        Tome.load_from_directory(tmp_path / "spells")


def test_a_spell_module_calling_sys_exit_is_a_manifest_error(tmp_path: Path) -> None:
    import json as json_module

    from sanctum.errors import SpellManifestError
    from sanctum.grimoire import Tome

    folder = tmp_path / "text" / "leave"
    folder.mkdir(parents=True)
    (folder / "spell.json").write_text(
        json_module.dumps({"name": "leave", "entrypoint": "spell.py:leave"}), encoding="utf-8"
    )
    (folder / "spell.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    with pytest.raises(SpellManifestError, match=r"sys\.exit\(3\)"):
        Tome.load_from_directory(tmp_path)
