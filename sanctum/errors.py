"""Every way a ritual may be refused or go wrong, in one tree.

All of sanctum's exceptions descend from :class:`SanctumError`, so a caller can catch
the whole family with one ``except`` clause. :class:`Interrupt` deliberately stands
outside the tree: it is a pause (human-in-the-loop control flow), not a failure.

Where the specification promises a built-in exception type (``ValueError`` from a
router, ``TypeError`` from a non-mapping delta, ``ValueError`` from a Tome), the class
here inherits from both, so ``except ValueError`` keeps working.

Each class carries its context as keyword-only attributes (all optional, so
``raise SigilExecutionError("message")`` works as in the original engine) and renders
a message that reads well on its own in a terminal. Errors other layers word anew carry
a ``code`` (:class:`ErrorCode`) and the names involved, so callers map codes and never
parse messages (a RitualValidationError carries every :class:`GraphProblem` found)::

    SanctumError
    ├── RitualValidationError        a Ritual cannot be compiled into a Rite
    │     codes: no-entry, unknown-*, self-fallback, unreachable, dead-end, endless,
    │     join-*, invalid-ritual (see ErrorCode)
    ├── AetherValidationError        a write outside the declared Conduits
    ├── RouteError (ValueError)      a router chose a Sigil that does not exist
    ├── DeltaTypeError (TypeError)   a Sigil returned something other than a mapping
    ├── SigilExecutionError          a Sigil raised during a superstep
    │   ├── SigilTimeoutError        ... by running past its policy's timeout
    │   └── TurnBudgetExceeded       an agent spent max_turns, may not answer (turn-budget)
    ├── RecursionLimitError          too many supersteps without reaching END (recursion-limit)
    ├── SigilJoinError               a join="all" Sigil waits for predecessors that never ran
    ├── WardRejection                a Ward vetoed a Sigil's delta
    ├── SealError                    a Seal could not be written, read or resumed
    │   ├── CodexUnavailableError    ... because the store cannot be used right now
    │   └── LeaseLost                ... because another worker took the run over (lease-lost)
    ├── StreamModeError (ValueError) astream was given an unknown mode
    ├── OracleError                  the model could not be consulted
    │   ├── OracleConnectionError    nobody listens at the model server's address
    │   ├── OracleTimeoutError       the model server did not answer in time
    │   ├── OracleChainExhausted     every Oracle of a fallback chain failed
    │   │                            (oracle-chain-exhausted)
    │   └── OracleResponseError      the model server answered with an error
    │       ├── OracleOutputError    ... because it could not parse the model's output
    │       └── ContextOverflowError ... the prompt outgrew the window after compaction
    │                                (context-overflow)
    ├── SpellError                   the Grimoire's family
    │   ├── SpellExecutionError      a Spell raised, or no such Spell exists
    │   ├── SpellCallParseError      the repair layer gave up (also a SigilExecutionError)
    │   └── SpellManifestError (ValueError)  a spell.json folder is malformed
    ├── CassetteError (ValueError)   a cassette file is missing, malformed or unwritable
    ├── CassetteMismatch             a replayed request differs from the recording
    ├── RitualFileError              a ritual file (YAML) is malformed
    ├── ExpressionError (ValueError) a ritual-file expression failed or was refused
    ├── RitualInputError (ValueError) inputs or updates do not fit the ritual
    └── TraceFileError (ValueError)  a file given as a trace is not a sanctum trace

    Interrupt (Exception, outside the tree)  a Sigil paused the Invocation
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanctum._errorcodes import ErrorCode, GraphProblem
from sanctum._errorroots import SanctumError, SealError, SigilExecutionError

__all__ = [
    "AetherValidationError",
    "CassetteError",
    "CassetteMismatch",
    "CodexUnavailableError",
    "ContextOverflowError",
    "DeltaTypeError",
    "ErrorCode",
    "ExpressionError",
    "FileProblem",
    "GraphProblem",
    "Interrupt",
    "LeaseLost",
    "OracleChainExhausted",
    "OracleConnectionError",
    "OracleError",
    "OracleOutputError",
    "OracleResponseError",
    "OracleTimeoutError",
    "RecursionLimitError",
    "RitualFileError",
    "RitualInputError",
    "RitualValidationError",
    "RouteError",
    "SanctumError",
    "SealError",
    "SigilExecutionError",
    "SigilJoinError",
    "SigilTimeoutError",
    "SpellCallParseError",
    "SpellError",
    "SpellExecutionError",
    "SpellManifestError",
    "StreamModeError",
    "TraceFileError",
    "TurnBudgetExceeded",
    "WardRejection",
]


# --------------------------------------------------------------------------- ritual


class RitualValidationError(SanctumError):
    """The Ritual is malformed and cannot be sealed into a Rite.

    Raised while building or compiling a Ritual whose graph is invalid: missing entry
    point, edges referencing unknown Sigils, Sigils unreachable from START, or Sigils
    without an outgoing edge. ``problems`` holds every :class:`GraphProblem` found (a
    message alone makes one of code ``invalid-ritual``); the message, ``code``, ``sigil``,
    ``source``, ``target`` and ``sigils`` (the Sigils at fault) are the first one's.
    """

    def __init__(
        self,
        message: str = "",
        *,
        code: ErrorCode = ErrorCode.INVALID_RITUAL,
        sigils: Sequence[str] = (),
        sigil: str | None = None,
        source: str | None = None,
        target: str | None = None,
        problems: Sequence[GraphProblem] = (),
    ) -> None:
        if not problems:
            problems = [GraphProblem(code, message, sigil, source, target, None, tuple(sigils))]
        first = problems[0]
        super().__init__(message or first.message)
        self.problems: tuple[GraphProblem, ...] = tuple(problems)
        self.code, self.sigil, self.sigils = first.code, first.sigil, first.sigils
        self.source, self.target = first.source, first.target


class AetherValidationError(SanctumError):
    """A write reached for a Conduit the AetherSchema does not declare.

    Raised for an initial Aether, a Sigil's delta or resumption ``updates`` that name
    undeclared keys (schema Rites only). ``sigil`` is the writer (``None`` for input
    and updates); ``keys`` the offending keys, sorted.
    """

    def __init__(self, message: str, *, sigil: str | None = None, keys: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.sigil = sigil
        self.keys: tuple[str, ...] = tuple(keys)


class RouteError(SanctumError, ValueError):
    """A router returned a value that is neither a bound Sigil nor END.

    Also raised when the value is missing from the conditional edge's ``path_map``.
    Subclass of ``ValueError`` as the specification requires. ``sigil`` is the source
    of the conditional edge; ``value`` what its router returned.
    """

    def __init__(self, message: str, *, sigil: str, value: object) -> None:
        super().__init__(message)
        self.sigil = sigil
        self.value = value


class DeltaTypeError(SanctumError, TypeError):
    """A Sigil returned something other than a mapping.

    Subclass of ``TypeError`` as the specification requires. ``sigil`` names the
    Sigil; ``returned`` is the type name it returned.
    """

    def __init__(self, message: str, *, sigil: str, returned: str) -> None:
        super().__init__(message)
        self.sigil = sigil
        self.returned = returned


class SigilTimeoutError(SigilExecutionError):
    """A Sigil pondered past its allotted time and was cut off.

    Raised when an attempt exceeds its SigilPolicy's timeout. ``timeout`` is the
    configured bound in seconds.
    """

    def __init__(
        self,
        message: str = "",
        *,
        sigil: str = "",
        timeout: float = 0.0,
        aether: Mapping[str, Any] | None = None,
        invocation_id: str | None = None,
    ) -> None:
        super().__init__(message, sigil=sigil, aether=aether, invocation_id=invocation_id)
        self.timeout = timeout


class RecursionLimitError(SanctumError):
    """The ritual spun past its allotted supersteps and was cut short.

    ``invocation_id`` names the run, ``sigil`` the last Sigil executed, ``limit`` the
    Rite's recursion_limit, ``circle`` the Circle of an inner run, ``resumed_from`` the
    Seal a resume started from and ``superstep`` where it stopped. Given no message but
    a ``limit``, it words one from the fields with the engine's (Python API) ``advice``.
    """

    code = ErrorCode.RECURSION_LIMIT
    advice = "Check the cycle's stop condition, or raise compile(recursion_limit=...)"

    def __init__(
        self,
        message: str = "",
        *,
        invocation_id: str = "",
        sigil: str | None = None,
        limit: int = 0,
        circle: str | None = None,
        resumed_from: str | None = None,
        superstep: int | None = None,
    ) -> None:
        self.invocation_id = invocation_id
        self.sigil = sigil
        self.limit = limit
        self.circle = circle
        self.resumed_from = resumed_from
        self.superstep = superstep
        super().__init__(message or (self.worded(self.advice) if limit else ""))

    def worded(self, advice: str) -> str:
        """The message from the fields, ending with ``advice`` (another layer's fix)."""
        run = f"invocation {self.invocation_id!r}"
        if self.circle is not None:
            run = f"the inner run {self.invocation_id!r} of circle {self.circle!r}"
        call = "this run"
        if self.resumed_from is not None and self.superstep is not None:
            call = (
                f"this resume (from seal {self.resumed_from!r}, superstep "
                f"{self.superstep - self.limit}, to superstep {self.superstep})"
            )
        return (
            f"{run} reached the recursion limit of {self.limit} supersteps in {call} "
            f"without reaching END; last sigil executed: {self.sigil!r}. {advice}"
        )


class SigilJoinError(SanctumError):
    """The rite concluded while a join still awaited absent celebrants.

    ``pending`` maps each waiting join="all" Sigil to the sorted list of static
    predecessors it is still missing.
    """

    def __init__(
        self, message: str = "", *, pending: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        super().__init__(message)
        self.pending: dict[str, list[str]] = {k: sorted(v) for k, v in (pending or {}).items()}


class WardRejection(SanctumError):
    """A Ward vetoed a Sigil's delta.

    Raise it from ``Ward.after_sigil``: the delta is discarded, a DeltaRejected Omen
    is emitted, the superstep aborts and the Sigil's on_error policy applies if
    present. ``reason`` says why, for the Omen and the error message.
    """

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason or "delta rejected by a Ward")
        self.reason = reason


class CodexUnavailableError(SealError):
    """The Codex cannot be used right now; nothing about the request is wrong.

    A PostgreSQL server that stayed down (or kept dropping the connection) past the
    store's reconnect budget, a SQLite file whose write lock another process held past
    ``busy_timeout``, a full disk. The same call may work later; nothing was written
    by the failed call. The command line exits with status 1 (not 2, bad usage).
    """


class CassetteError(SanctumError, ValueError):
    """A cassette file cannot be used: missing, not JSON Lines, not a sanctum cassette,
    of another format version, with an invalid matching rule, or not writable.

    ``path`` is the cassette file. The command line exits with status 2 (bad input).
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class CassetteMismatch(SanctumError):
    """A replayed Oracle call differs from the one the cassette recorded.

    ``sigil`` and ``oracle`` name who asked, ``call`` is the recorded call number
    (1-based, per oracle and sigil) and ``diff`` a short unified diff of the recorded
    and the actual request ("" when the cassette simply holds no more calls). Raised
    inside the run, so the run fails (exit status 1 from the command line).
    """

    def __init__(
        self, message: str, *, sigil: str | None, oracle: str, call: int, diff: str
    ) -> None:
        super().__init__(message)
        self.sigil = sigil
        self.oracle = oracle
        self.call = call
        self.diff = diff


class StreamModeError(SanctumError, ValueError):
    """``astream`` was given an unknown stream mode, or none at all."""


# --------------------------------------------------------------------------- grimoire


class SpellError(SanctumError):
    """Base class of the Grimoire's failures (Spells — tools — and their calls)."""


class SpellExecutionError(SpellError):
    """A Spell could not be cast: it raised, or no Spell of that name exists.

    ``spell`` names the Spell; the original exception, if any, is ``__cause__``.
    """

    def __init__(self, message: str = "", *, spell: str = "") -> None:
        super().__init__(message)
        self.spell = spell


class SpellCallParseError(SpellError, SigilExecutionError):
    """The repair layer surrendered after max_repair_rounds correction-only rounds.

    ``rejected`` preserves the raw text of the calls that could not be repaired, for
    debugging; ``rounds`` is the number of consecutive correction rounds. It is also a
    :class:`SigilExecutionError` (``sigil`` is the summon loop's ``"spells"`` Sigil), so
    it reaches the caller of a summoned Entity as itself, not wrapped.
    """

    def __init__(
        self,
        message: str,
        *,
        rejected: Sequence[str] = (),
        rounds: int = 0,
        sigil: str = "spells",
        aether: Mapping[str, Any] | None = None,
        invocation_id: str | None = None,
    ) -> None:
        SigilExecutionError.__init__(
            self, message, sigil=sigil, aether=aether, invocation_id=invocation_id
        )
        self.rejected: list[str] = list(rejected)
        self.rounds = rounds


class SpellManifestError(SpellError, ValueError):
    """A spell folder's ``spell.json`` is malformed or its entrypoint cannot be resolved.

    Subclass of ``ValueError`` as the specification of ``Tome.load_from_directory``
    requires. ``path`` is the manifest or folder at fault.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


# --------------------------------------------------------------------------- spec


@dataclass(frozen=True, slots=True)
class FileProblem:
    """One problem found in a ritual file, positioned for a terminal or an editor.

    ``line`` and ``column`` are 1-based; ``str()`` gives ``path:line:column: message``.
    """

    path: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"


class RitualFileError(SanctumError):
    """A ritual file is malformed: every problem found, each with its position.

    ``problems`` lists every :class:`FileProblem` found in the file, in file order;
    the message is one ``path:line:column: message`` line per problem. ``path``,
    ``line`` and ``column`` repeat the first problem for convenience.
    """

    def __init__(self, problems: Sequence[FileProblem]) -> None:
        if not problems:
            raise ValueError("RitualFileError needs at least one problem")
        self.problems: tuple[FileProblem, ...] = tuple(problems)
        first = self.problems[0]
        self.path = first.path
        self.line = first.line
        self.column = first.column
        super().__init__("\n".join(str(p) for p in self.problems))


class ExpressionError(SanctumError, ValueError):
    """An expression or template of a ritual file failed or was refused.

    Raised at run time (undefined name, a condition that is not a boolean, a sandbox
    refusal such as ``'x' * 10**9``). ``sigil`` names the Sigil, ``expression`` the
    source text, ``field`` the ritual-file field (``when``, ``prompt``, ...).
    """

    def __init__(self, message: str, *, sigil: str, expression: str, field: str) -> None:
        super().__init__(message)
        self.sigil = sigil
        self.expression = expression
        self.field = field


class RitualInputError(SanctumError, ValueError):
    """The inputs (or resumption updates) do not fit the ritual.

    Raised before an invocation starts: a malformed ``key=value`` pair, an unreadable
    or non-mapping input file, an undeclared input name, a missing required input or a
    value of the wrong type. ``name`` is the input at fault (``None`` when the whole
    set is wrong); ``source`` where it came from (``--input``, a file path, ``-``).
    """

    def __init__(self, message: str, *, name: str | None = None, source: str | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.source = source


class TraceFileError(SanctumError, ValueError):
    """A file given as a trace is not a sanctum trace (``path`` names it)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


# --------------------------------------------------------------------------- interrupt


class Interrupt(Exception):
    """The ritual paused, awaiting words from beyond the circle.

    Control-flow signal, not a failure (it does not derive from SanctumError): raised
    by ``interrupt()`` inside a Sigil and propagated to the caller after a Seal is
    written. ``reason`` is the caller-facing reason; ``sigil`` the Sigil that paused
    (filled in by the scheduler); ``invocation_id`` and ``seal_id`` locate the Seal to
    resume from when the Rite has a Codex. ``reasons`` maps every Sigil that paused in
    the same superstep to its reason, in bind order (``{sigil: reason}``; the scheduler
    collects them all, so one resumption can answer every question); ``reason`` and
    ``sigil`` are those of the first.
    """

    def __init__(
        self,
        reason: str = "",
        *,
        sigil: str | None = None,
        invocation_id: str | None = None,
        seal_id: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sigil = sigil
        self.invocation_id = invocation_id
        self.seal_id = seal_id
        self.reasons: dict[str, str] = {sigil: reason} if sigil is not None else {}
        self.gathered = False
        """Whether the scheduler already collected the pauses of the same superstep."""


from sanctum._agent_errors import TurnBudgetExceeded  # noqa: E402  (apart, for length)
from sanctum._oracle_errors import (  # noqa: E402  (defined apart, for length)
    ContextOverflowError,
    OracleChainExhausted,
    OracleConnectionError,
    OracleError,
    OracleOutputError,
    OracleResponseError,
    OracleTimeoutError,
)
from sanctum._queue_errors import LeaseLost  # noqa: E402  (defined apart, for length)
