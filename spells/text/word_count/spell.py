"""Spell: count the words in a text."""


def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())
