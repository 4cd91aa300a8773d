"""summon — calling an Entity into the circle, ready to act.

Entity — an agent. Agent factory: builds the canonical ReAct loop as a Rite (compiled
graph) using nothing but the public primitives — Ritual, an AetherSchema whose
``messages`` Conduit appends, and conditional edges — demonstrating they suffice for
agentic behaviour::

    oracle -> (spell_calls?) -> spells -> oracle -> ... -> END

The Aether (state) holds ``messages`` (append; dicts with role/content), plus
``repair_rounds`` (the current count of consecutive correction-only rounds) and
``rejected_calls`` (the raw texts rejected during those rounds; both reset by a round
with a castable call) for the repair layer. The oracle Sigil sends
the system role plus the transcript to the Oracle and appends its answer (carrying
``spell_calls`` when Spells were requested, and ``usage``). The spells Sigil passes
EVERY call through the repair layer (:mod:`sanctum.grimoire.repair`) before casting:
malformed JSON is recovered locally (SpellCallRepaired Omen), while unknown Spells and
invalid arguments become correction messages back to the Oracle (SpellCallRejected
Omen). Consecutive correction-only rounds are bounded by ``max_repair_rounds``; past it
the loop surrenders with SpellCallParseError. Spell execution failures stay
conversational: they are injected as error messages and the loop survives. The loop
ends when an answer carries no spell_calls. With ``role=PromptLayers(...)`` the system
prompt is assembled once and frozen in the ``system_prompt`` Conduit
(:mod:`sanctum.grimoire.prompt_layers`), so every consultation starts with the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sanctum.aether import AetherSchema, Conduit, append
from sanctum.codex.base import find_unserialisable
from sanctum.errors import SpellCallParseError, SpellExecutionError
from sanctum.grimoire import _agentry as agentry
from sanctum.grimoire.compaction import Compaction, estimate_tokens
from sanctum.grimoire.guard import GuardLimits
from sanctum.grimoire.prompt_layers import (
    SYSTEM_PROMPT,
    PromptLayers,
    attach_volatile,
    frozen_prompt,
    volatile_text,
)
from sanctum.grimoire.repair import MALFORMED_KEY, repair_spell_call
from sanctum.grimoire.tome import Tome
from sanctum.omens.events import SpellCallRejected, SpellCallRepaired, Writer
from sanctum.oracle.base import Message, Oracle, OracleResponse, SpellCall
from sanctum.oracle.constrained import SPELL_CHOICES, ConstrainedSpellCalling
from sanctum.oracle.fallback import FallbackOracle, bench_ledger, note_fallback
from sanctum.oracle.robust import PromptedSpellCalling, parse_spell_blocks
from sanctum.ritual import DEFAULT_RECURSION_LIMIT, END, Rite, Ritual

if TYPE_CHECKING:
    from sanctum.codex.base import Codex
    from sanctum.wards.base import Ward

__all__ = ["DEFAULT_RECURSION_LIMIT", "DEFAULT_ROLE", "SPELL_CALLING_MODES", "summon"]

DEFAULT_ROLE = (
    "You are a helpful assistant. When a spell (tool) would help, cast it; when you have "
    "what you need, answer the user directly and concisely."
)
"""The system prompt summon prepends when none is given."""

SPELL_CALLING_MODES = ("native", "prompted", "auto", "constrained")
"""The strategies by which Spell schemas reach the model."""

_NOTIFYING = (PromptedSpellCalling, ConstrainedSpellCalling)
"""Wrappers that leave a notice when they fall back to prompted calling."""

ORACLE_SIGIL = "oracle"
ORACLE_BENCH = "oracle_bench"
"""The Conduit holding the bench ledger of a fallback chain (see FallbackOracle)."""
SPELLS_SIGIL = "spells"
_MAX_RESULT_CHARS = 100_000


def _wrap(oracle: Oracle, spell_calling: str, spell_choice: str = "auto") -> Oracle:
    if spell_calling not in SPELL_CALLING_MODES:
        raise ValueError(
            f"spell_calling must be one of {', '.join(map(repr, SPELL_CALLING_MODES))}, "
            f"not {spell_calling!r}"
        )
    if spell_choice not in SPELL_CHOICES:
        raise ValueError(
            f"spell_choice must be one of {', '.join(map(repr, SPELL_CHOICES))}, "
            f"not {spell_choice!r}"
        )
    if spell_calling == "native" or isinstance(
        oracle, PromptedSpellCalling | ConstrainedSpellCalling
    ):
        return oracle
    if spell_calling == "constrained":
        return ConstrainedSpellCalling(oracle, "required" if spell_choice == "required" else "auto")
    return PromptedSpellCalling(oracle, mode="always" if spell_calling == "prompted" else "auto")


def _surrender_advice(voice: Oracle, spell_calling: str) -> str:
    """What to try after a surrender, never the strategy the Entity already uses."""
    if isinstance(voice, ConstrainedSpellCalling) and not voice.prompted:
        current = "constrained"
    elif isinstance(voice, PromptedSpellCalling | ConstrainedSpellCalling) and voice.prompted:
        current = "prompted"
    else:
        current = spell_calling
    other = "spell_calling: constrained" if current != "constrained" else "spell_calling: prompted"
    return f"try {other} (now {current}), a larger model, or a higher max_repair_rounds"


def _consultation(role: str, transcript: Sequence[Message]) -> list[Message]:
    """The system role plus the transcript (a leading system message is merged in)."""
    messages = list(transcript)
    if not role:
        return messages
    if messages and messages[0].get("role") == "system":
        head = dict(messages[0])
        head["content"] = f"{role}\n\n{head.get('content') or ''}".rstrip()
        return [head, *messages[1:]]
    return [{"role": "system", "content": role}, *messages]


def _as_sent(transcript: Sequence[Message], tome: Tome | None) -> list[Message]:
    """The transcript as the Oracle is shown it: calls mended locally appear mended.

    The Aether keeps what the model really wrote (a call whose arguments did not parse
    is stored flagged ``__malformed_json__``, so every Seal shows it); the Oracle is
    shown the call that was cast, so that it learns from a well-formed example rather
    than from its own slip. Calls that were rejected are shown as written (the
    correction that follows refers to them).
    """
    shown: list[Message] = []
    for message in transcript:
        calls = message.get("spell_calls") if message.get("role") == "assistant" else None
        if not calls or not any(_is_malformed(entry) for entry in calls):
            shown.append(message)
            continue
        mended_calls = []
        for entry in calls:
            if _is_malformed(entry):
                outcome = repair_spell_call(_as_call(entry), tome)
                if outcome.call is not None:
                    entry = {
                        **entry,
                        "spell": outcome.call.spell,
                        "arguments": outcome.call.arguments,
                    }
            mended_calls.append(entry)
        shown.append({**message, "spell_calls": mended_calls})
    return shown


def _is_malformed(entry: Any) -> bool:
    arguments = entry.get("arguments") if isinstance(entry, Mapping) else None
    return isinstance(arguments, Mapping) and MALFORMED_KEY in arguments


def _render(result: Any) -> str:
    """A Spell's result as message content (str as-is, anything else as JSON)."""
    if isinstance(result, str):
        text = result
    else:
        try:
            text = json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            text = repr(result)
    if len(text) > _MAX_RESULT_CHARS:
        text = text[:_MAX_RESULT_CHARS] + f"... [truncated {len(text) - _MAX_RESULT_CHARS} chars]"
    return text


def _as_call(entry: Any) -> SpellCall:
    if isinstance(entry, SpellCall):
        return entry
    if isinstance(entry, Mapping):
        arguments = entry.get("arguments")
        call_id = entry.get("call_id")
        return SpellCall(
            spell=str(entry.get("spell") or ""),
            arguments=arguments
            if isinstance(arguments, dict)
            else {"__malformed_json__": str(arguments)},
            call_id=None if call_id is None else str(call_id),
        )
    return SpellCall(spell="", arguments={"__malformed_json__": repr(entry)})


def summon(
    oracle: Oracle,
    tome: Tome | None = None,
    role: str | PromptLayers = DEFAULT_ROLE,
    *,
    spell_calling: str = "native",
    spell_choice: str = "auto",
    max_repair_rounds: int = 2,
    recursion_limit: int = DEFAULT_RECURSION_LIMIT,
    codex: Codex | None = None,
    wards: Sequence[Ward] | None = None,
    approve: Collection[str] | None = None,
    guard: GuardLimits | bool | None = None,
    max_turns: int | None = None,
    on_budget: str = "answer",
    compact: Compaction | None = None,
) -> Rite:
    """Summon an Entity: an Oracle bound to a Tome, sealed as a Rite.

    Entity — an agent. Returns a compiled Rite implementing the ReAct loop described
    in the module docstring. Invoke it with
    ``rite.ainvoke({"messages": [{"role": "user", "content": ...}]})``; the final
    Aether's ``messages`` holds the full transcript.

    Args:
        oracle: The voice consulted each turn.
        tome: The Spells available to the Entity; ``None`` summons a spell-less
            conversationalist.
        role: The system prompt, prepended (not stored in ``messages``) on every
            consultation. A str is sent as written, ``messages[0] == {"role":
            "system", "content": role}`` (the seed's shape, no new Conduit).
            :class:`~sanctum.grimoire.prompt_layers.PromptLayers` assemble it once:
            ``stable`` and the ``context`` rendered from the Aether at the first
            consultation are frozen in the ``system_prompt`` Conduit (``str``), so
            Seals carry the bytes and every later, resumed or time-travelled
            consultation sends them unchanged, for the server's prefix cache; the
            ``volatile`` layer is rendered at each consultation and appended to the
            last message of the request only, never stored. No second system message
            is ever sent.
        spell_calling: How Spell schemas reach the model — ``"native"`` (the Oracle's
            tool support; a call the server left in the answer's text is parsed too),
            ``"prompted"`` (wrap in PromptedSpellCalling: schemas in the system prompt,
            calls parsed from text), ``"auto"`` (native first, falling back to
            prompted when the endpoint rejects tools), or ``"constrained"`` (wrap in
            ConstrainedSpellCalling: the output is held to a JSON Schema admitting
            only an answer or one valid call; falls back to prompted, with a
            SpellCallRejected Omen, when the backend cannot constrain it).
        spell_choice: With ``"constrained"``: ``"auto"`` (answer or cast) or
            ``"required"`` (the turns before any spell result must cast a Spell).
        max_repair_rounds: Consecutive correction-only rounds tolerated before the loop
            surrenders with SpellCallParseError. A round with at least one executable
            call resets the counter.
        recursion_limit: Superstep bound forwarded to ``compile()`` (each turn of the
            loop takes two supersteps).
        codex: Optional Seal store forwarded to ``compile()``.
        wards: Middleware pipeline forwarded to ``compile()``. The Oracle's usage
            counters are attached to each assistant message, so a UsageWard tallies
            them out of the box.
        approve: Access levels whose Spells pause the loop for a person before they
            are cast (``["write"]``); decisions arrive on resume in the ``approvals``
            Conduit (see docs/agents.md). None: no approvals (the seed's behaviour).
        guard: The loop guard: True (default limits) or a GuardLimits; a block or a
            halt sends the loop to ``final``. None: no guard.
        max_turns: Consultations allowed before ``final`` asks for a plain answer
            without spells. None: no budget (only ``recursion_limit`` bounds the loop).
        on_budget: ``"answer"`` (the forced final answer) or ``"fail"``
            (TurnBudgetExceeded) when ``max_turns`` is spent.
        compact: Compaction of the view sent to the Oracle when the prompt nears the
            window (:class:`~sanctum.grimoire.compaction.Compaction`); its state is the
            ``compaction`` Conduit; the stored ``messages`` are never rewritten. The
            ``final`` consultation (after ``max_turns`` or a guard stop) is sent the
            compacted view too. None: the whole transcript is sent (the seed's
            behaviour).

    Whatever the options, the model is offered, and may cast, only the Spells the
    run's Mandate may see (``Tome.visible_to``); a hidden Spell gets the same
    correction as an unknown one, and a call that supplies an injected (Mandate)
    argument is refused with a correction.

    Returns:
        The compiled Rite (Sigils ``"oracle"`` and ``"spells"``).

    Raises:
        ValueError: If ``spell_calling`` or ``spell_choice`` names an unknown strategy,
            ``max_repair_rounds`` is negative, or an agent option is out of range.
        TypeError: If ``role`` is neither a str nor PromptLayers.
    """
    if not isinstance(role, str | PromptLayers):
        raise TypeError(f"role must be a str or PromptLayers, not {type(role).__name__}")
    voice = _wrap(oracle, spell_calling, spell_choice)
    chained = _has_chain(oracle) or (
        compact is not None and compact.summarizer is not None and _has_chain(compact.summarizer)
    )
    policy = agentry.loop_policy(approve, guard, max_turns, on_budget)
    if isinstance(max_repair_rounds, bool) or not isinstance(max_repair_rounds, int):
        raise ValueError(f"max_repair_rounds must be an int >= 0, not {max_repair_rounds!r}")
    if max_repair_rounds < 0:
        raise ValueError(f"max_repair_rounds must be >= 0, not {max_repair_rounds}")
    limit = max_repair_rounds

    async def consult(aether: Mapping[str, Any], writer: Writer) -> dict[str, Any]:
        transcript = list(aether.get("messages") or [])
        if policy.approve and transcript and transcript[-1].get("spell_calls"):
            return {}  # a round kept at an approval pause (in a Circle): cast it first
        seen = agentry.visible(tome)
        schemas = seen.schemas() if seen is not None and len(seen) else None
        prompt, frozen = frozen_prompt(role, aether, getattr(writer, "secrets", None))
        extra = volatile_text(role, aether)
        compacted: dict[str, Any] = dict(frozen)

        def request(view: Sequence[Message]) -> list[Message]:
            return attach_volatile(_consultation(prompt, _as_sent(view, seen)), extra)

        with _benches(chained, aether, compacted):
            if compact is None:
                response = await voice.generate(request(transcript), schemas)
            else:
                fixed = estimate_tokens([{"content": prompt}]) + len(json.dumps(schemas or [])) // 4
                response, compacted["compaction"] = await compact.consult(
                    transcript,
                    aether.get("compaction") or {},
                    lambda view: voice.generate(request(view), schemas),
                    fixed=fixed,
                    writer=writer,
                )
        notice = voice.take_notice() if isinstance(voice, _NOTIFYING) else None
        if notice:
            writer.emit(SpellCallRejected(spell="", reason=notice))
        text = response.text or ""
        calls = list(response.spell_calls)
        if not calls and schemas and text:
            prose, parsed = parse_spell_blocks(text)
            if parsed:
                text, calls = prose, parsed
        turn = 1 + sum(1 for m in transcript if m.get("role") == "assistant")
        message: Message = {"role": "assistant", "content": text}
        if calls:
            message["spell_calls"] = [
                SpellCall(
                    str(c.spell), _storable(c.arguments), c.call_id or f"call_{turn}_{i}"
                ).to_message()
                for i, c in enumerate(calls, start=1)
            ]
        if response.usage:
            message["usage"] = dict(response.usage)
            note_fallback(response.usage, message, writer)
        delta: dict[str, Any] = {"messages": [message], **compacted}
        if policy.max_turns is not None:
            delta["turns"] = 1
        if policy.final and not calls:
            delta["stop_reason"] = "answered"
        return delta

    async def cast(aether: Mapping[str, Any], writer: Writer) -> dict[str, Any]:
        transcript = aether.get("messages") or []
        last = transcript[-1] if transcript else {}
        results: list[Message] = []
        rejected: list[str] = []
        executable = 0
        seen = agentry.visible(tome)
        entries = [
            (call, agentry.screen(repair_spell_call(call, seen), seen))
            for call in map(_as_call, last.get("spell_calls") or [])
        ]
        try:
            decided = policy.gate(entries, seen, aether)
        except agentry.ApprovalPause as pause:
            agentry.announce(pause, writer)
            raise
        watch = policy.guard(aether)
        halt: str | None = None
        for call, outcome in entries:
            if outcome.call is None:
                reason = outcome.correction or ""
                rejected.append(outcome.raw or "")
                writer.emit(
                    SpellCallRejected(
                        spell=call.spell, reason=reason, call_id=call.call_id, raw=outcome.raw or ""
                    )
                )
                results.append(_spell_message(call.spell, call.call_id, reason))
                continue
            executable += 1
            mended = outcome.call
            if outcome.repaired:
                writer.emit(
                    SpellCallRepaired(
                        spell=mended.spell,
                        detail=outcome.repaired,
                        call_id=call.call_id,
                        raw=outcome.raw or "",
                        arguments=dict(mended.arguments),
                    )
                )
            assert seen is not None  # a castable call names a Spell of the Tome
            chosen = seen.get(mended.spell)
            turn = sum(1 for m in transcript if m.get("role") == "assistant")
            decision = decided.get(agentry.approval_key(turn, call.call_id))
            if decision is not None and decision.get("decision") == "reject":
                results.append(
                    _spell_message(
                        mended.spell, call.call_id, agentry.rejected_content(mended.spell, decision)
                    )
                )
                results[-1]["approval"] = agentry.signed(decision)
                continue
            if decision is not None and isinstance(decision.get("arguments"), Mapping):
                mended = SpellCall(mended.spell, dict(decision["arguments"]), mended.call_id)
            verdict = watch.before(mended.spell, mended.arguments) if watch else None
            if verdict is not None and verdict.action == "block":
                halt = agentry.guarded(verdict, mended.spell, call.call_id, writer)
                results.append(_spell_message(mended.spell, call.call_id, verdict.message))
                results[-1].update(error=True, guard=verdict.code)
                continue
            failed = False
            try:
                result = await chosen.execute(mended.arguments)
            except SpellExecutionError as error:
                failed = True
                cause = error.__cause__
                detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(error)
                content = (
                    f"Error: the spell {mended.spell} failed: {detail}. Fix the arguments "
                    "and cast it again, or answer without it."
                )
            else:
                content = _render(result)
            if watch is not None:
                verdict = watch.after(
                    mended.spell,
                    mended.arguments,
                    failed=failed,
                    result=content,
                    access=chosen.level,
                    repeatable=chosen.repeatable,
                )
                halt = agentry.guarded(verdict, mended.spell, call.call_id, writer) or halt
                if verdict.message:
                    content = f"{content}\n\n{verdict.message}"
            results.append(_spell_message(mended.spell, call.call_id, content))
            if decision is not None:  # the transcript says who let the write through
                results[-1]["approval"] = agentry.signed(decision)
        extra = policy.delta(watch, halt, decided)
        if executable or not rejected:
            return {"messages": results, "repair_rounds": 0, "rejected_calls": [], **extra}
        rounds = int(aether.get("repair_rounds") or 0) + 1
        streak = [*list(aether.get("rejected_calls") or []), *rejected]
        if rounds > limit:
            raise SpellCallParseError(
                f"the Oracle ({voice.arcana}) produced no castable spell call in {rounds} "
                f"consecutive round(s) (max_repair_rounds={limit}); see .rejected for the raw "
                f"calls — {_surrender_advice(voice, spell_calling)}",
                rejected=streak,
                rounds=rounds,
            )
        return {"messages": results, "repair_rounds": rounds, "rejected_calls": streak, **extra}

    def after_oracle(aether: Mapping[str, Any]) -> str:
        transcript = aether.get("messages") or []
        return SPELLS_SIGIL if transcript and transcript[-1].get("spell_calls") else END

    async def final(aether: Mapping[str, Any], writer: Writer) -> dict[str, Any]:
        transcript = list(aether.get("messages") or [])
        prompt, frozen = frozen_prompt(role, aether, getattr(writer, "secrets", None))
        extra = volatile_text(role, aether)
        kept: dict[str, Any] = {}

        def request(view: Sequence[Message], note: Message) -> list[Message]:
            return attach_volatile([*_consultation(prompt, _as_sent(view, tome)), note], extra)

        async def ask(note: Message) -> OracleResponse:
            if compact is None:
                return await voice.generate(request(transcript, note), None)
            response, kept["compaction"] = await compact.consult(  # the view, as consult's
                transcript,
                kept.get("compaction", aether.get("compaction") or {}),
                lambda view: voice.generate(request(view, note), None),
                fixed=estimate_tokens([{"content": prompt}, note]),
                writer=writer,
            )
            return response

        with _benches(chained, aether, kept):
            answer = await agentry.final_answer(policy, ask, aether, writer)
        return {**answer, **frozen, **kept}

    schema = AetherSchema(
        {
            "messages": Conduit(reducer=append, type=list),
            "repair_rounds": Conduit(type=int),
            "rejected_calls": Conduit(type=list),
            **policy.conduits(),
            **({"compaction": Conduit(type=dict)} if compact is not None else {}),
            **({SYSTEM_PROMPT: Conduit(type=str)} if isinstance(role, PromptLayers) else {}),
            **({ORACLE_BENCH: Conduit(type=dict)} if chained else {}),
        }
    )
    ritual = Ritual(schema)
    ritual.add_sigil(ORACLE_SIGIL, consult)
    ritual.add_sigil(SPELLS_SIGIL, cast)
    ritual.set_entry_point(ORACLE_SIGIL)
    ritual.add_conditional_edge(ORACLE_SIGIL, after_oracle, [SPELLS_SIGIL, END])
    if policy.final:
        ritual.add_sigil(agentry.FINAL_SIGIL, final)
        ritual.add_conditional_edge(
            SPELLS_SIGIL, policy.after_spells, [ORACLE_SIGIL, agentry.FINAL_SIGIL]
        )
        ritual.add_edge(agentry.FINAL_SIGIL, END)
    else:
        ritual.add_edge(SPELLS_SIGIL, ORACLE_SIGIL)
    if max_turns is not None and recursion_limit == DEFAULT_RECURSION_LIMIT:
        recursion_limit = max(recursion_limit, 2 * max_turns + 2)
    return ritual.compile(recursion_limit=recursion_limit, codex=codex, wards=wards)


def _has_chain(oracle: Oracle) -> bool:
    """Whether ``oracle`` is, or wraps, a FallbackOracle (whose bench the loop keeps)."""
    seen = 0
    current: Any = oracle
    while current is not None and seen < 8:
        if isinstance(current, FallbackOracle):
            return True
        current = getattr(current, "inner", None)
        seen += 1
    return False


@contextmanager
def _benches(chained: bool, aether: Mapping[str, Any], delta: dict[str, Any]) -> Iterator[None]:
    """Consult inside the run's bench ledger; put the updated ledger in ``delta``.

    The ledger (:func:`~sanctum.oracle.fallback.bench_ledger`) lives in the
    ``oracle_bench`` Conduit, so a run resumed in another process skips the same
    benched Oracles as the first process would have (D1: loop state in Conduits).
    """
    if not chained:
        yield
        return
    with bench_ledger(aether.get(ORACLE_BENCH)) as ledger:
        yield
    delta[ORACLE_BENCH] = ledger


def _spell_message(name: str, call_id: str | None, content: str) -> Message:
    return {"role": "spell", "name": name, "call_id": call_id, "content": content}


def _storable(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments as the transcript (and so every Seal) can hold them.

    A model may write ``NaN``, ``Infinity`` or ``1e999``, which parse as floats that
    no Seal can carry; such arguments are kept as their text, flagged
    ``__malformed_json__``, so the repair layer answers with a correction instead of
    the run failing.
    """
    if find_unserialisable(arguments) is None:
        return dict(arguments)
    return {"__malformed_json__": json.dumps(arguments, allow_nan=True, default=repr)}
