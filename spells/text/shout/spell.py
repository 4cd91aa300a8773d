"""Spell: say a text loudly."""


def shout(text: str) -> str:
    """Say a text loudly (upper case, with an exclamation mark)."""
    return text.upper().rstrip(".!") + "!"
