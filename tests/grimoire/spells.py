"""Shared Spells for the grimoire tests (the corpus Tome)."""

from __future__ import annotations

from typing import Literal

from sanctum.grimoire import Tome, spell


@spell
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Report the weather in a city."""
    return f"sunny in {city}, 21 {unit}"


@spell
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@spell
def search_notes(query: str, tags: list[str] | None = None, limit: int = 5) -> list[str]:
    """Search the notes."""
    return [f"{query}:{tag}" for tag in (tags or [])][:limit]


@spell
def set_alarm(time: str, loud: bool = False) -> str:
    """Set an alarm."""
    return f"alarm at {time}{' (loud)' if loud else ''}"


@spell
def get_time() -> str:
    """Tell the time."""
    return "12:00"


def corpus_tome() -> Tome:
    """A fresh Tome holding the five corpus Spells, in a fixed order."""
    return Tome([get_weather, add, search_notes, set_alarm, get_time])
