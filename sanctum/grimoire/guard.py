"""The loop guard: noticing an Entity that repeats itself, and stopping it.

Loop guardrails. :class:`LoopGuard` is a pure controller with no side effects: told each
spell call before it is cast and each outcome after, it answers ``allow``, ``warn``,
``block`` or ``halt``; the summon loop decides what to do with the answer. Its whole
state is a JSON object (:meth:`LoopGuard.state`), which the loop keeps in the ``guard``
Conduit, so a resumed or time-travelled run guards exactly as an uninterrupted one.
Decisions count spell calls, never seconds.

Three counters, with the numbers Hermes Agent's guardrails use as defaults:

- **repeat_failure**: the same call (spell plus canonical arguments) failed N times:
  a warning from 2; from 5 the next identical call is blocked (not cast).
- **tool_failure**: one spell failed N times, whatever the arguments: a warning from 3,
  a halt at 8.
- **same_result**: a ``read`` spell returned the same result for the same call N times
  in a row: a warning from 2; from 5 the next identical call is blocked. ``repeatable``
  spells (pollers) are exempt.

A successful ``propose`` or ``write`` call is progress: it clears the failure counts,
so edit-then-retry is not taken for a loop.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GuardDecision", "GuardLimits", "LoopGuard", "call_signature"]

_DEFAULT_WARN = {"repeat_failure": 2, "tool_failure": 3, "same_result": 2}
_DEFAULT_STOP = {"repeat_failure": 5, "tool_failure": 8, "same_result": 5}


def call_signature(spell: str, arguments: Mapping[str, Any]) -> str:
    """The identity of a call: its spell and a SHA-256 of its canonical JSON arguments.

    Argument order does not matter; raw values never appear in the signature.

    Args:
        spell: The spell's name.
        arguments: The call's arguments.

    Returns:
        ``"<spell>:<16 hex digits>"``.
    """
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=repr)
    return f"{spell}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _hash(result: str) -> str:
    return hashlib.sha256(result.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class GuardLimits:
    """The thresholds of a :class:`LoopGuard`, counted in calls.

    Attributes:
        warn: ``{counter: n}``: from the n-th occurrence the model gets a warning.
        stop: ``{counter: n}``: at n the loop blocks the next call or halts.

    Raises:
        ValueError: If a counter name is unknown, a threshold is not a positive int, or
            a counter warns later than it stops (defaults filled in).
    """

    warn: Mapping[str, int] = field(default_factory=lambda: dict(_DEFAULT_WARN))
    stop: Mapping[str, int] = field(default_factory=lambda: dict(_DEFAULT_STOP))

    def __post_init__(self) -> None:
        for which, given, base in (
            ("warn", self.warn, _DEFAULT_WARN),
            ("stop", self.stop, _DEFAULT_STOP),
        ):
            for key, value in given.items():
                if key not in base:
                    raise ValueError(
                        f"unknown loop guard counter {key!r} in {which}; use {', '.join(base)}"
                    )
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(f"loop guard {which}.{key} must be an int >= 1, not {value!r}")
            object.__setattr__(self, which, {**base, **given})
        for key, stop in self.stop.items():
            if self.warn[key] > stop:
                raise ValueError(
                    f"loop guard warn.{key} ({self.warn[key]}) is above stop.{key} ({stop}); "
                    "the warning must come first"
                )


@dataclass(frozen=True, slots=True)
class GuardDecision:
    """What the loop guard says about one call.

    Attributes:
        action: ``"allow"``, ``"warn"``, ``"block"`` (do not cast; end the loop) or
            ``"halt"`` (cast happened; end the loop).
        code: The counter that tripped (``"repeat_failure"`` ...), ``""`` for allow.
        message: One sentence for the model (empty for allow).
    """

    action: str = "allow"
    code: str = ""
    message: str = ""


_ALLOW = GuardDecision()


class LoopGuard:
    """A pure controller over one loop's spell calls; its state is a JSON object.

    Args:
        limits: Thresholds (defaults: Hermes Agent's numbers).
        state: A state from :meth:`state` to continue from (None: a fresh guard).
    """

    __slots__ = ("_failures", "_limits", "_results", "_tools")

    def __init__(self, limits: GuardLimits | None = None, state: Mapping[str, Any] | None = None):
        self._limits = limits or GuardLimits()
        state = state or {}
        self._failures: dict[str, int] = dict(state.get("failures") or {})
        self._tools: dict[str, int] = dict(state.get("tools") or {})
        self._results: dict[str, list[Any]] = {
            k: list(v) for k, v in (state.get("results") or {}).items()
        }

    def state(self) -> dict[str, Any]:
        """The guard's whole state, JSON-serialisable (kept in the ``guard`` Conduit)."""
        return {
            "failures": dict(self._failures),
            "tools": dict(self._tools),
            "results": {k: list(v) for k, v in self._results.items()},
        }

    def before(self, spell: str, arguments: Mapping[str, Any]) -> GuardDecision:
        """Decide whether a call may be cast.

        Returns:
            ``block`` when the same call already failed (or returned the same result)
            as often as the stop threshold says; ``allow`` otherwise.
        """
        signature = call_signature(spell, arguments)
        stop = self._limits.stop
        if self._failures.get(signature, 0) >= stop["repeat_failure"]:
            return GuardDecision(
                "block",
                "repeat_failure",
                f"Blocked: {spell} already failed {self._failures[signature]} times with "
                "these arguments. Change the arguments or answer with what you have.",
            )
        seen = self._results.get(signature)
        if seen and seen[1] >= stop["same_result"]:
            return GuardDecision(
                "block",
                "same_result",
                f"Blocked: {spell} returned the same result {seen[1]} times. Use it and "
                "answer with what you have.",
            )
        return _ALLOW

    def after(
        self,
        spell: str,
        arguments: Mapping[str, Any],
        *,
        failed: bool,
        result: str,
        access: str = "write",
        repeatable: bool = False,
    ) -> GuardDecision:
        """Record a cast call's outcome and decide what to tell the model.

        Args:
            spell: The spell's name.
            arguments: The arguments it was cast with.
            failed: Whether it raised (or returned a result marked as an error).
            result: The result text the model will see.
            access: The spell's access level (``read`` results are compared).
            repeatable: A poller, exempt from the same-result counter.

        Returns:
            ``halt`` (tool_failure reached its stop), ``warn`` or ``allow``.
        """
        signature = call_signature(spell, arguments)
        warn, stop = self._limits.warn, self._limits.stop
        if failed:
            count = self._failures[signature] = self._failures.get(signature, 0) + 1
            tool = self._tools[spell] = self._tools.get(spell, 0) + 1
            if tool >= stop["tool_failure"]:
                return GuardDecision(
                    "halt",
                    "tool_failure",
                    f"Stopped: {spell} failed {tool} times. Answer with what you have.",
                )
            if count >= warn["repeat_failure"]:
                return GuardDecision(
                    "warn",
                    "repeat_failure",
                    f"Note: {spell} failed {count} times with these arguments; change the "
                    "arguments or answer with what you have.",
                )
            if tool >= warn["tool_failure"]:
                return GuardDecision(
                    "warn",
                    "tool_failure",
                    f"Note: {spell} failed {tool} times; try another way or answer.",
                )
            return _ALLOW
        if access in ("propose", "write"):  # progress: earlier failures were experiments
            self._failures.clear()
            self._tools.clear()
            return _ALLOW
        if access != "read" or repeatable:
            return _ALLOW
        digest = _hash(result)
        previous = self._results.get(signature)
        repeats = previous[1] + 1 if previous and previous[0] == digest else 1
        self._results[signature] = [digest, repeats]
        if repeats >= warn["same_result"]:
            return GuardDecision(
                "warn",
                "same_result",
                f"Note: {spell} returned the same result {repeats} times; use it instead "
                "of casting it again.",
            )
        return _ALLOW
