"""A chain of voices: when one Oracle fails, the next answers the same question.

:class:`FallbackOracle` wraps a primary Oracle and its fallbacks. Each consultation
starts at the primary (unless it is benched) and goes down the chain on a failure
whose class allows it (:func:`sanctum.oracle.classify.classify_oracle_fault`): the
next Oracle gets the same messages and the same spell schemas, so the transcript and
the spell-calling mode are unchanged. Failures that a fallback would only hide (a 400
on a local server, a context overflow, tools refused, a bug) are raised at once.

The choice is recorded in the answer itself: when a fallback answered, the
response's ``usage`` holds ``{"fallback": {"oracle": <arcana>, "failed": [{"oracle",
"reason", "status"}, ...], "skipped": [<name>, ...]}}`` (``skipped`` only when a
benched Oracle was passed over). The summon loop turns that into ``OracleFellBack``
Omens and an ``oracle`` key on the assistant message; a cassette records it with the
answer, so a replay takes the same path, and a resumed run reads it from its Seals.

Benching is counted in consultations, never seconds: an Oracle that failed for a
reason that will not heal by itself (nobody listens, the model is missing, out of
memory, refused credentials) is skipped for the next ``bench_for`` consultations.
The count lives in a *bench ledger*: the Oracle's own by default (shared by every run
in the process), or, inside :func:`bench_ledger`, a plain dict the caller keeps with
its state. The summon loop keeps it in its ``oracle_bench`` Conduit, so a run
resumed in another process benches exactly as the first process would have, and its
final Aether is the same.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sanctum.errors import OracleChainExhausted
from sanctum.omens.events import OracleFellBack, Writer
from sanctum.oracle.base import Message, Oracle, OracleResponse, StreamingOracle
from sanctum.oracle.classify import OracleFault, classify_oracle_fault

__all__ = [
    "BENCHED",
    "DEFAULT_BENCH_FOR",
    "FallbackOracle",
    "OracleChainExhausted",
    "bench_ledger",
    "note_fallback",
]

DEFAULT_BENCH_FOR = 5
"""Consultations a benched Oracle (dead server, missing model) is skipped for."""

BENCHED = "benched"
"""The ``OracleFellBack`` reason of an Oracle passed over because it was benched."""

_LEDGER: ContextVar[dict[str, Any] | None] = ContextVar("sanctum_bench_ledger", default=None)


def _fresh_ledger(state: Mapping[str, Any] | None = None) -> dict[str, Any]:
    state = state or {}
    benched = state.get("benched")
    return {
        "consultations": int(state.get("consultations") or 0),
        "benched": {str(k): int(v) for k, v in (benched or {}).items()}
        if isinstance(benched, Mapping)
        else {},
    }


@contextmanager
def bench_ledger(state: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Count the consultations and benches of every FallbackOracle in a dict of yours.

    Inside the ``with`` block (and the tasks it awaits), a :class:`FallbackOracle`
    reads and updates the yielded ledger instead of its own, so state kept with a run
    (a Conduit, a Seal) decides which Oracle is skipped, not the process's history.

    Args:
        state: A ledger from an earlier block (``{"consultations": int, "benched":
            {oracle name: last consultation skipped}}``), or None to start at zero.
            It is copied, never changed.

    Yields:
        The ledger (a new dict of that shape), updated in place as Oracles are
        consulted; store it after the block.
    """
    ledger = _fresh_ledger(state)
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


@dataclass(frozen=True, slots=True)
class _Attempt:
    oracle: str
    fault: OracleFault
    error: BaseException

    def record(self) -> dict[str, Any]:
        return {"oracle": self.oracle, "reason": self.fault.reason, "status": self.fault.status}


class FallbackOracle(StreamingOracle):
    """Several voices in order of preference; the first one that can answer does.

    Oracle — an LLM adapter — that delegates to ``primary`` and, on a failure whose
    class allows it, to each of ``fallbacks`` in turn. A ``retry`` verdict (timeout,
    5xx, 429, a model-output failure) gives the same Oracle one more try first.
    Streaming falls back only before the first chunk was yielded: after that a failure
    is raised, because falling back would repeat text the caller already has.

    Args:
        primary: The Oracle consulted first.
        *fallbacks: The Oracles tried next, in order.
        bench_for: Consultations an Oracle is skipped for after a failure that will not
            heal by itself (``connection``, ``model_not_found``, ``out_of_memory``,
            ``auth``); ``0`` never benches.
        names: A display name per Oracle (primary first), e.g. the ritual file's oracle
            names; their ``arcana`` by default.

    Raises:
        ValueError: With no fallback, a negative ``bench_for``, ``names`` of the
            wrong length, or the same Oracle object twice in the chain (also inside a
            nested FallbackOracle): it would only be asked the same question again.
    """

    def __init__(
        self,
        primary: Oracle,
        *fallbacks: Oracle,
        bench_for: int = DEFAULT_BENCH_FOR,
        names: Sequence[str] | None = None,
    ) -> None:
        if not fallbacks:
            raise ValueError("FallbackOracle needs at least one fallback after the primary")
        if isinstance(bench_for, bool) or not isinstance(bench_for, int) or bench_for < 0:
            raise ValueError(f"bench_for must be an int >= 0 (consultations), not {bench_for!r}")
        self.oracles: tuple[Oracle, ...] = (primary, *fallbacks)
        _refuse_repeats(self.oracles)
        if names is not None and len(names) != len(self.oracles):
            raise ValueError(
                f"names has {len(names)} entries for {len(self.oracles)} oracles; give one "
                "name per oracle, primary first"
            )
        if names is not None and len(set(names)) != len(names):
            raise ValueError(f"names must differ (they key the bench ledger), not {names!r}")
        self.names: tuple[str, ...] = tuple(names or _distinct(o.arcana for o in self.oracles))
        self.bench_for = bench_for
        self.arcana = primary.arcana
        self._own = _fresh_ledger()

    def __repr__(self) -> str:
        return f"FallbackOracle({', '.join(self.names)}, bench_for={self.bench_for})"

    @property
    def constrains_output(self) -> bool:  # type: ignore[override]
        """Whether the primary can hold its output to a JSON Schema."""
        return self.oracles[0].constrains_output

    def ledger(self) -> dict[str, Any]:
        """The bench ledger in use: :func:`bench_ledger`'s inside its block, else our own.

        Shape: ``{"consultations": int, "benched": {oracle name: last consultation it
        is skipped for}}``.
        """
        active = _LEDGER.get()
        return active if active is not None else self._own

    def _order(self) -> tuple[list[int], list[int]]:
        """The chain for this consultation, benched Oracles last (never dropped).

        Returns:
            The indexes in the order to try, and the benched ones among them.
        """
        ledger = self.ledger()
        ledger["consultations"] += 1
        now = ledger["consultations"]
        benched = ledger["benched"]
        awake = [i for i, name in enumerate(self.names) if benched.get(name, 0) < now]
        asleep = [i for i in range(len(self.oracles)) if i not in awake]
        return awake + asleep, asleep

    def _judge(self, index: int, exc: BaseException, tried: int) -> _Attempt | None:
        """The attempt to record, or None to retry the same Oracle; raises when fatal."""
        fault = classify_oracle_fault(exc)
        if not fault.fall_back:
            raise exc
        if tried <= fault.retry_same:
            return None
        if fault.bench and self.bench_for:
            ledger = self.ledger()
            ledger["benched"][self.names[index]] = ledger["consultations"] + self.bench_for
        return _Attempt(self.names[index], fault, exc)

    def _exhausted(self, attempts: list[_Attempt]) -> OracleChainExhausted:
        lines = []
        records = []
        for attempt in attempts:
            endpoint = getattr(attempt.error, "endpoint", None) or "?"
            lines.append(f"  - {attempt.oracle} at {endpoint}: {attempt.fault.describe()}")
            records.append({**attempt.record(), "endpoint": endpoint, "fix": attempt.fault.fix})
        return OracleChainExhausted(
            f"every oracle of the fallback chain failed ({len(attempts)} attempts):\n"
            + "\n".join(lines),
            attempts=records,
        )

    def _answered(
        self, response: OracleResponse, index: int, attempts: list[_Attempt], asleep: list[int]
    ) -> OracleResponse:
        """The answer, with ``usage["fallback"]`` when the primary did not give it.

        ``skipped`` names the benched Oracles passed over (never asked), in chain order;
        a benched Oracle that was asked after the others failed is not among them.
        """
        if index != 0 or attempts:
            tried = {attempt.oracle for attempt in attempts} | {self.names[index]}
            skipped = [self.names[i] for i in sorted(asleep) if self.names[i] not in tried]
            record: dict[str, Any] = {
                "oracle": self.names[index],
                "failed": [attempt.record() for attempt in attempts],
            }
            if skipped:
                record["skipped"] = skipped
            usage = dict(response.usage)
            usage["fallback"] = record
            response = OracleResponse(response.text, list(response.spell_calls), usage)
        return response

    async def generate(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> OracleResponse:
        """Answer with the first Oracle of the chain that can.

        Returns:
            The answer; when a fallback gave it, ``usage["fallback"]`` says who
            answered and who failed why.

        Raises:
            OracleError: A failure no fallback should hide (see the module), raised
                as the Oracle raised it.
            OracleChainExhausted: Every Oracle failed; ``attempts`` lists them.
        """
        return await self._first(lambda oracle: oracle.generate(messages, spells))

    async def generate_constrained(
        self, messages: Sequence[Message], schema: Mapping[str, Any]
    ) -> OracleResponse:
        """Answer held to ``schema`` by the first Oracle of the chain that can.

        Raises:
            OracleError: As :meth:`generate`; a backend that cannot constrain its output
                refuses with a ``fail`` verdict, which is raised.
        """
        return await self._first(lambda oracle: oracle.generate_constrained(messages, schema))

    async def _first(self, ask: Callable[[Oracle], Awaitable[OracleResponse]]) -> OracleResponse:
        attempts: list[_Attempt] = []
        order, asleep = self._order()
        for index in order:
            tried = 0
            while True:
                tried += 1
                try:
                    response = await ask(self.oracles[index])
                except Exception as exc:
                    attempt = self._judge(index, exc, tried)
                    if attempt is None:
                        continue
                    attempts.append(attempt)
                    break
                return self._answered(response, index, attempts, asleep)
        raise self._exhausted(attempts)

    async def stream_response(
        self, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None = None
    ) -> AsyncIterator[str | OracleResponse]:
        """Stream the first answer that starts; fall back only before its first chunk.

        Raises:
            OracleError: A failure after text was streamed, or one no fallback
                should hide.
            OracleChainExhausted: Every Oracle failed before its first chunk.
        """
        attempts: list[_Attempt] = []
        order, asleep = self._order()
        for index in order:
            tried = 0
            while True:
                tried += 1
                started = False
                try:
                    async for item in _responses(self.oracles[index], messages, spells):
                        if isinstance(item, OracleResponse):
                            yield self._answered(item, index, attempts, asleep)
                            return
                        started = True
                        yield item
                    return
                except Exception as exc:
                    if started:
                        raise
                    attempt = self._judge(index, exc, tried)
                    if attempt is None:
                        continue
                    attempts.append(attempt)
                    break
        raise self._exhausted(attempts)

    async def aclose(self) -> None:
        """Close every Oracle of the chain."""
        for oracle in self.oracles:
            await oracle.aclose()


def _members(oracle: Oracle) -> Iterator[Oracle]:
    """``oracle`` itself, or every Oracle of a (nested) FallbackOracle."""
    if isinstance(oracle, FallbackOracle):
        for inner in oracle.oracles:
            yield from _members(inner)
    else:
        yield oracle


def _refuse_repeats(oracles: Sequence[Oracle]) -> None:
    """Raise ValueError when one Oracle object stands twice in a chain."""
    seen: dict[int, int] = {}
    for position, oracle in enumerate(oracles):
        for member in _members(oracle):
            first = seen.setdefault(id(member), position)
            if first != position:
                raise ValueError(
                    f"the same Oracle object ({member.arcana}) stands twice in the fallback "
                    f"chain (positions {first} and {position}); asking it again would only "
                    "repeat its failure: give each Oracle once"
                )


def _distinct(names: Iterable[str]) -> list[str]:
    """``names`` with repeats numbered (``ollama:x``, ``ollama:x#2``)."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


async def _responses(
    oracle: Oracle, messages: Sequence[Message], spells: Sequence[dict[str, Any]] | None
) -> AsyncIterator[str | OracleResponse]:
    """Text chunks, then one OracleResponse, from any Oracle."""
    stream_response = getattr(oracle, "stream_response", None)
    if stream_response is not None:
        async for item in stream_response(messages, spells):
            yield item
        return
    parts: list[str] = []
    async for chunk in oracle.stream_generate(messages, spells):
        parts.append(chunk)
        yield chunk
    yield OracleResponse(text="".join(parts))


def note_fallback(usage: Mapping[str, Any], message: dict[str, Any], writer: Writer) -> None:
    """Turn a fallback recorded in an answer's usage into Omens and an ``oracle`` key.

    Used by the summon loop and the plain ``oracle:`` Sigil: for each Oracle that
    failed, an ``OracleFellBack`` Omen (an agent-mode stream event) naming who answered;
    for each benched Oracle passed over without being asked, one with reason
    ``"benched"`` (:data:`BENCHED`). The assistant ``message`` gets ``oracle: <who
    answered>``. Does nothing when the primary answered (D7: the message keeps its seed
    shape).

    Args:
        usage: The answer's usage counters (``usage["fallback"]`` when a fallback
            answered: ``{"oracle": str, "failed": [{"oracle", "reason", "status"}],
            "skipped"?: [str]}``).
        message: The assistant message about to be stored; changed in place.
        writer: The Sigil's writer.
    """
    record = usage.get("fallback")
    if not isinstance(record, Mapping):
        return
    answered = str(record.get("oracle") or "")
    message["oracle"] = answered
    for failed in record.get("failed") or []:
        writer.emit(
            OracleFellBack(
                from_oracle=str(failed.get("oracle") or ""),
                to_oracle=answered,
                reason=str(failed.get("reason") or ""),
                status=failed.get("status"),
            )
        )
    for skipped in record.get("skipped") or []:
        writer.emit(OracleFellBack(from_oracle=str(skipped), to_oracle=answered, reason=BENCHED))
