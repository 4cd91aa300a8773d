"""Spell: say a text twice."""


def echo(text: str) -> str:
    """Say a text twice, as an echo would."""
    return f"{text}, {text}"
