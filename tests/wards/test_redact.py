"""RedactWard: masks every match in every string of a delta, returning a new delta."""

from __future__ import annotations

import re
from collections import namedtuple
from typing import Any

import pytest

from sanctum.wards import RedactWard
from sanctum.wards.redact import clip, mask_secrets

KEY = "sk-" + "A1b2C3d4E5f6G7h8I9j0"
KEY_PATTERN = r"sk-[A-Za-z0-9]{20,}"


async def test_masks_strings_through_dicts_lists_and_tuples() -> None:
    ward = RedactWard([KEY_PATTERN])
    delta: dict[str, Any] = {
        "note": f"use {KEY} please",
        "messages": [{"role": "user", "content": f"key={KEY}", "meta": ("x", f"({KEY})")}],
        "count": 3,
    }
    result = await ward.after_sigil("s", {}, delta)
    assert result == {
        "note": "use [REDACTED] please",
        "messages": [{"role": "user", "content": "key=[REDACTED]", "meta": ("x", "([REDACTED])")}],
        "count": 3,
    }
    assert isinstance(result["messages"][0]["meta"], tuple)
    assert result is not delta
    assert delta["note"] == f"use {KEY} please"  # the input is not modified
    assert delta["messages"][0]["content"] == f"key={KEY}"


async def test_returns_a_new_delta_even_without_matches() -> None:
    delta = {"a": "nothing secret", "b": [1, 2]}
    result = await RedactWard([KEY_PATTERN]).after_sigil("s", {}, delta)
    assert result == delta
    assert result is not delta


async def test_custom_mask_and_several_patterns_strings_or_compiled() -> None:
    ward = RedactWard([re.compile(r"[\w.]+@example\.org", re.IGNORECASE), r"\d{4}-\d{4}"], "***")
    result = await ward.after_sigil("s", {}, {"t": "Mail Ann@EXAMPLE.org, card 1234-5678."})
    assert result == {"t": "Mail ***, card ***."}


async def test_a_single_pattern_string_is_one_pattern_not_its_characters() -> None:
    ward = RedactWard("secret")
    assert ward.mask_text("a secret, and s-e-c") == "a [REDACTED], and s-e-c"


async def test_overlapping_matches_become_one_mask() -> None:
    ward = RedactWard([r"abc", r"bcd"], mask="#")
    assert ward.mask_text("xabcdx abc") == "x#x #"


async def test_adjacent_matches_keep_one_mask_each_like_re_sub() -> None:
    ward = RedactWard([r"ab"], mask="#")
    assert ward.mask_text("ababx") == "##x"


async def test_empty_matches_never_sprinkle_masks() -> None:
    ward = RedactWard([r"x*"], mask="#")
    assert ward.mask_text("abc") == "abc"
    assert ward.mask_text("axxb") == "a#b"


async def test_nested_keys_are_masked_but_conduit_names_are_not() -> None:
    ward = RedactWard([KEY_PATTERN])
    delta = {KEY: "top", "vault": {KEY: 1, f"{KEY}!": 2, "plain": 3}}
    result = await ward.after_sigil("s", {}, delta)
    assert KEY in result  # a top-level key names a Conduit: left alone
    assert result["vault"] == {"[REDACTED]": 1, "[REDACTED]!": 2, "plain": 3}


async def test_colliding_masked_keys_keep_every_value() -> None:
    other = "sk-" + "Z" * 24
    ward = RedactWard([KEY_PATTERN])
    result = await ward.after_sigil("s", {}, {"vault": {KEY: 1, other: 2, "[REDACTED]": 0}})
    vault = result["vault"]
    assert sorted(vault.values()) == [0, 1, 2]
    assert KEY not in str(vault)
    assert other not in str(vault)


async def test_sets_named_tuples_and_other_objects() -> None:
    Pair = namedtuple("Pair", "left right")
    ward = RedactWard([KEY_PATTERN])
    blob = b"sk-bytes are not text"
    result = await ward.after_sigil(
        "s",
        {},
        {"tags": {KEY, "ok"}, "frozen": frozenset({KEY}), "pair": Pair(KEY, 1), "blob": blob},
    )
    assert result["tags"] == {"[REDACTED]", "ok"}
    assert result["frozen"] == frozenset({"[REDACTED]"})
    assert isinstance(result["pair"], Pair)
    assert result["pair"] == Pair("[REDACTED]", 1)
    assert result["blob"] is blob


async def test_self_containing_structures_do_not_loop_forever() -> None:
    loop: list[Any] = [KEY]
    loop.append(loop)
    result = await RedactWard([KEY_PATTERN]).after_sigil("s", {}, {"loop": loop})
    assert result["loop"][0] == "[REDACTED]"


def test_redact_is_usable_outside_the_pipeline() -> None:
    ward = RedactWard([KEY_PATTERN])
    assert ward.redact({"a": [KEY]}) == {"a": ["[REDACTED]"]}
    assert ward.redact(7) == 7


def test_no_patterns_passes_everything() -> None:
    assert RedactWard([]).mask_text(KEY) == KEY


def test_an_invalid_pattern_is_a_valueerror_quoting_it() -> None:
    with pytest.raises(ValueError, match=r"'sk-\[' is not a valid regular expression"):
        RedactWard(["sk-["])


@pytest.mark.parametrize("bad", [42, re.compile(rb"bytes")])
def test_a_non_text_pattern_is_a_typeerror(bad: Any) -> None:
    with pytest.raises(TypeError, match="RedactWard"):
        RedactWard([bad])


async def test_in_a_rite_seals_omens_audit_and_result_only_see_masked_text(tmp_path: Any) -> None:
    import json as _json

    from sanctum import END, START, Ritual
    from sanctum.codex.memory import MemoryCodex
    from sanctum.omens import SigilCompleted, SuperstepCompleted
    from sanctum.wards import AuditWard

    def leak(aether: dict[str, Any]) -> dict[str, Any]:
        return {"reply": f"your key is {KEY}", "log": [{"line": (KEY, "x")}]}

    ritual = Ritual().add_sigil("leak", leak)
    ritual.add_edge(START, "leak").add_edge("leak", END)
    audit_path = tmp_path / "audit.jsonl"
    codex = MemoryCodex()
    rite = ritual.compile(codex=codex, wards=[RedactWard([KEY_PATTERN]), AuditWard(audit_path)])
    seen: list[Any] = []
    async for omen in rite.astream({}, invocation_id="inv-r", mode={"updates", "values"}):
        assert isinstance(omen, SigilCompleted | SuperstepCompleted)
        seen.append(omen.delta if isinstance(omen, SigilCompleted) else omen.aether)
    seals = await codex.list("inv-r")
    assert seals, "the codex holds the run's Seals"
    for blob in (repr(seen), repr([s.aether for s in seals]), audit_path.read_text("utf-8")):
        assert KEY not in blob
        assert "[REDACTED]" in blob
    entry = _json.loads(audit_path.read_text("utf-8").splitlines()[0])
    assert entry["delta"]["reply"] == "your key is [REDACTED]"
    assert list(seals[-1].aether["log"][0]["line"]) == ["[REDACTED]", "x"]
    result = await ritual.compile(wards=[RedactWard([KEY_PATTERN])]).ainvoke({})
    assert result["reply"] == "your key is [REDACTED]"


def test_bytes_dataclasses_and_other_objects_never_carry_a_secret_through() -> None:
    import dataclasses

    key = "sk-" + "C" * 24

    @dataclasses.dataclass(frozen=True)
    class Note:
        text: str
        count: int = 1

    class Custom:
        def __str__(self) -> str:
            return f"custom holding {key}"

    ward = RedactWard([r"sk-[A-Za-z0-9]{20,}"])
    masked = ward.redact(
        {
            "b": key.encode(),
            "ba": bytearray(f"x {key} y".encode()),
            "note": Note(f"see {key}"),
            "error": ValueError(f"bad key {key}"),
            "custom": Custom(),
            "plain": ValueError("nothing secret"),
            "n": 5,
        }
    )
    assert masked["b"] == b"[REDACTED]"
    assert masked["ba"] == bytearray(b"x [REDACTED] y")
    assert masked["note"] == Note("see [REDACTED]")
    assert masked["error"] == "bad key [REDACTED]"
    assert masked["custom"] == "custom holding [REDACTED]"
    assert isinstance(masked["plain"], ValueError)  # no match: the object itself
    assert masked["n"] == 5
    assert key not in repr(masked)


def test_clip_masks_before_it_cuts_and_marks_the_cut() -> None:
    secret = "SEKRIT-4242-xyz"
    text = "p" * 10 + secret + " and the rest"
    ward = RedactWard([re.escape(secret)])
    assert clip(text, 14) == "p" * 10 + "SEKR…"
    assert clip(text, 14, ward) == "p" * 10 + "[REDACTED]…"  # a mask is never split
    assert clip(text, 10, ward) == "p" * 10 + "…"
    assert clip(text, 100, ward) == "p" * 10 + "[REDACTED] and the rest"
    assert clip("short", 5) == "short"
    assert clip("longer", 3, marker="...") == "lon..."


def test_mask_secrets_masks_escaped_copies_and_what_a_cut_left() -> None:
    secret = 'SEKRIT"4242-xyz'
    assert mask_secrets('{"a": "SEKRIT\\"4242-xyz"}', [secret], "***") == '{"a": "***"}'
    assert mask_secrets("Body: 'ppppSEKRIT\\\\\"42…'", [secret], "***") == "Body: 'pppp***…'"
    assert mask_secrets("x", ["", "y"]) == "x"
