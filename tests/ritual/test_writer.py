"""SigilWriter and NullWriter."""

from __future__ import annotations

import pytest

from sanctum.omens import Omen, SpellCallRepaired, TokenEmitted
from sanctum.ritual.emitter import Emitter
from sanctum.ritual.writer import NULL_WRITER, SigilWriter


async def test_writer_emits_tokens_and_fills_empty_fields() -> None:
    got: list[Omen] = []
    writer = SigilWriter(Emitter((), got.append), "inv", 4, "sig")
    writer("tok")
    writer.emit(SpellCallRepaired(spell="s", detail="fixed"))
    writer.emit(SpellCallRepaired(spell="s", detail="kept", sigil="other", superstep=9))
    assert got[0] == TokenEmitted(
        payload="tok", invocation_id="inv", superstep=4, sigil="sig", timestamp=got[0].timestamp
    )
    assert (got[1].invocation_id, got[1].superstep, got[1].sigil) == ("inv", 4, "sig")  # type: ignore[attr-defined]
    assert (got[2].superstep, got[2].sigil) == (9, "other")  # type: ignore[attr-defined]
    assert writer.active
    with pytest.raises(TypeError, match="Omen"):
        writer.emit("not an omen")  # type: ignore[arg-type]


def test_null_writer_does_nothing() -> None:
    assert not NULL_WRITER.active
    NULL_WRITER("x")
    NULL_WRITER.emit(TokenEmitted(payload=1))
