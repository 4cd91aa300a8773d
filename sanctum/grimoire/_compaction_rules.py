"""The rules a Compaction's options keep, and the words of an overflow it cannot mend.

Private to :mod:`sanctum.grimoire.compaction`. Two things live here so the compaction
module stays about the transcript: checking the options of a ``Compaction`` (types and
ranges, and the room ``max_output`` leaves in the context window), and wording the
:class:`~sanctum.errors.ContextOverflowError` raised when the server still reports an
overflow — saying what really happened, where the window figure came from, and that
the prompt size is an estimate (characters ÷ 4), not the server's count.
"""

from __future__ import annotations

from typing import Any, Literal

from sanctum.errors import ContextOverflowError

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "OUTPUT_MARGIN",
    "Overflow",
    "answer_budget",
    "check_options",
    "max_output_limit",
    "overflow_error",
    "room_problem",
]

OUTPUT_MARGIN = 256
"""Tokens kept free besides ``max_output`` (chat framing, the summary's growth)."""

Overflow = Literal["nothing", "nothing_more", "after"]
"""What compaction could do about an overflow: nothing to cut at all, nothing more to
cut in an already compacted view, or a compaction that did not make the prompt fit."""

_KINDS = {int: "an int", float: "a number"}

DEFAULT_MAX_OUTPUT = 512
"""Tokens kept free for the answer when ``max_output`` is not given and the window allows."""

_MIN_AUTO_OUTPUT = 64


def answer_budget(max_output: int | None, window: int) -> int:
    """The tokens kept free for the answer in a window of ``window`` tokens.

    An explicit ``max_output`` is used as given (its room was checked against a
    declared window). Without one, :data:`DEFAULT_MAX_OUTPUT`, lowered to
    :func:`max_output_limit` for small windows (never below 64): 2,048 → 512,
    1,024 → 256, 512 → 64.
    """
    if max_output is not None:
        return max_output
    return max(_MIN_AUTO_OUTPUT, min(DEFAULT_MAX_OUTPUT, max_output_limit(window)))


def max_output_limit(window: int) -> int:
    """The most tokens ``max_output`` may reserve in a window of ``window`` tokens.

    The rule: ``max_output`` plus :data:`OUTPUT_MARGIN` take at most half the window, so
    the trigger (``min(at·W, W − max_output − 256)``) is never below half the window
    and a compacted view — summary and verbatim tail — fits under it; past that every
    consultation would compact again.

    Args:
        window: The context window in tokens.

    Returns:
        The limit in tokens (2,048 → 768, 4,096 → 1,792); below 1 when the window is too
        small for any answer budget.
    """
    return window // 2 - OUTPUT_MARGIN


def _number(
    name: str,
    value: Any,
    kind: type,
    low: float,
    high: float | None = None,
    *,
    optional: bool = False,
) -> None:
    """Refuse ``value`` unless it is a ``kind`` (never a bool) within ``[low, high]``."""
    if value is None and optional:
        return
    accepted = (int, float) if kind is float else (int,)
    if isinstance(value, bool) or not isinstance(value, accepted):
        none = " or None" if optional else ""
        raise ValueError(
            f"compact {name} must be {_KINDS[kind]}{none}, not {type(value).__name__} {value!r}"
        )
    if value < low or (high is not None and value > high):
        span = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"compact {name} must be {span}, not {value!r}")


def check_options(
    *,
    window: Any,
    at: Any,
    keep_tail: Any,
    quotes: Any,
    max_output: Any,
) -> None:
    """Check a Compaction's options: types, ranges, and the room ``max_output`` leaves.

    Args:
        window: Tokens (int >= 512) or None.
        at: A share of the window in [0.1, 0.95], or None.
        keep_tail: A share of the window in [0.05, 0.6].
        quotes: Characters (int >= 0).
        max_output: Tokens (int >= 1) or None (:func:`answer_budget` decides); with
            a window, at most :func:`max_output_limit` of it.

    Raises:
        ValueError: Naming the option, what it must be and what it was.
    """
    _number("window", window, int, 512, optional=True)
    _number("at", at, float, 0.1, 0.95, optional=True)
    _number("keep_tail", keep_tail, float, 0.05, 0.6)
    _number("quotes", quotes, int, 0)
    _number("max_output", max_output, int, 1, optional=True)
    if window is not None and max_output is not None and max_output > max_output_limit(window):
        raise ValueError(room_problem(window, max_output))


def room_problem(window: int, max_output: int) -> str:
    """Why ``max_output`` leaves no room in ``window`` (tokens), and the fix."""
    limit = max_output_limit(window)
    fix = (
        f"lower max_output to {limit} or less, or declare a larger window"
        if limit >= 1
        else f"a window of at least {2 * (max_output + OUTPUT_MARGIN)} tokens is needed"
    )
    return (
        f"compact max_output {max_output} leaves no room for the prompt in a {window}-token "
        f"window: max_output + {OUTPUT_MARGIN} may take at most half the window, or every "
        f"consultation would compact again; {fix}"
    )


def overflow_error(
    exc: BaseException,
    outcome: Overflow,
    *,
    reported: int | None,
    declared: int | None,
    assumed: int,
    fixed: int,
    estimate: int,
) -> ContextOverflowError:
    """The ContextOverflowError for an overflow compaction could not mend.

    Args:
        exc: The server's last overflow (its endpoint, status and body are kept).
        outcome: What compaction could do (:data:`Overflow`).
        reported: The window in tokens the server stated in an overflow error, if any.
        declared: The window in tokens declared (``context_window:`` or
            ``Compaction(window=)``), if any.
        assumed: The window in tokens compaction assumed when neither is known.
        fixed: Estimated tokens of the system prompt and spell schemas.
        estimate: Estimated tokens of the whole request (``fixed`` included).

    Returns:
        The error; its ``window`` is the reported or declared window (None when only
        assumed), its ``estimate`` the estimate.
    """
    if reported:
        source = f"the server reported a window of {reported} tokens"
    elif declared:
        source = f"the declared window is {declared} tokens (context_window)"
    else:
        source = (
            "the window is unknown: the server did not state it and none is declared "
            f"(compaction assumed {assumed} tokens)"
        )
    what = {
        "nothing": "the prompt overflows the oracle's context window and nothing could be "
        "compacted: the transcript is too short to cut, and what is always sent whole "
        "(the system prompt, the spell schemas, the first request and the latest turn) "
        "does not fit",
        "nothing_more": "the prompt overflows the oracle's context window and nothing more "
        "could be compacted: the compacted view (the summary, the first request, the "
        "latest turn, the system prompt and the spell schemas) does not fit",
        "after": "the prompt still overflows the oracle's context window after compaction",
    }[outcome]
    fixes = ["raise the window (num_ctx / n_ctx)"]
    if not (reported or declared):
        fixes.append("declare the oracle's context_window")
    if outcome == "after":
        fixes += ["lower compact keep_tail", "shorten the spell results"]
    else:
        fixes += ["shorten the system prompt or the request", "offer fewer spells"]
    return ContextOverflowError(
        f"{what}; {source}; the request is estimated at about {estimate} tokens "
        f"(characters ÷ 4; the system prompt and spell schemas about {fixed}). "
        f"Likely fix: {', '.join(fixes[:-1])}, or {fixes[-1]}.",
        endpoint=getattr(exc, "endpoint", None),
        status=getattr(exc, "status", None),
        body=getattr(exc, "body", ""),
        window=reported or declared or None,
        estimate=estimate,
    )
