"""A tally of every consultation the Oracle grants.

Token and call accounting without external services. Oracle-consulting Sigils attach
the Oracle's usage counters to the messages they append (``summon`` does this
automatically when the OracleResponse carries usage); this Ward accumulates them per
Sigil and for the whole Invocation. Create one UsageWard per Invocation — or call
``reset()`` — to keep totals meaningful.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sanctum.wards.base import Ward

__all__ = ["UsageWard"]

Counters = dict[str, int | float]


class UsageWard(Ward):
    """The tally-keeper of Oracle calls and tokens.

    Ward — a middleware. Scans each delta's ``messages`` entry (a list of messages, or
    a single message mapping) for messages carrying a ``usage`` mapping and adds up
    its numeric counters (``int``/``float``; booleans, strings and nested mappings are
    ignored). Every such message counts as one Oracle call. The delta passes through
    unchanged.

    Example:
        >>> usage = UsageWard()
        >>> # ... rite = ritual.compile(wards=[usage]); await rite.ainvoke(...)
        >>> usage.summary()
        {'total': {'calls': 0}, 'by_sigil': {}}
    """

    def __init__(self) -> None:
        self._total: Counters = {}
        self._calls = 0
        self._by_sigil: dict[str, Counters] = {}

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Accumulate usage counters found in the delta; pass it through.

        Args:
            name: The Sigil whose delta this is.
            aether: The Aether (state) the Sigil saw; unused.
            delta: The delta; only its ``messages`` entry is read.

        Returns:
            ``delta`` itself.
        """
        self.record(name, delta)
        return delta

    def record(self, sigil: str, delta: Mapping[str, Any]) -> None:
        """Add the usage counters carried by ``delta["messages"]`` to the tallies.

        Args:
            sigil: The Sigil to credit.
            delta: A delta; anything but a ``messages`` list/mapping is ignored.
        """
        for usage in _usages(delta.get("messages")):
            self._calls += 1
            per_sigil = self._by_sigil.setdefault(sigil, {})
            for key, value in usage.items():
                if isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                counter = str(key)
                self._total[counter] = self._total.get(counter, 0) + value
                per_sigil[counter] = per_sigil.get(counter, 0) + value

    def summary(self) -> dict[str, Any]:
        """Report accumulated usage: total and per Sigil.

        Returns:
            ``{"total": {counters..., "calls": n}, "by_sigil": {sigil: {counters...}}}``
            — a fresh copy; ``calls`` counts the messages that carried usage (a usage
            counter literally named ``calls`` is overridden by it in ``total``).
        """
        total: dict[str, Any] = dict(self._total)
        total["calls"] = self._calls
        return {
            "total": total,
            "by_sigil": {sigil: dict(counters) for sigil, counters in self._by_sigil.items()},
        }

    def reset(self) -> None:
        """Forget every counter (e.g. between Invocations)."""
        self._total = {}
        self._calls = 0
        self._by_sigil = {}


def _usages(messages: Any) -> list[Mapping[str, Any]]:
    if isinstance(messages, Mapping):
        candidates: Sequence[Any] = [messages]
    elif isinstance(messages, list | tuple):
        candidates = messages
    else:
        return []
    found: list[Mapping[str, Any]] = []
    for message in candidates:
        if isinstance(message, Mapping):
            usage = message.get("usage")
            if isinstance(usage, Mapping):
                found.append(usage)
    return found
