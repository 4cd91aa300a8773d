"""The Python step of examples/kinds/call.yaml."""

from collections.abc import Mapping
from typing import Any


def longest_word(aether: Mapping[str, Any]) -> dict[str, Any]:
    """Write the longest of the input words (the first one on a tie)."""
    return {"longest": max(aether["words"], key=len)}
