"""InvocationContext.idempotency_key: stable across retries and a resumed superstep."""

from __future__ import annotations

from typing import Any

from sanctum import END, Ritual, SigilPolicy
from sanctum.codex.memory import MemoryCodex
from sanctum.ritual import InvocationContext


def test_the_key_names_invocation_superstep_and_sigil_and_survives_retries() -> None:
    keys: list[str] = []

    def pay(aether: dict[str, Any], invocation: InvocationContext) -> dict[str, Any]:
        keys.append(invocation.idempotency_key)
        if len(keys) == 1:
            raise ConnectionError("the bank hung up")
        return {"paid": True}

    ritual = Ritual().add_sigil("pay", pay, SigilPolicy(retries=1, backoff=lambda a: 0))
    ritual.set_entry_point("pay").add_edge("pay", END)
    rite = ritual.compile(codex=MemoryCodex())
    assert rite.invoke({}, invocation_id="inv-1") == {"paid": True}
    assert keys == ["inv-1:1:pay", "inv-1:1:pay"]  # the retry reuses the key


def test_a_context_built_by_hand_keeps_working() -> None:
    context = InvocationContext("i", 3)
    assert (context.sigil, context.idempotency_key) == ("", "i:3:")
