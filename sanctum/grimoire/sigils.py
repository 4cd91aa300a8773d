"""Ready-made Sigils that consult Oracles, summon Entities and cast Spells.

Public factories a library user can call as well as the YAML compiler does (the ritual
file is sugar over these): :func:`oracle_sigil` (one model call, tokens streamed through
the writer, usage attached), :func:`agent_sigil` (a ``summon`` ReAct loop mounted as a
Circle over a messages Conduit) and :func:`spell_sigil` (cast one Spell). Standard
library only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from sanctum.errors import RecursionLimitError
from sanctum.grimoire._agentry import LOOP_KEY, ApprovalPause
from sanctum.grimoire.compaction import Compaction
from sanctum.grimoire.guard import GuardLimits
from sanctum.grimoire.prompt_layers import LayerText, PromptLayers
from sanctum.grimoire.spell import Spell
from sanctum.grimoire.summon import DEFAULT_ROLE, summon
from sanctum.grimoire.tome import Tome
from sanctum.oracle.base import Message, Oracle, OracleResponse
from sanctum.oracle.fallback import note_fallback
from sanctum.ritual.mandate import interrupt_keeping
from sanctum.wards.base import Ward
from sanctum.wards.secrets import Secrets

__all__ = ["agent_sigil", "oracle_sigil", "spell_sigil"]

Text = str | Callable[[Mapping[str, Any]], str]
"""Literal text, or a function of the Aether rendering it."""


def _text(value: Text | None, aether: Mapping[str, Any]) -> str | None:
    if value is None:
        return None
    return value(aether) if callable(value) else value


async def _consult(
    oracle: Oracle,
    messages: list[Message],
    writer: Any,
    stream: bool,
    scrub: Callable[[str], str],
    secrets: Secrets | None = None,
) -> OracleResponse:
    if not stream:
        return await oracle.generate(messages)
    # A secret the model spells over two chunks is held back until it is whole: the
    # secrets given here, or else the Rite's (the writer knows them).
    policy = secrets if secrets is not None else getattr(writer, "secrets", None)
    veil = policy.stream() if policy else None

    def write(chunk: str) -> None:
        text = veil.feed(chunk) if veil is not None else chunk
        if text:
            writer(scrub(text))

    stream_response = getattr(oracle, "stream_response", None)
    final: OracleResponse | None = None
    parts: list[str] = []
    if stream_response is not None:
        async for item in stream_response(messages):
            if isinstance(item, OracleResponse):
                final = item
            else:
                parts.append(str(item))
                write(str(item))
    else:
        async for chunk in oracle.stream_generate(messages):
            parts.append(chunk)
            write(chunk)
    rest = veil.end() if veil is not None else ""
    if rest:
        writer(scrub(rest))
    return final if final is not None else OracleResponse(text="".join(parts))


def oracle_sigil(
    oracle: Oracle,
    prompt: Text,
    output: str,
    *,
    system: Text | None = None,
    stream_tokens: bool = True,
    messages: str | None = None,
    append_output: bool = False,
    scrub: Callable[[str], str] | None = None,
    secrets: Secrets | None = None,
) -> Callable[[Mapping[str, Any], Any], Any]:
    """Build a Sigil that consults an Oracle once with a rendered prompt.

    Oracle — an LLM adapter. The prompt (and optional system prompt) is rendered from
    the Aether, sent as a one-turn transcript, and the answer's text is written to
    ``output``. With ``stream_tokens`` every chunk is pushed through the writer as a
    TokenEmitted Omen while the model speaks. With ``messages`` the assistant message,
    carrying the Oracle's ``usage`` counters, is appended to that Conduit too — which is
    what a UsageWard tallies.

    Args:
        oracle: The voice to consult.
        prompt: User prompt text, or a function of the Aether rendering it.
        output: Conduit receiving the answer's text.
        system: Optional system prompt (text or function of the Aether).
        stream_tokens: Stream chunks through the writer (``TokenEmitted``).
        messages: Optional append Conduit receiving ``[assistant message]``.
        append_output: Write ``[text]`` instead of ``text`` (for an append Conduit).
        scrub: Applied to every streamed chunk before it leaves (e.g. secret masking).
        secrets: Secrets masked in the streamed chunks as one text: a secret split
            over two chunks is held back until it is whole, then masked.

    Returns:
        An async Sigil ``fn(aether, writer) -> dict[str, Any]``.
    """
    clean: Callable[[str], str] = scrub if scrub is not None else (lambda text: text)

    async def consult_oracle(aether: Mapping[str, Any], writer: Any) -> dict[str, Any]:
        transcript: list[Message] = []
        system_text = _text(system, aether)
        if system_text:
            transcript.append({"role": "system", "content": system_text})
        transcript.append({"role": "user", "content": _text(prompt, aether) or ""})
        response = await _consult(oracle, transcript, writer, stream_tokens, clean, secrets)
        delta: dict[str, Any] = {output: [response.text] if append_output else response.text}
        message: Message = {"role": "assistant", "content": response.text}
        if response.usage:
            message["usage"] = dict(response.usage)
            if hasattr(writer, "emit"):  # a fallback answered: OracleFellBack Omens
                note_fallback(response.usage, message, writer)
        if messages is not None:
            delta[messages] = [message]
        return delta

    return consult_oracle


def agent_sigil(
    oracle: Oracle,
    tome: Tome | None = None,
    *,
    name: str = "agent",
    role: str | PromptLayers = DEFAULT_ROLE,
    spell_calling: str = "native",
    spell_choice: str = "auto",
    max_repair_rounds: int = 2,
    recursion_limit: int = 25,
    prompt: Text | None = None,
    messages: str = "messages",
    output: str | None = None,
    wards: Sequence[Ward] | None = None,
    spells: Collection[str] | None = None,
    approve: Collection[str] | None = None,
    guard: GuardLimits | bool | None = None,
    max_turns: int | None = None,
    on_budget: str = "answer",
    compact: Compaction | None = None,
    limit_advice: str | None = None,
) -> Callable[[Mapping[str, Any], Any], Any]:
    """Build a Sigil that runs an Entity (a ``summon`` ReAct loop) as a Circle.

    Entity — an agent. The loop starts from the transcript in the ``messages`` Conduit
    (plus the rendered ``prompt`` as a user message, when given); every inner Omen is
    echoed outward as ``CircleEchoed``; the delta holds only the new messages (the
    prompt, the assistant turns and spell results) for the append Conduit ``messages``
    and, with ``output``, the final answer's text.

    Args:
        oracle: The voice the Entity consults.
        tome: The Spells it may cast.
        name: The Circle's name in echoed Omens.
        role: The Entity's system prompt: a str, or PromptLayers (see ``summon``)
            whose ``context`` and ``volatile`` functions are given the OUTER Aether
            (the one ``prompt`` is rendered from); ``context`` is rendered at the
            loop's first consultation and frozen for the rest of this Sigil's run
            (across an approval pause too).
        spell_calling: ``"native"``, ``"prompted"``, ``"auto"`` or ``"constrained"``
            (see ``summon``).
        spell_choice: ``"auto"`` or ``"required"`` with ``"constrained"`` (see
            ``summon``).
        max_repair_rounds: Correction-only rounds tolerated (see ``summon``).
        recursion_limit: Superstep bound of the inner loop.
        prompt: Optional user message (text or function of the Aether).
        messages: The outer append Conduit holding the transcript.
        output: Optional Conduit receiving the final answer's text.
        wards: Wards for the inner loop (e.g. a RedactWard for secrets).
        spells: Allowlist narrowing ``tome`` to these Spells (None: the whole Tome).
        approve: Access levels that pause for a person before a cast (see ``summon``).
            The outer Rite needs an ``approvals`` Conduit (reducer ``merge_dict``): a
            pause keeps the loop's transcript so far in ``messages`` and the pending
            calls in ``approvals``, with the loop's ``turns``, ``guard`` and
            ``compaction`` state under its key ``"loop"``; resumed, the Sigil continues
            from that round, counting on, instead of starting over.
        guard: The loop guard (see ``summon``).
        max_turns: The turn budget (see ``summon``).
        on_budget: ``"answer"`` or ``"fail"`` (see ``summon``).
        compact: Compaction of the view sent to the Oracle for small windows (see
            ``summon``); the stored transcript in ``messages`` is never rewritten.
        limit_advice: How to fix the inner loop reaching ``recursion_limit``, ending
            the :class:`~sanctum.errors.RecursionLimitError`'s message instead of the
            Python API's advice (a ritual file names its own keys).

    Returns:
        An async Sigil ``fn(aether, writer) -> dict[str, Any]``.

    Raises:
        ValueError: If ``spell_calling`` or ``spell_choice`` names an unknown strategy,
            ``spells`` names a Spell not in ``tome``, or an agent option is invalid.
    """
    from sanctum.ritual import circle

    if spells is not None and tome is not None:
        tome = tome.only(spells)
    outer: ContextVar[Mapping[str, Any]] = ContextVar(f"agent_{name}_aether")
    entity = summon(
        oracle,
        tome,
        _outer_layers(role, outer),
        spell_calling=spell_calling,
        spell_choice=spell_choice,
        max_repair_rounds=max_repair_rounds,
        recursion_limit=recursion_limit,
        wards=wards,
        approve=approve,
        guard=guard,
        max_turns=max_turns,
        on_budget=on_budget,
        compact=compact,
    )
    mounted = circle(name, entity)

    async def run_entity(aether: Mapping[str, Any], writer: Any) -> dict[str, Any]:
        start = list(aether.get(messages) or [])
        asked: list[Message] = []
        text = _text(prompt, aether)
        kept = bool(approve) and bool(start) and bool(start[-1].get("spell_calls"))
        if text and not kept:  # a loop kept at an approval pause was asked already
            asked.append({"role": "user", "content": text})
        inner: dict[str, Any] = {"messages": [*start, *asked]}
        if approve:
            approvals = dict(aether.get("approvals") or {})
            counters = approvals.pop(LOOP_KEY, None)
            inner["approvals"] = approvals
            if kept and isinstance(counters, Mapping):  # the paused round goes on counting
                inner.update(counters)
        seen = outer.set(aether)
        try:
            written = await mounted(inner, writer)
        except RecursionLimitError as exc:
            if limit_advice is not None and exc.limit:
                exc.args = (exc.worded(limit_advice),)
            raise
        except ApprovalPause as pause:
            pending = {**pause.pending, LOOP_KEY: pause.loop} if pause.loop else pause.pending
            keep = {messages: pause.transcript[len(start) :], "approvals": pending}
            interrupt_keeping(pause.reason, keep)
        finally:
            outer.reset(seen)
        new_messages = list(written.get("messages", []))
        delta: dict[str, Any] = {messages: [*asked, *new_messages]}
        if approve and written.get("approvals"):
            delta["approvals"] = written["approvals"]
        if output is not None:
            answers = [m for m in new_messages if m.get("role") == "assistant"]
            delta[output] = str(answers[-1].get("content", "")) if answers else ""
        return delta

    return run_entity


def _outer_layers(
    role: str | PromptLayers, outer: ContextVar[Mapping[str, Any]]
) -> str | PromptLayers:
    """Layers whose functions read the outer Aether (set around the Circle's run)."""
    if not isinstance(role, PromptLayers):
        return role

    def lifted(layer: LayerText | None) -> LayerText | None:
        if not callable(layer):
            return layer
        return lambda inner: layer(outer.get(inner))

    return PromptLayers(role.stable, lifted(role.context), lifted(role.volatile))


def spell_sigil(
    spell: Spell,
    arguments: Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]],
    output: str | None = None,
) -> Callable[[Mapping[str, Any]], Any]:
    """Build a Sigil that casts one Spell with arguments computed from the Aether.

    Spell — a tool. The result is written to ``output`` as returned by the Spell
    (``None`` output: the Sigil writes nothing).

    Args:
        spell: The Spell to cast.
        arguments: Fixed keyword arguments, or a function of the Aether returning them.
        output: Conduit receiving the Spell's result.

    Returns:
        An async Sigil ``fn(aether) -> dict[str, Any]``.

    Raises:
        SpellExecutionError: (from the Sigil) when the Spell raises.
    """

    async def cast_spell(aether: Mapping[str, Any]) -> dict[str, Any]:
        given = arguments(aether) if callable(arguments) else arguments
        result = await spell.execute(dict(given))
        return {} if output is None else {output: result}

    return cast_spell
