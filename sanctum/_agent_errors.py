"""The error an Entity meets when its turn budget is spent and it may not answer.

Private: import :class:`TurnBudgetExceeded` from :mod:`sanctum.errors`. It lives here
only to keep that module within its length; it imports only the standard library and
the roots of the tree (:mod:`sanctum._errorroots`), never :mod:`sanctum.errors`, which
imports it.
"""

from __future__ import annotations

from sanctum._errorcodes import ErrorCode
from sanctum._errorroots import SigilExecutionError

__all__ = ["TurnBudgetExceeded"]


class TurnBudgetExceeded(SigilExecutionError):
    """The summon loop spent its ``max_turns`` and ``on_budget="fail"`` forbids an answer.

    Raised by the loop's ``final`` Sigil before it consults the Oracle, so the last Seal
    is the one before ``final`` (resume it with another budget to get the answer). A
    :class:`SigilExecutionError` of the Sigil ``final`` (as SpellCallParseError is of
    ``spells``), so it reaches the caller as itself. ``turns`` is the number of
    consultations spent; ``code`` is always ``ErrorCode.TURN_BUDGET``.
    """

    code = ErrorCode.TURN_BUDGET

    def __init__(self, message: str = "", *, turns: int = 0, sigil: str = "final") -> None:
        super().__init__(
            message
            or f"the agent spent its turn budget ({turns} consultations) without an answer, "
            "and on_budget is 'fail'; raise max_turns or set on_budget: answer",
            sigil=sigil,
        )
        self.turns = turns
