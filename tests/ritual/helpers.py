"""Small graph builders and sigils shared by the engine tests."""

from __future__ import annotations

from typing import Any

from sanctum import END, Ritual


def noop(aether: dict[str, Any]) -> dict[str, Any]:
    """A Sigil that changes nothing."""
    return {}


def setter(key: str, value: Any):  # type: ignore[no-untyped-def]
    """A Sigil writing ``{key: value}``."""

    def sigil(aether: dict[str, Any]) -> dict[str, Any]:
        return {key: value}

    sigil.__name__ = f"set_{key}"
    return sigil


def recorder(log: list[str], name: str, delta: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    """A Sigil that appends its name to ``log`` and returns ``delta``."""

    def sigil(aether: dict[str, Any]) -> dict[str, Any]:
        log.append(name)
        return dict(delta or {})

    return sigil


def counter_cycle(n: int, **compile_kwargs: Any):  # type: ignore[no-untyped-def]
    """A one-sigil cycle that counts ``i`` up to ``n`` and ends."""
    ritual = Ritual()
    ritual.add_sigil("tick", lambda a: {"i": a["i"] + 1})
    ritual.add_conditional_edge("tick", lambda a: "tick" if a["i"] < n else END)
    ritual.set_entry_point("tick")
    compile_kwargs.setdefault("recursion_limit", n + 5)
    return ritual.compile(**compile_kwargs)
