"""Checking a ritual file's shape, and carrying on past the parts that are broken.

Before the pydantic model sees a file, each sigil's kind key is checked: several kind
keys, none at all, or a misspelled one (``orcale:``) give one message at the key, and
the sigil is repaired in a working copy (the misspelled key renamed, the clashing kind
keys set aside) so its other keys are still checked — without a pile of follow-on
errors for the companions (``prompt``, ``output``) of a kind that was clearly meant.

Then the model validates the copy. When some entries are broken, their problems are
recorded, the broken entries are set aside and the rest is validated again, so the
file-level checks can still run over every sound sigil: all problems of a file are
reported at once. The names set aside stay known (a reference to a broken sigil is not
a second error).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from sanctum.ritualfile.diagnostics import (
    Problems,
    data_path,
    did_you_mean,
    field_accepts,
    suggest,
    suggest_field,
)
from sanctum.ritualfile.kinds import common_keys, key_owners, kind_keys, sigil_keys
from sanctum.ritualfile.kinds.scatter import INLINE_KINDS
from sanctum.ritualfile.loader import LoadedFile, YamlPath
from sanctum.ritualfile.models import WARD_KINDS, RitualSpec

__all__ = ["FORMAT_VERSION", "SECTIONS", "Dropped", "validate_shape"]

FORMAT_VERSION = 1
"""The ritual-file format version this sanctum reads (``sanctum: 1``)."""

SECTIONS = ("inputs", "aether", "oracles", "tomes", "policies", "sigils")
"""Top-level mappings whose broken entries are set aside (their names stay known)."""

_OPTIONAL_TOP = ("description", "project", "codex", "recursion_limit", "default_policy", "wards")

Dropped = dict[str, set[str]]
"""Section -> names of entries set aside because they are broken (``entry`` too)."""


def _a(kinds: Sequence[str]) -> str:
    words = [f"{'an' if k[0] in 'aeiou' else 'a'} {k}" for k in kinds]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _rename(body: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return {new if key == old else key: value for key, value in body.items()}


def _alias_positions(loaded: LoadedFile, old: YamlPath, new: YamlPath) -> None:
    """Make positions known under ``old`` known under ``new`` too (a renamed key)."""
    size = len(old)
    for table in (loaded.keys, loaded.values):
        for path, position in list(table.items()):
            if path[:size] == old:
                table.setdefault((*new, *path[size:]), position)
    for marks in (loaded.plain_booleans, loaded.plain_boolean_keys):
        for path in list(marks):
            if path[:size] == old:
                marks.add((*new, *path[size:]))


def _sigil_kind(name: str, body: dict[str, Any], p: Problems) -> dict[str, Any] | None:
    """Check a sigil's kind key; returns a repaired body for the working copy, or None."""
    base: YamlPath = ("sigils", name)
    kinds, common = kind_keys(), common_keys()
    present = [k for k in kinds if k in body]
    if len(present) > 1:
        p.add(
            (*base, present[1]),
            f"sigil {name!r} has several kinds ({', '.join(present)}); give exactly one",
            key=True,
        )
        # Keep checking what every sigil has (next, routes, policy, ...).
        return {k: v for k, v in body.items() if k in common}
    if present:
        return None
    unknown = [k for k in body if k not in common]
    for key in unknown:
        meant = suggest(key, sigil_keys())
        if meant in kinds:
            p.add(
                (*base, key),
                f"unknown key {key!r} in sigil {name!r}; did you mean {meant!r}? "
                f"(kind keys: {', '.join(kinds)}; "
                f"other keys: {', '.join(sorted(common))})",
                key=True,
            )
            _alias_positions(p.loaded, (*base, key), (*base, meant))
            return _rename(body, key, meant)
    companions = [k for k in unknown if key_owners(k)]
    if not companions:
        return None  # a routing sigil; the model reports unknown keys with a did-you-mean
    owners = [k for k in kinds if all(k in key_owners(c) for c in companions)] or [
        k for k in kinds if any(k in key_owners(c) for c in companions)
    ]
    shown = ", ".join(f"`{c}`" for c in companions)
    verb = "belongs" if len(companions) == 1 else "belong"
    p.add(
        (*base, companions[0]),
        f"sigil {name!r} has no kind key, but {shown} {verb} to {_a(owners)} sigil; "
        f"add its kind key (e.g. `{owners[0]}:`)",
        key=True,
    )
    return {k: v for k, v in body.items() if k not in companions}


def _kind_problems(
    value: Any, path: YamlPath, kinds: Sequence[str], what: str, p: Problems
) -> None:
    if not isinstance(value, dict):
        return
    present = [k for k in kinds if k in value]
    if len(present) == 1:
        return
    if present:
        p.add(
            (*path, present[1]),
            f"{what} has several kinds ({', '.join(present)}); give exactly one",
            key=True,
        )
        return
    guesses = [did_you_mean(str(k), kinds) for k in value]
    hint = next((g for g in guesses if g), "")
    p.add(path, f"{what} has no kind: give one of {', '.join(kinds)}{hint}", key=True)


def _precheck(data: Any, p: Problems) -> dict[str, Any] | None:
    """Check the format version and the kind keys; returns the working copy, or None."""
    if not isinstance(data, dict):
        p.add((), "a ritual file is a mapping of keys (sanctum: 1, name, entry, sigils, ...)")
        return None
    if "sanctum" not in data:
        p.add_at(1, 1, f"missing format version: add `sanctum: {FORMAT_VERSION}` at the top")
        return None
    version = data["sanctum"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        p.add(
            ("sanctum",),
            f"unknown format version {version!r}; this sanctum reads `sanctum: "
            f"{FORMAT_VERSION}` files (upgrade sanctum for newer ones)",
        )
        return None
    work = copy.deepcopy(data)
    sigils = work.get("sigils")
    if isinstance(sigils, dict):
        for name, body in sigils.items():
            if not isinstance(body, dict):
                continue
            repaired = _sigil_kind(name, body, p)
            if repaired is not None:
                sigils[name] = body = repaired
            if isinstance(body.get("scatter"), dict):
                _kind_problems(
                    body["scatter"].get("sigil"),
                    ("sigils", name, "scatter", "sigil"),
                    INLINE_KINDS,
                    f"the scatter sigil of {name!r}",
                    p,
                )
    wards = work.get("wards")
    if isinstance(wards, list):
        for index, ward in enumerate(wards):
            _kind_problems(ward, ("wards", index), WARD_KINDS, "ward", p)
    return work


def _remove_key(work: dict[str, Any], path: YamlPath, model: Any, loaded: LoadedFile) -> bool:
    """Set an unknown key aside — renamed to the key it resembles when its value fits
    there, so that key's value is still checked (and a misspelled ``nxet`` does not
    also leave the sigil with nowhere to go), else removed."""
    node: Any = work
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    key = path[-1]
    if not isinstance(node, dict) or key not in node:
        return False
    meant = (
        suggest_field(model, str(key), node[key])
        if isinstance(model, type) and issubclass(model, BaseModel)
        else None
    )
    if meant is not None and meant not in node and field_accepts(model, meant, node[key]):
        renamed = {meant if k == key else k: v for k, v in node.items()}
        node.clear()
        node.update(renamed)
        _alias_positions(loaded, path, (*path[:-1], meant))
    else:
        del node[key]
    return True


def _set_aside(
    work: dict[str, Any], error: ValidationError, dropped: Dropped, loaded: LoadedFile
) -> bool:
    """Remove the entries ``error`` complains about; False when that is not possible."""
    wards: set[int] = set()
    changed = False
    for item in error.errors(include_url=False):
        path, model, _tail = data_path(item["loc"], RitualSpec)
        if not path:
            return False
        if item["type"] == "extra_forbidden" and _remove_key(work, path, model, loaded):
            changed = True  # an unknown key: the rest of its mapping is still checked
            continue
        head = path[0]
        if head in SECTIONS:
            section = work.get(head)
            if len(path) < 2 or not isinstance(section, dict) or path[1] not in section:
                return False
            del section[path[1]]
            dropped.setdefault(head, set()).add(str(path[1]))
        elif head == "wards" and len(path) >= 2 and isinstance(path[1], int):
            wards.add(path[1])
        elif head == "name":
            work["name"] = "ritual"
        elif head == "entry":
            work["entry"] = []
            dropped.setdefault("entry", set()).add("entry")
        elif head in _OPTIONAL_TOP or head not in RitualSpec.model_fields:
            if head not in work:
                return False
            del work[head]
        else:
            return False
        changed = True
    if wards and isinstance(work.get("wards"), list):
        work["wards"] = [w for i, w in enumerate(work["wards"]) if i not in wards]
    return changed


def validate_shape(loaded: LoadedFile, p: Problems) -> tuple[RitualSpec | None, Dropped]:
    """Validate a loaded ritual file's shape, recording every problem in ``p``.

    Args:
        loaded: The file as read by the loader.
        p: Where problems are recorded.

    Returns:
        The RitualSpec and the names set aside. When ``p`` holds problems the spec
        covers only the sound entries (for further checks, never for compiling); it is
        None when too little of the file is sound to check further.
    """
    work = _precheck(loaded.data, p)
    dropped: Dropped = {}
    if work is None:
        return None, dropped
    failed = False
    for _round in range(len(SECTIONS) + 4):
        try:
            spec = RitualSpec.model_validate(work)
        except ValidationError as exc:
            failed = True
            p.from_validation(exc, RitualSpec)
            if not _set_aside(work, exc, dropped, loaded):
                break
            continue
        if failed and not p:  # pragma: no cover - every failure is reported above
            p.add_at(1, 1, "the file does not match the ritual format")
        return spec, dropped
    if not p:  # pragma: no cover - every failure is reported above
        p.add_at(1, 1, "the file does not match the ritual format")
    return None, dropped
