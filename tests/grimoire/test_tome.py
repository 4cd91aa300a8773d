"""The Tome: ordered registry, lookups, and AgentGrimoire spell folders on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sanctum.errors import SpellExecutionError, SpellManifestError
from sanctum.grimoire import Spell, Tome, spell
from tests.grimoire.spells import add, get_time, get_weather


def test_registration_order_is_the_order_oracles_see() -> None:
    tome = Tome([get_weather]).register(add).register(get_time)
    assert tome.names == ["get_weather", "add", "get_time"]
    assert [s["name"] for s in tome.schemas()] == ["get_weather", "add", "get_time"]
    assert len(tome) == 3
    assert "add" in tome
    assert "nope" not in tome
    assert [s.name for s in tome] == tome.names


def test_register_refuses_duplicates() -> None:
    tome = Tome([add])
    with pytest.raises(ValueError, match="already inscribed"):
        tome.register(spell(lambda a: a, name="add"))
    assert tome.get("add") is add


def test_register_accepts_plain_functions() -> None:
    def shout(text: str) -> str:
        """Shout it."""
        return text.upper()

    tome = Tome([shout])
    assert isinstance(tome.get("shout"), Spell)
    assert tome.get("shout").description == "Shout it."


def test_get_unknown_raises_spell_execution_error_listing_spells() -> None:
    tome = Tome([get_weather, add])
    with pytest.raises(SpellExecutionError) as caught:
        tome.get("get_wether")
    assert caught.value.spell == "get_wether"
    assert "get_weather, add" in str(caught.value)
    assert "Did you mean 'get_weather'?" in str(caught.value)


# --------------------------------------------------------------------------- folders


def write_spell(
    root: Path,
    domain: str,
    folder: str,
    manifest: dict[str, Any] | str,
    code: str = "",
    file: str = "spell.py",
) -> Path:
    """Write one spell folder (manifest + implementation); return the manifest path."""
    where = root / domain / folder
    where.mkdir(parents=True, exist_ok=True)
    if code:
        (where / file).write_text(code)
    path = where / "spell.json"
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    return path


WORD_COUNT = '''
def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())
'''

SHOUT = """
from sanctum.grimoire import spell

@spell(description="Say it louder.")
async def shout(text: str, times: int = 1) -> str:
    return (text.upper() + " ") * times
"""


async def test_load_from_directory_reads_domains_in_sorted_order(tmp_path: Path) -> None:
    write_spell(
        tmp_path,
        "text",
        "word_count",
        {"name": "word_count", "entrypoint": "spell.py:word_count"},
        WORD_COUNT,
    )
    write_spell(
        tmp_path, "system", "shout", {"name": "shout", "entrypoint": "spell.py:shout"}, SHOUT
    )
    tome = Tome.load_from_directory(tmp_path)
    assert tome.names == ["shout", "word_count"]
    wc = tome.get("word_count")
    assert wc.description == "Count the words in a text."
    assert wc.parameters == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    assert await wc.execute({"text": "one two three"}) == 3
    shout = tome.get("shout")
    assert shout.description == "Say it louder."
    assert await shout.execute({"text": "hi", "times": 2}) == "HI HI "


async def test_manifest_fields_override_the_entrypoint(tmp_path: Path) -> None:
    params = {"type": "object", "properties": {"text": {"type": "string"}}, "required": []}
    write_spell(
        tmp_path,
        "text",
        "wc",
        {
            "name": "count",
            "entrypoint": "impl.py:word_count",
            "description": "From the manifest.",
            "parameters": params,
            "version": "1.0",
        },
        WORD_COUNT,
        file="impl.py",
    )
    tome = Tome.load_from_directory(str(tmp_path))
    count = tome.get("count")
    assert count.description == "From the manifest."
    assert count.parameters == params
    assert await count.execute({"text": "a b"}) == 2


def test_empty_folder_gives_an_empty_tome(tmp_path: Path) -> None:
    assert len(Tome.load_from_directory(tmp_path)) == 0


def test_a_missing_folder_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder of spells") as caught:
        Tome.load_from_directory(tmp_path / "absent")
    assert isinstance(caught.value, SpellManifestError)


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"entrypoint": "spell.py:word_count"}, "missing required field 'name'"),
        ({"name": "wc"}, "missing required field 'entrypoint'"),
        ({"name": "", "entrypoint": "spell.py:word_count"}, "'name' must be a non-empty"),
        ({"name": "wc", "entrypoint": 3}, "'entrypoint' must be a non-empty"),
        ({"name": "wc", "entrypoint": "spell.py"}, "must look like '<file>.py:<function>'"),
        ({"name": "wc", "entrypoint": "spell.txt:word_count"}, "must be a .py file"),
        ({"name": "wc", "entrypoint": "spell.py:not-a-name"}, "is not a Python name"),
        ({"name": "wc", "entrypoint": "missing.py:word_count"}, "does not exist"),
        ({"name": "wc", "entrypoint": "spell.py:absent"}, "defines no 'absent'"),
        ({"name": "wc", "entrypoint": "spell.py:word_count", "description": 1}, "'description'"),
        ({"name": "wc", "entrypoint": "spell.py:word_count", "parameters": []}, "'parameters'"),
        ([1, 2], "must hold a JSON object"),
    ],
)
def test_bad_manifests_name_the_file(tmp_path: Path, manifest: Any, message: str) -> None:
    path = write_spell(tmp_path, "text", "wc", manifest, WORD_COUNT)
    with pytest.raises(ValueError, match=message) as caught:
        Tome.load_from_directory(tmp_path)
    assert isinstance(caught.value, SpellManifestError)
    assert caught.value.path == str(path)
    assert str(path) in str(caught.value)


def test_an_entrypoint_that_raises_on_import_is_reported(tmp_path: Path) -> None:
    write_spell(
        tmp_path,
        "x",
        "boom",
        {"name": "boom", "entrypoint": "spell.py:f"},
        "raise RuntimeError('broken at import')\n",
    )
    with pytest.raises(SpellManifestError, match="raised RuntimeError: broken at import") as caught:
        Tome.load_from_directory(tmp_path)
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_non_callable_entrypoint_is_refused(tmp_path: Path) -> None:
    write_spell(
        tmp_path, "x", "const", {"name": "c", "entrypoint": "spell.py:VALUE"}, "VALUE = 3\n"
    )
    with pytest.raises(SpellManifestError, match="is not callable"):
        Tome.load_from_directory(tmp_path)


def test_two_folders_with_one_name_are_refused(tmp_path: Path) -> None:
    write_spell(
        tmp_path, "a", "wc", {"name": "wc", "entrypoint": "spell.py:word_count"}, WORD_COUNT
    )
    second = write_spell(
        tmp_path, "b", "wc", {"name": "wc", "entrypoint": "spell.py:word_count"}, WORD_COUNT
    )
    with pytest.raises(SpellManifestError, match="already loaded") as caught:
        Tome.load_from_directory(tmp_path)
    assert caught.value.path == str(second)


def test_hidden_and_cache_folders_are_skipped(tmp_path: Path) -> None:
    write_spell(tmp_path, ".git", "wc", "not json", WORD_COUNT)
    write_spell(tmp_path, "__pycache__", "wc", "not json", WORD_COUNT)
    assert len(Tome.load_from_directory(tmp_path)) == 0


def test_register_takes_the_spell_by_keyword_too() -> None:
    def ping() -> str:
        """Answer pong."""
        return "pong"

    assert Tome().register(spell=ping).names == ["ping"]


# --------------------------------------------------------------------------- manifest_names


def test_manifest_names_reads_the_names_without_importing(tmp_path: Path) -> None:
    first = write_spell(
        tmp_path, "a", "wc", {"name": "wc", "entrypoint": "spell.py:f"}, "raise SystemExit(9)\n"
    )
    second = write_spell(tmp_path, "b", "deep", {"name": "deep", "entrypoint": "x.py:g"})
    # the entrypoint exits on import and the other file does not exist: neither is touched
    assert Tome.manifest_names(tmp_path) == {"wc": first, "deep": second}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{bad json", "is not valid JSON"),
        ("", "is not valid JSON: the file is empty"),
        ("  \n", "is not valid JSON: the file is empty"),
        ("[]", "must hold a JSON object, found list"),
        ('{"name": "hello"}', "missing required field 'entrypoint'"),
    ],
)
def test_manifest_names_points_at_the_broken_manifest(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write_spell(tmp_path, "d", "hello", text)
    with pytest.raises(SpellManifestError, match=message) as caught:
        Tome.manifest_names(tmp_path)
    assert caught.value.path == str(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_manifest_names_refuses_a_name_declared_twice(tmp_path: Path) -> None:
    first = write_spell(tmp_path, "a", "wc", {"name": "wc", "entrypoint": "spell.py:f"})
    second = write_spell(tmp_path, "b", "wc", {"name": "wc", "entrypoint": "spell.py:f"})
    with pytest.raises(SpellManifestError, match=f"already declared in {first}") as caught:
        Tome.manifest_names(tmp_path)
    assert caught.value.path == str(second)


def test_an_empty_manifest_says_so_when_loading_too(tmp_path: Path) -> None:
    write_spell(tmp_path, "d", "hello", "", WORD_COUNT)
    with pytest.raises(SpellManifestError, match="the file is empty; a manifest is a JSON object"):
        Tome.load_from_directory(tmp_path)
