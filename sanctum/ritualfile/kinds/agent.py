"""The ``agent`` sigil: run an Entity (a ``summon`` ReAct loop) over a transcript."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from sanctum.ritualfile._common import SigilBase, Strict, Template
from sanctum.ritualfile._suggest import did_you_mean
from sanctum.ritualfile.kinds.base import SigilKind, placeholder, register

if TYPE_CHECKING:
    from pathlib import Path

    from sanctum.errors import FileProblem
    from sanctum.ritualfile._builder import Builder
    from sanctum.ritualfile.checks import Checker
    from sanctum.ritualfile.diagnostics import Problems
    from sanctum.ritualfile.file import RitualFile
    from sanctum.ritualfile.loader import YamlPath

__all__ = [
    "AgentKind",
    "AgentOptions",
    "AgentSigil",
    "CompactOptions",
    "GuardCounts",
    "GuardOptions",
    "RoleFile",
    "RoleLayers",
    "unlabeled_spells",
    "untrusted_context",
]


class GuardCounts(Strict):
    """One threshold per loop guard counter, counted in calls (unset: the default)."""

    repeat_failure: int | None = Field(
        None, ge=1, description="The same call (spell and arguments) failed n times."
    )
    tool_failure: int | None = Field(None, ge=1, description="One spell failed n times.")
    same_result: int | None = Field(
        None, ge=1, description="A read spell returned the same result n times in a row."
    )

    def given(self) -> dict[str, int]:
        """The thresholds written in the file, ``{counter: n}``."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class GuardOptions(Strict):
    """Thresholds of the loop guard, counted in calls."""

    warn: GuardCounts = Field(
        default_factory=GuardCounts, description="From the n-th occurrence the model is warned."
    )
    stop: GuardCounts = Field(
        default_factory=GuardCounts, description="At n the next call is blocked or the loop halts."
    )


class CompactOptions(Strict):
    """Compaction of the view sent to the model when the prompt nears the window."""

    summarizer: str = Field(
        "mechanical",
        description="An oracle name under `oracles:` that writes the summary (usually a "
        "smaller one), or `mechanical` (deterministic, no model call).",
    )
    at: float | None = Field(
        None,
        ge=0.1,
        le=0.95,
        description="Trigger as a share of the window (default 0.75 up to 64K, 0.5 above).",
    )
    keep_tail: float = Field(
        0.2, ge=0.05, le=0.6, description="Share of the window kept verbatim at the end."
    )
    quotes: int = Field(
        1200, ge=0, description="Characters of user messages quoted in a mechanical summary."
    )
    max_output: int | None = Field(
        None,
        ge=1,
        description="Tokens kept free for the answer (default 512, lowered for small windows).",
    )


class RoleFile(Strict):
    """Text read from a file of the project (UTF-8), such as a persona in SOUL.md."""

    file: str = Field(
        description="Path of the file, relative to the ritual file and inside the project "
        "folder, e.g. SOUL.md."
    )


class RoleLayers(Strict):
    """The system prompt in layers, assembled once per run so a server's prefix cache holds."""

    stable: str | RoleFile = Field(
        "",
        description="The persona and rules, sent unchanged on every consultation: text, or "
        "{file: SOUL.md}.",
    )
    context: Template | None = Field(
        None,
        description="A template rendered once, at the agent's first consultation, then "
        "frozen with `stable` for the rest of the run.",
    )
    volatile: Template | None = Field(
        None,
        description="A template rendered at each consultation and appended to the last "
        "message sent only; never stored.",
    )


class AgentOptions(Strict):
    """An Entity — a summon() ReAct loop of an oracle and a tome of spells."""

    oracle: str = Field(description="Name of an oracle under `oracles:`.")
    tome: str | None = Field(None, description="Name of a tome under `tomes:`.")
    role: str | RoleLayers | None = Field(
        None,
        description="System prompt of the Entity: text, or layers {stable, context, "
        "volatile} assembled once so a server's prefix cache keeps working.",
    )
    spell_calling: Literal["native", "prompted", "auto", "constrained"] = Field(
        "native", description="How spells reach the model."
    )
    max_repair_rounds: int = Field(
        2, ge=0, description="Correction-only rounds tolerated before giving up."
    )
    recursion_limit: int = Field(25, ge=1, description="Superstep bound of the loop.")
    spells: list[str] | None = Field(
        None, description="Allowlist: only these spells of the tome (default: all)."
    )
    approve: list[Literal["read", "propose", "write"]] = Field(
        default_factory=list,
        description="Access levels whose spells pause for a person before they are cast; "
        "needs an `approvals` conduit with reducer merge_dict.",
    )
    max_turns: int | None = Field(
        None, ge=1, description="Consultations before a forced plain answer (default: none)."
    )
    on_budget: Literal["answer", "fail"] = Field(
        "answer", description="When max_turns is spent: answer without spells, or fail."
    )
    guard: GuardOptions | Literal["on", "off"] = Field(
        "off", description="Loop guardrails: on (default limits), off, or {warn, stop}."
    )
    compact: CompactOptions | bool = Field(
        False,
        description="Compaction for small windows: true (mechanical summary), false, or "
        "{summarizer, at, keep_tail, quotes, max_output}; the window is the oracle's "
        "`context_window:`, else learnt from the server's overflow error.",
    )


class AgentSigil(SigilBase):
    """Run an Entity (agent) over the messages conduit."""

    agent: AgentOptions = Field(description="The Entity: oracle, tome, role, spell calling.")
    prompt: Template | None = Field(
        None, description="User message appended before the loop starts."
    )
    messages: str = Field("messages", description="Conduit (append) holding the transcript.")
    output: str | None = Field(None, description="Conduit that receives the final answer text.")


class AgentKind(SigilKind):
    """``agent:`` — an oracle and a tome of spells in a loop, as ``summon`` builds it."""

    key = "agent"
    model = AgentSigil
    label = "agent"

    def check(self, checker: Checker, name: str, sigil: Any, known: Collection[str]) -> None:
        agent = sigil.agent
        checker.ref(
            self.path(name, "agent", "oracle"),
            agent.oracle,
            checker.oracles,
            "oracle",
            "; define it under `oracles:`",
        )
        if agent.tome is not None:
            checker.ref(
                self.path(name, "agent", "tome"),
                agent.tome,
                checker.tomes,
                "tome",
                "; define it under `tomes:`",
            )
        if agent.tome in checker.tome_spells and agent.spells is not None:
            known_spells = checker.tome_spells[agent.tome]
            for index, spell in enumerate(agent.spells):
                path = self.path(name, "agent", "spells", index)
                if spell not in known_spells and not checker.quoted_hint(path, key=False):
                    checker.problems.add(
                        path,
                        f"sigil {name!r}: no spell named {spell!r} in tome {agent.tome!r}"
                        + did_you_mean(spell, known_spells),
                    )
        checker.conduit(self.path(name, "messages"), sigil.messages, name)
        if isinstance(agent.guard, GuardOptions):
            _check_guard(checker, self.path(name, "agent", "guard"), name, agent.guard)
        if agent.approve:
            declared = checker.spec.aether.get("approvals")
            if declared is None or declared.reducer != "merge_dict":
                checker.problems.add(
                    self.path(name, "agent", "approve"),
                    f"sigil {name!r} pauses for approvals, which need a conduit `approvals` "
                    "with reducer merge_dict; add `approvals: {reducer: merge_dict}` under "
                    "`aether:`",
                )
        if isinstance(agent.compact, CompactOptions) and agent.compact.summarizer != "mechanical":
            checker.ref(
                self.path(name, "agent", "compact", "summarizer"),
                agent.compact.summarizer,
                checker.oracles,
                "oracle",
                "; name an oracle under `oracles:`, or `mechanical`",
            )
        if agent.compact is not False:
            _check_room(checker, self.path(name, "agent", "compact"), name, agent)
        if sigil.output is not None:
            checker.conduit(self.path(name, "output"), sigil.output, name)
        if sigil.prompt is not None:
            checker.template(self.path(name, "prompt"), sigil.prompt, name, known)
        if isinstance(agent.role, RoleLayers):
            at = self.path(name, "agent", "role")
            if isinstance(agent.role.stable, RoleFile):
                stable = agent.role.stable.file
                _role_file(checker.problems, checker.folder, checker.root, at, name, stable)
            for layer in ("context", "volatile"):
                source = getattr(agent.role, layer)
                if source is not None:
                    checker.template((*at, layer), source, name, known)

    def compile(self, builder: Builder, name: str, sigil: Any) -> Callable[..., Any]:
        agent = sigil.agent
        oracle = builder.oracle(agent.oracle, name)
        if oracle is None or not builder.resolve:
            return placeholder
        tome = builder.tome(agent.tome) if agent.tome is not None else None
        if agent.approve:
            oracle = _resumable(oracle)
        from sanctum.grimoire.guard import GuardLimits
        from sanctum.grimoire.sigils import agent_sigil
        from sanctum.grimoire.summon import DEFAULT_ROLE

        guard: GuardLimits | bool = agent.guard == "on"
        if isinstance(agent.guard, GuardOptions):
            guard = GuardLimits(warn=agent.guard.warn.given(), stop=agent.guard.stop.given())
        if agent.spells is not None and tome is not None:
            missing = [s for s in agent.spells if s not in tome]
            if missing:
                builder.problems.add(
                    self.path(name, "agent", "spells"),
                    f"sigil {name!r}: no spell named {missing[0]!r} in tome {agent.tome!r}"
                    + did_you_mean(missing[0], list(tome.names())),
                )
                return placeholder
        compact = _compaction(builder, name, agent)
        role = _role(builder, name, agent.role, DEFAULT_ROLE)
        if compact is False or role is None:
            return placeholder

        return agent_sigil(
            oracle,
            tome,
            name=name,
            role=role,
            spell_calling=agent.spell_calling,
            max_repair_rounds=agent.max_repair_rounds,
            recursion_limit=agent.recursion_limit,
            prompt=None if sigil.prompt is None else builder.text(sigil.prompt, name, "prompt"),
            messages=sigil.messages,
            output=sigil.output,
            wards=builder.inner_wards(),
            spells=agent.spells,
            approve=agent.approve,
            guard=guard,
            max_turns=agent.max_turns,
            on_budget=agent.on_budget,
            compact=compact or None,
            limit_advice=(
                f"Give sigil {name!r} a turn budget (`max_turns:` under its `agent:`, "
                "after which it answers without spells), or raise `recursion_limit:` "
                f"under its `agent:` (now {agent.recursion_limit})"
            ),
        )


KIND = register(AgentKind())


def unlabeled_spells(ritual: RitualFile) -> list[FileProblem]:
    """Warnings: spells an agent may cast whose manifest gives no access label.

    An unlabeled spell counts as ``write`` (the conservative choice): an agent that
    approves writes pauses before it, and roles filter it. That is safe but rarely
    meant, so ``sanctum validate`` says so, once per tome, at the tome's ``path:``.
    Reads only the ``spell.json`` manifests (no spell code is imported); a tome that
    cannot be read is left to the errors of ``check()``.

    Args:
        ritual: The loaded ritual file.

    Returns:
        One FileProblem per tome, its message starting ``warning:``; empty when every
        spell an agent may cast is labeled.
    """
    wanted: dict[str, set[str] | None] = {}
    for sigil in ritual.spec.sigils.values():
        if not isinstance(sigil, AgentSigil) or sigil.agent.tome is None:
            continue
        name, narrowed = sigil.agent.tome, sigil.agent.spells
        known = wanted.get(name, set())
        wanted[name] = None if narrowed is None or known is None else known | set(narrowed)
    if not wanted:
        return []  # no agent: the grimoire is not even imported
    from sanctum.errors import FileProblem
    from sanctum.grimoire.tome import Tome

    warnings: list[FileProblem] = []
    for name, tome in ritual.spec.tomes.items():
        if name not in wanted:
            continue
        try:
            labels = Tome.manifest_labels(ritual.path.parent / tome.path)
        except (ValueError, OSError):
            continue
        allowed = wanted[name]
        bare = [
            spell
            for spell, label in labels.items()
            if label["access"] is None and (allowed is None or spell in allowed)
        ]
        if bare:
            line, column = ritual.position(("tomes", name, "path"))
            listed = ", ".join(repr(spell) for spell in sorted(bare))
            verbs = ("has", "counts", "its") if len(bare) == 1 else ("have", "count", "their")
            warnings.append(
                FileProblem(
                    str(ritual.path),
                    line,
                    column,
                    f"warning: tome {name!r}: {listed} {verbs[0]} no access label and "
                    f'{verbs[1]} as write; add "access": "read", "propose" or "write" to '
                    f"{verbs[2]} spell.json",
                )
            )
    return warnings


def untrusted_context(ritual: RitualFile) -> list[FileProblem]:
    """Warnings: an agent's ``role: {context: ...}`` that reads an input of the file.

    The ``context`` layer is frozen into the system prompt, which a model trusts more
    than the conversation; an input is text the caller supplies, so reading it there
    lets the caller write the agent's rules. ``sanctum validate`` says so at the
    template (a warning: a trusted caller may mean it). Nothing is imported or run.

    Args:
        ritual: The loaded ritual file.

    Returns:
        One FileProblem per such template, its message starting ``warning:``.
    """
    inputs = set(ritual.spec.inputs)
    found: list[FileProblem] = []
    for name, sigil in ritual.spec.sigils.items():
        role = sigil.agent.role if isinstance(sigil, AgentSigil) else None
        if not isinstance(role, RoleLayers) or role.context is None or not inputs:
            continue
        read = sorted(_names_read(role.context) & inputs)
        if read:
            from sanctum.errors import FileProblem

            line, column = ritual.position(("sigils", name, "agent", "role", "context"))
            listed = ", ".join(repr(n) for n in read)
            found.append(
                FileProblem(
                    str(ritual.path),
                    line,
                    column,
                    f"warning: sigil {name!r}: the role's context reads input {listed}, text "
                    "the caller supplies, into the system prompt; move it to `prompt:` or "
                    "`volatile:` unless every caller is trusted",
                )
            )
    return found


def _names_read(source: str) -> set[str]:
    """The names a template reads (none when it does not parse: check() reports that)."""
    from jinja2 import Environment, TemplateError, meta

    try:
        return set(meta.find_undeclared_variables(Environment().parse(source)))
    except TemplateError:
        return set()


def _check_room(checker: Checker, path: Any, name: str, agent: AgentOptions) -> None:
    """Refuse a compact ``max_output`` that leaves no room in the oracle's declared window.

    Past :func:`~sanctum.grimoire.compaction.max_output_limit` (``max_output`` + 256 at
    most half the window) every consultation would compact again. Placed at
    ``max_output:``; an unwritten ``max_output`` shrinks to fit the window instead.
    """
    from sanctum.grimoire.compaction import max_output_limit

    options = agent.compact if isinstance(agent.compact, CompactOptions) else CompactOptions()
    window = getattr(checker.spec.oracles.get(agent.oracle), "context_window", None)
    wanted = options.max_output
    if not isinstance(window, int) or wanted is None or wanted <= max_output_limit(window):
        return  # unwritten, the answer budget shrinks to fit the window
    limit = max_output_limit(window)
    fix = (
        f"set `max_output:` under `compact:` to {limit} or less"
        if limit >= 1
        else f"raise the oracle's `context_window:` to {2 * (wanted + 256)} or more"
    )
    checker.problems.add(
        (*path, "max_output"),
        f"sigil {name!r}: compact max_output {wanted}"
        + f" leaves no room for the prompt in oracle {agent.oracle!r}'s {window}-token "
        "context_window: max_output + 256 may take at most half the window, or every "
        f"consultation would compact again; {fix}",
        key=True,
    )


def _check_guard(checker: Checker, path: Any, name: str, guard: GuardOptions) -> None:
    """Refuse a loop guard that would stop a loop before it warns the model."""
    from sanctum.grimoire.guard import GuardLimits

    defaults = GuardLimits()
    warns = {**defaults.warn, **guard.warn.given()}
    for counter, stop in {**defaults.stop, **guard.stop.given()}.items():
        warn = warns[counter]
        if warn > stop:
            warned, stopped = counter in guard.warn.given(), counter in guard.stop.given()
            where = (*path, "warn", counter) if warned else (*path, "stop", counter)
            checker.problems.add(
                where,
                f"sigil {name!r}: the loop guard warns at {warn} {counter}"
                f"{'' if warned else ' (the default)'} but stops at {stop}"
                f"{'' if stopped else ' (the default)'}; the warning must come first: "
                f"set warn.{counter} to {stop} or less, or stop.{counter} to {warn} or more",
            )


def _role_file(
    problems: Problems, folder: Path, root: Path, path: YamlPath, name: str, written: str
) -> str | None:
    """The text of a role's ``stable: {file: ...}``, or None (the problem recorded at it).

    The file must lie inside the project folder ``root`` (as tome folders must).
    """
    where = (*path, "stable", "file")
    if not written.strip():
        problems.add(where, f"sigil {name!r}: role file is empty; name a file such as SOUL.md")
        return None
    found = (folder / written).resolve()
    if found.is_dir():
        problems.add(
            where,
            f"sigil {name!r}: role file {written!r} is a folder ({found}); name a text file "
            "inside it, such as SOUL.md",
        )
        return None
    if found != root and not found.is_relative_to(root):
        problems.add(
            where,
            f"sigil {name!r}: role file {written!r} resolves to {found}, outside the project "
            f"folder {root}; move it inside, or declare a wider folder with `project:`",
        )
        return None
    try:
        return found.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.add(
            where,
            f"sigil {name!r}: role file {written!r} does not exist ({found}); create it, "
            "or write `stable:` as text",
        )
    except UnicodeDecodeError:
        problems.add(where, f"sigil {name!r}: role file {written!r} is not UTF-8 text ({found})")
    except OSError as exc:
        problems.add(
            where, f"sigil {name!r}: cannot read role file {written!r}: {exc.strerror or exc}"
        )
    return None


def _role(builder: Builder, name: str, role: str | RoleLayers | None, default: str) -> Any:
    """The agent's ``role``: a str, PromptLayers, or None when its file cannot be read.

    ``context`` and ``volatile`` are templates rendered like ``prompt:`` (the same
    sandbox and names: the Aether of the run, with the file's defaults).
    """
    if role is None or isinstance(role, str):
        return default if role is None else role
    from sanctum.grimoire.prompt_layers import PromptLayers

    at = ("sigils", name, "agent", "role")
    stable = role.stable
    if isinstance(stable, RoleFile):
        read = _role_file(
            builder.problems, builder.folder, builder.source.root, at, name, stable.file
        )
        if read is None:
            return None
        stable = read
    layers = {
        layer: builder.text(source, name, f"agent.role.{layer}")
        for layer in ("context", "volatile")
        if (source := getattr(role, layer)) is not None
    }
    return PromptLayers(stable, **layers)


def _compaction(builder: Builder, name: str, agent: AgentOptions) -> Any:
    """The agent's Compaction, None when off, or False when its summariser is missing.

    The window is the agent oracle's ``context_window:`` (None: learnt from the
    server's overflow error); a named summariser is built like any oracle of the file.
    """
    if agent.compact is False:
        return None
    from sanctum.grimoire.compaction import Compaction

    options = agent.compact if isinstance(agent.compact, CompactOptions) else CompactOptions()
    entry = builder.spec.oracles.get(agent.oracle)
    window = getattr(entry, "context_window", None)
    summarizer = None
    if options.summarizer != "mechanical":
        if options.summarizer not in builder.spec.oracles:
            builder.problems.add(
                ("sigils", name, "agent", "compact", "summarizer"),
                f"sigil {name!r}: compact summarizer {options.summarizer!r} is not under "
                "`oracles:`; name an oracle of the file, or `mechanical`",
            )
            return False
        summarizer = builder.oracle(options.summarizer, name)
        if summarizer is None:
            return False
    try:
        return Compaction(
            window=window,
            at=options.at,
            keep_tail=options.keep_tail,
            summarizer=summarizer,
            quotes=options.quotes,
            max_output=options.max_output,
        )
    except ValueError as error:  # what the checks place; a window from elsewhere lands here
        builder.problems.add(("sigils", name, "agent", "compact"), f"sigil {name!r}: {error}")
        return False


def _resumable(oracle: Any) -> Any:
    """A scripted oracle behind an approving agent, answering by the turns already taken.

    An approval pauses the agent; the resume (often a new process) builds the oracle
    afresh. Reading the script at the number of assistant turns in the transcript (not
    at a per-process counter) continues it where the pause left it. Behind a
    recorder (``--record``) the recorded oracle is the one replaced, so a recorded run
    decides exactly as an unrecorded one.
    """
    from sanctum.oracle.scripted import ScriptedOracle

    inner = getattr(oracle, "inner", None)  # a RecordingOracle (``--record``) wraps it
    if type(oracle) is not ScriptedOracle and type(inner) is ScriptedOracle:
        oracle.inner = _resumable(inner)
        return oracle
    if type(oracle) is not ScriptedOracle:
        return oracle

    class ResumableScript(ScriptedOracle):
        def _next(self, messages: Any, spells: Any) -> Any:
            self._position = sum(1 for m in messages if m.get("role") == "assistant")
            return super()._next(messages, spells)

    return ResumableScript(oracle.script, arcana=oracle.arcana)
