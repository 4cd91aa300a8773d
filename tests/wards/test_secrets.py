"""Secrets — one masking policy given to a Rite, applied by the engine at every boundary."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sanctum import END, Interrupt, Ritual, SigilPolicy, interrupt
from sanctum.aether.reducers import append, appended_from
from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import SigilExecutionError
from sanctum.tracing import TraceRecorder
from sanctum.wards import AuditWard, Secrets
from sanctum.wards.secrets import Veil, url_password

KEY = "sk-live-0123456789abcdef"
PATTERNED = "tok-12345678"
PASSWORD = "pg-pass-Zq81x"


def _rite(tmp_path: Path, secrets: Secrets | None) -> Any:
    def emit(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        writer(f"token {KEY} {PATTERNED}")
        return {"note": f"saw {aether['given']} and {PASSWORD}"}

    def fail(aether: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError(f"the service echoed {KEY}")

    def ask(aether: dict[str, Any]) -> dict[str, Any]:
        if not aether.get("ok"):
            interrupt(f"approve {PATTERNED} with {PASSWORD}?")
        return {}

    ritual = Ritual()
    ritual.add_sigil("emit", emit)
    ritual.add_sigil("fail", fail, policy=SigilPolicy(on_error="ask"))
    ritual.add_sigil("ask", ask)
    ritual.add_edge("emit", "fail")
    ritual.add_edge("fail", END)
    ritual.add_edge("ask", END)
    ritual.set_entry_point("emit")
    return ritual.compile(
        codex=SqliteCodex(tmp_path / "codex.db"),
        wards=[AuditWard(tmp_path / "audit.jsonl"), TraceRecorder(tmp_path / "trace.json")],
        secrets=secrets,
    )


SECRETS = Secrets([KEY], [r"tok-[0-9]{8}"], urls=[f"postgresql://u:{PASSWORD}@db/x"])


def _leaks(text: str) -> list[str]:
    return [s for s in (KEY, PATTERNED, PASSWORD) if s in text]


def _disk(tmp_path: Path, prefix: str) -> str:
    """Every byte of the files named ``prefix*`` (a SQLite file and its WAL)."""
    return "".join(
        f.read_bytes().decode("utf-8", "replace") for f in sorted(tmp_path.glob(f"{prefix}*"))
    )


def test_every_artefact_of_a_run_is_masked(tmp_path: Path) -> None:
    rite = _rite(tmp_path, SECRETS)
    omens: list[str] = []

    async def stream() -> None:
        async for omen in rite.astream(
            {"given": KEY},
            invocation_id="inv",
            metadata={"who": f"caller {KEY}"},
            mode={"omens", "tokens", "updates", "values"},
        ):
            omens.append(repr(omen))

    async def go() -> None:
        with pytest.raises(Interrupt) as paused:
            await stream()
        assert "[REDACTED]" in paused.value.reason
        assert _leaks(str(paused.value)) == []
        await rite.ainvoke(invocation_id="inv", updates={"ok": True, "note": KEY})
        await rite.codex.aclose()

    asyncio.run(go())
    assert omens
    assert _leaks("\n".join(omens)) == []
    for name in ("codex.db", "audit.jsonl", "trace.json"):
        raw = _disk(tmp_path, name)
        assert raw, name
        assert _leaks(raw) == [], name
    assert "[REDACTED]" in (tmp_path / "audit.jsonl").read_text()


def test_without_secrets_the_same_run_keeps_its_text(tmp_path: Path) -> None:
    rite = _rite(tmp_path, None)
    with pytest.raises(Exception, match="approve"):
        rite.invoke({"given": KEY}, invocation_id="inv")
    asyncio.run(rite.codex.aclose())
    assert KEY in _disk(tmp_path, "codex.db")


def test_a_failure_message_and_its_cause_are_masked() -> None:
    def fail(aether: dict[str, Any]) -> dict[str, Any]:
        raise ValueError(f"bad key {KEY}")

    ritual = Ritual()
    ritual.add_sigil("fail", fail)
    ritual.add_edge("fail", END)
    ritual.set_entry_point("fail")
    rite = ritual.compile(secrets=Secrets([KEY]))
    with pytest.raises(SigilExecutionError) as failed:
        rite.invoke({"given": KEY})
    assert KEY not in str(failed.value)
    assert KEY not in str(failed.value.__cause__)
    assert KEY not in repr(failed.value.aether)


def test_with_options_replaces_or_keeps_the_policy() -> None:
    ritual = Ritual()
    ritual.add_sigil("a", lambda aether: {"x": KEY})
    ritual.add_edge("a", END)
    ritual.set_entry_point("a")
    rite = ritual.compile(secrets=SECRETS)
    assert rite.with_options(recursion_limit=5).secrets is SECRETS
    assert rite.with_options(secrets=None).secrets is None
    assert rite.invoke({})["x"] == "[REDACTED]"
    with pytest.raises(TypeError, match="Secrets"):
        ritual.compile(secrets=[KEY])  # type: ignore[arg-type]


def test_short_values_are_masked_only_as_whole_tokens() -> None:
    secrets = Secrets(["abc"])
    assert secrets.mask_text("abc and abcdef") == "[REDACTED] and abcdef"


def test_union_url_passwords_and_repr() -> None:
    both = Secrets([KEY]) | Secrets(patterns=[r"tok-\d+"], mask="***")
    assert both.mask_text(f"{KEY} tok-1") == "[REDACTED] ***"
    assert url_password("postgresql://u:p%40ss@h/db") == ["p%40ss", "p@ss"]
    assert url_password("postgresql://u@h/db") == []
    assert url_password("not a url") == []
    assert KEY not in repr(both)
    assert not Secrets()
    assert not Secrets([""])


def test_veil_reuses_the_masked_form_of_an_unchanged_value() -> None:
    veil = Veil(Secrets([KEY]))
    big = [f"line {i}" for i in range(1000)]
    first = veil.aether({"big": big, "k": KEY})
    second = veil.aether({"big": big, "k": KEY})
    assert first["big"] is second["big"]
    assert second["k"] == "[REDACTED]"
    big.append(KEY)  # changed in place: masked again
    assert veil.aether({"big": big})["big"][-1] == "[REDACTED]"


def test_veil_masks_only_what_the_append_reducer_added() -> None:
    veil = Veil(Secrets([KEY]))
    transcript = [{"content": f"line {i}"} for i in range(500)]
    first = veil.aether({"messages": transcript})["messages"]
    grown = append(transcript, [{"content": f"the key is {KEY}"}])
    second = veil.aether({"messages": grown})["messages"]
    assert second[:500] == first
    assert all(a is b for a, b in zip(second, first, strict=False))  # not masked again
    assert second[-1] == {"content": "the key is [REDACTED]"}
    origin = appended_from(second)  # a Codex chains the masked list too
    assert origin is not None
    assert origin[0] is first
    assert origin[1] == 500
    edited = [{"content": KEY}, *grown[1:]]  # not an append: masked whole
    assert veil.aether({"messages": edited})["messages"][0] == {"content": "[REDACTED]"}


def test_veil_masks_only_what_changed_inside_a_map() -> None:
    veil = Veil(Secrets([KEY]))
    messages = [{"content": f"line {i}"} for i in range(300)]
    chat = {"title": f"about {KEY}", "messages": messages, "doc": "x" * 1000}
    first = veil.aether({"chat": chat})["chat"]
    grown = {**chat, "messages": [*messages, {"content": f"now {KEY}"}]}  # merge_dict
    second = veil.aether({"chat": grown})["chat"]
    assert second["title"] == "about [REDACTED]"
    assert second["doc"] is first["doc"]
    assert all(a is b for a, b in zip(second["messages"], first["messages"], strict=False))
    assert second["messages"][-1] == {"content": "now [REDACTED]"}
    origin = appended_from(second["messages"])
    assert origin is not None
    assert origin[0] is first["messages"]
    edited = {**grown, "messages": [{"content": KEY}, *grown["messages"][1:]]}
    third = veil.aether({"chat": edited})["chat"]
    assert third["messages"][0] == {"content": "[REDACTED]"}
    assert KEY not in repr(third)


def test_masking_is_cheap_enough_to_stay_linear() -> None:
    secrets = Secrets([KEY, "another-secret-value"], [re.compile(r"tok-[0-9]{8}")])
    text = "plain words " * 10_000
    assert secrets.mask_text(text) == text


ESCAPED = 'SEKRIT\\4242-xyz"é\n'
"""A secret every writer spells differently: a backslash, a quote, a non-ASCII letter, a
newline (a PEM key or a JSON credential has such characters)."""


def test_a_seal_holds_no_escaped_copy_of_a_secret(tmp_path: Path) -> None:
    def convert(aether: dict[str, Any]) -> dict[str, Any]:
        int(ESCAPED)  # ValueError: invalid literal ...: 'SEKRIT\\4242-xyz"é\n' (a repr)
        return {}

    def quote(aether: dict[str, Any]) -> dict[str, Any]:
        return {"note": json.dumps({"sent": ESCAPED}), "ascii": json.dumps(ESCAPED)}

    ritual = Ritual()
    ritual.add_sigil("convert", convert, policy=SigilPolicy(on_error="quote"))
    ritual.add_sigil("quote", quote)
    ritual.add_edge("convert", END)
    ritual.add_edge("quote", END)
    ritual.set_entry_point("convert")
    codex = SqliteCodex(tmp_path / "codex.db")
    rite = ritual.compile(codex=codex, secrets=Secrets([ESCAPED]))
    final = rite.invoke({}, invocation_id="inv")
    asyncio.run(codex.aclose())
    assert final["note"] == '{"sent": "[REDACTED]"}'
    assert final["ascii"] == '"[REDACTED]"'
    raw = _disk(tmp_path, "codex.db")
    assert "invalid literal for int() with base 10: '[REDACTED]'" in raw  # __errors__
    assert "4242" not in raw


def test_the_front_of_a_secret_a_cut_kept_is_masked_in_errors_and_omens() -> None:
    secret = "SEKRIT-4242-xyz"

    def fail(aether: dict[str, Any]) -> dict[str, Any]:
        body = f"boom {'p' * 426}{secret}"
        raise RuntimeError(f"HTTP 500: {body[:440]}…")  # cut by someone before masking

    ritual = Ritual()
    ritual.add_sigil("fail", fail)
    ritual.add_edge("fail", END)
    ritual.set_entry_point("fail")
    rite = ritual.compile(secrets=Secrets([secret]))
    with pytest.raises(SigilExecutionError) as failed:
        rite.invoke({})
    assert str(failed.value).endswith("p[REDACTED]…")
    assert "SEKRIT" not in str(failed.value) + str(failed.value.__cause__)


def test_masks_names_the_texts_written_in_place_of_secrets() -> None:
    assert Secrets([KEY]).masks == {"[REDACTED]"}
    both = Secrets([KEY]) | Secrets(patterns=[r"tok-\d+"], mask="***")
    assert both.masks == {"[REDACTED]", "***"}
    assert Secrets().masks == frozenset()


def test_escaped_forms_and_pieces_cost_nothing_for_plain_text() -> None:
    secrets = Secrets([ESCAPED, KEY])
    text = "plain words, a dot. " * 500
    assert secrets.mask_text(text) == text
    assert secrets.mask_text(text + "SEKRIT\\\\4242…") == text + "[REDACTED]…"


def test_a_stream_still_masks_a_secret_split_over_pieces() -> None:
    stream = Secrets([KEY]).stream()
    shown = stream.feed(f"the key {KEY[:6]}") + stream.feed(f"{KEY[6:]} is set.") + stream.end()
    assert shown == "the key [REDACTED] is set."
